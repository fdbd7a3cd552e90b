#include "app_connection.h"

#include <poll.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include <spdlog/spdlog.h>

#include "vcx/symbolizer.h"

namespace vcx::tool {

const char* app_state_name(AppState s) {
  switch (s) {
    case AppState::NeverAttached: return "never-attached";
    case AppState::Attached: return "attached";
    case AppState::Finalized: return "finalized";
    case AppState::Crashed: return "crashed";
  }
  return "unknown";
}

AppConnection::AppConnection(asio::io_context& io, const ToolOptions& opts, Rank rank,
                             std::uint32_t size)
    : io_(io), opts_(opts), rank_(rank), size_(size) {}

AppConnection::~AppConnection() {
  consumer_.reset();
  channel::destroy_channel_block(&block_);
  if (listener_) listener_->close();
}

void AppConnection::listen(std::function<Terms()> terms, std::function<void()> on_gone) {
  terms_ = std::move(terms);
  on_gone_ = std::move(on_gone);
  // The rank finds this tool by what the listener publishes in the session
  // directory: the Unix socket (shm) or the TCP endpoint (tcp).
  listener_ = AppListener::create(io_,
                                  opts_.channel == session::Channel::Tcp
                                      ? channel::ChannelKind::Tcp
                                      : channel::ChannelKind::Shm,
                                  opts_.token);
  listener_->on_admit([this](const channel::AttachHello& h) { return admit(h); });
  listener_->on_attached([this](int fd, const channel::AttachHello& h) {
    pid_ = h.pid;
    // The rank is in MPI_Init now; by the time the tool reports on it, it
    // may have ended, and its map with it.
    if (rank_on_this_node()) maps_at_attach_ = process_maps(pid_);
    attached(fd);
  });
  listener_->on_refused([](channel::AttachStatus, const std::string& why) {
    spdlog::warn("refused an application connection: {}", why);
  });
  listener_->listen(opts_.session_dir, rank_.value, opts_.bind_host);
}

AppListener::Decision AppConnection::admit(const channel::AttachHello& hello) {
  AppListener::Decision d;
  channel::AttachReply& reply = d.reply;
  auto refuse = [&](channel::AttachStatus st, const std::string& msg) {
    reply.status = st;
    std::snprintf(reply.message, sizeof reply.message, "%s", msg.c_str());
    return d;
  };
  if (state_ != AppState::NeverAttached)
    return refuse(channel::AttachStatus::AlreadyAttached, "an application rank is attached already");
  if (hello.world_size != size_)
    return refuse(channel::AttachStatus::SizeMismatch,
                  "the application has " + std::to_string(hello.world_size) +
                      " ranks but the tool job has " + std::to_string(size_) +
                      "; start both with the same -n");
  if (hello.world_rank != rank_.value)
    return refuse(channel::AttachStatus::RankMismatch,
                  "application rank " + std::to_string(hello.world_rank) +
                      " connected to tool rank " + std::to_string(rank_.value));
  const Terms terms = terms_();
  reply.status = channel::AttachStatus::Ok;
  reply.mode_flags = terms.mode_flags;
  reply.app_spin_ns = terms.app_spin_ns;
  if (listener_->kind() == channel::ChannelKind::Tcp) {
    reply.channel_bytes = opts_.ring_bytes;  // the ring both ends lay out alike
    return d;
  }
  // A block left from a rank that was admitted but never got the answer is
  // replaced.
  channel::destroy_channel_block(&block_);
  std::string error;
  if (!channel::create_channel_block(opts_.ring_bytes, terms.mode_flags, &block_, &error))
    return refuse(channel::AttachStatus::Internal, error);
  reply.channel_bytes = block_.bytes;
  d.pass_fd = block_.memfd;
  return d;
}

void AppConnection::attached(int fd) {
  stream_ = std::make_unique<asio::posix::stream_descriptor>(io_, fd);
  state_ = AppState::Attached;
  if (listener_->kind() == channel::ChannelKind::Tcp) {
    consumer_.emplace(fd, opts_.ring_bytes);
    wait_readable();
    return;
  }
  ::close(block_.memfd);  // the mapping stays; the rank has its own descriptor
  block_.memfd = -1;
  consumer_.emplace(block_.control);
  read_wakeups();
}

void AppConnection::read_wakeups() {
  stream_->async_read_some(asio::buffer(wake_buf_), [this](const error_code& e, std::size_t) {
    if (e) {
      eof_ = true;
      on_gone_();
      return;
    }
    read_wakeups();  // the bytes only wake the loop; the ring holds the events
  });
}

void AppConnection::wait_readable() {
  if (wait_armed_ || eof_) return;
  wait_armed_ = true;
  stream_->async_wait(asio::posix::stream_descriptor::wait_read,
                      [this](const error_code&) { wait_armed_ = false; });
}

void AppConnection::flush_replies_when_writable() {
  channel::TcpConsumer* tcp = consumer_ ? consumer_->tcp() : nullptr;
  if (write_armed_ || !tcp || !tcp->output_pending()) return;
  write_armed_ = true;
  stream_->async_wait(asio::posix::stream_descriptor::wait_write, [this](const error_code& e) {
    write_armed_ = false;
    if (e || !consumer_ || !consumer_->tcp()) return;
    consumer_->tcp()->flush_output();
    flush_replies_when_writable();
  });
}

void AppConnection::reply(std::uint64_t event_seq) {
  if (!consumer_) return;
  consumer_->reply(event_seq);
  flush_replies_when_writable();
}

void AppConnection::stream_ended() {
  if (eof_) return;
  eof_ = true;
  on_gone_();
}

bool AppConnection::hung_up() const {
  if (!stream_) return false;
  pollfd p{stream_->native_handle(), POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

bool AppConnection::rank_sleeping() const {
  return !block_.control || block_.control->app_sleeping.load(std::memory_order_relaxed) != 0;
}

void AppConnection::tell_failed() {
  if (consumer_) consumer_->set_tool_state(channel::ToolState::Failed);
  flush_replies_when_writable();
}

bool AppConnection::rank_on_this_node() const {
  if (pid_ <= 0 || opts_.token.empty()) return false;
  std::ifstream in("/proc/" + std::to_string(pid_) + "/environ", std::ios::binary);
  std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return env.find(std::string("VCX_SESSION_TOKEN=") + opts_.token + '\0') != std::string::npos;
}

std::uint64_t AppConnection::stall_ns() const {
  return block_.control ? block_.control->stall_ns.load() : account_.stall_ns;
}

std::uint64_t AppConnection::backpressure_ns() const {
  return block_.control ? block_.control->backpressure_ns.load() : account_.backpressure_ns;
}

}  // namespace vcx::tool
