#include "tool_process.h"

#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <spdlog/spdlog.h>

namespace vcx::tool {
namespace {

using local_socket = asio::local::stream_protocol::socket;

enum class ControlMsg : std::uint8_t {
  Done = 1,       // to rank 0: my application finished and my queue is empty
  Terminate = 2,  // from rank 0: everyone is done, stop
  Abort = 3,      // to everyone: stop now; the reason follows
};

std::uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ULL +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace

const char* app_state_name(AppState s) {
  switch (s) {
    case AppState::NeverAttached: return "never-attached";
    case AppState::Attached: return "attached";
    case AppState::Finalized: return "finalized";
    case AppState::Crashed: return "crashed";
  }
  return "unknown";
}

ToolProcess::ToolProcess(ToolOptions opts, Rank rank, std::uint32_t size)
    : opts_(std::move(opts)), rank_(rank), size_(size) {}

ToolProcess::~ToolProcess() {
  plugins_.clear();
  for (auto& p : loaded_) unload_plugin(p);
  consumer_.reset();
  channel::destroy_channel_block(&block_);
  if (!socket_path_.empty()) ::unlink(socket_path_.c_str());
}

std::string ToolProcess::prepare() {
  transport_ = std::make_unique<TcpTransport>(io_, rank_, size_, opts_.token);
  transport_->set_handler(PeerChannel::Control, [this](Rank src, std::span<const std::uint8_t> b) {
    on_control_message(src, b);
  });
  transport_->set_error_handler([this](Rank peer, const std::string& what) {
    if (!terminate_) abort_all(what);
  });
  const std::string endpoint = transport_->listen(opts_.bind_host, opts_.bind_host);

  socket_path_ = opts_.session_dir + "/tool-" + std::to_string(rank_.value) + ".sock";
  ::unlink(socket_path_.c_str());
  app_acceptor_ = std::make_unique<asio::local::stream_protocol::acceptor>(io_);
  app_acceptor_->open();
  app_acceptor_->bind(asio::local::stream_protocol::endpoint(socket_path_));
  ::chmod(socket_path_.c_str(), 0600);
  app_acceptor_->listen();
  accept_app();
  return endpoint;
}

void ToolProcess::set_peer_endpoints(std::vector<std::string> endpoints) {
  transport_->set_peers(std::move(endpoints));
}

void ToolProcess::load_plugins() {
  auto instantiate = [&](PluginKind kind, const std::string& name) -> Plugin* {
    loaded_.push_back(load_plugin(opts_.plugin_dir, kind, name));
    const PluginDescriptor* d = loaded_.back().descriptor;
    std::string error;
    Plugin* p = d->create(*this, &error);
    if (!p) throw std::runtime_error(name + ": " + (error.empty() ? "failed to start" : error));
    plugins_.emplace_back(p);
    return p;
  };
  Plugin* e = instantiate(PluginKind::Engine, opts_.engine);
  engine_ = e->engine();
  if (!engine_) throw std::runtime_error(opts_.engine + " is not an exchange engine");
  for (const auto& name : opts_.translators) {
    Translator* t = instantiate(PluginKind::Translator, name)->translator();
    if (!t) throw std::runtime_error(name + " is not a translator");
    const auto m = static_cast<std::size_t>(t->model());
    if (m >= translators_.size() || translators_[m])
      throw std::runtime_error("translator " + name + " claims a model that is taken");
    translators_[m] = t;
  }
  for (const auto& name : opts_.modules) {
    ClockedCallObserver* o = instantiate(PluginKind::Module, name)->observer();
    if (o) {
      observers_.push_back(o);
      engine_->add_observer(o);
    }
  }
}

const char* ToolProcess::call_name(std::uint8_t model, std::uint16_t call) const {
  if (model < translators_.size() && translators_[model]) return translators_[model]->call_name(call);
  return "?";
}

void ToolProcess::reply(std::uint64_t event_seq) {
  if (!consumer_ || event_seq <= replied_) return;
  replied_ = event_seq;
  consumer_->reply(event_seq);
}

// ---------------------------------------------------------------------------
// The application connection

void ToolProcess::accept_app() {
  auto sock = std::make_shared<local_socket>(io_);
  app_acceptor_->async_accept(*sock, [this, sock](const error_code& e) {
    if (e) return;
    on_app_connected(sock);
    accept_app();
  });
}

void ToolProcess::on_app_connected(std::shared_ptr<local_socket> sock) {
  const int fd = sock->native_handle();
  error_code ec;
  sock->native_non_blocking(false, ec);
  channel::AttachReply reply{};
  reply.magic = channel::kAttachMagic;
  channel::AttachHello hello{};
  auto refuse = [&](channel::AttachStatus st, const std::string& msg) {
    reply.status = st;
    std::snprintf(reply.message, sizeof reply.message, "%s", msg.c_str());
    channel::send_attach_reply(fd, reply, -1);
    spdlog::warn("refused an application connection: {}", msg);
    sock->close(ec);
  };
  // The application sends its hello right after connecting; do not let a
  // silent connection hold the tool.
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (!channel::read_full(fd, &hello, sizeof hello)) return refuse(channel::AttachStatus::Internal, "no hello");
  hello.token[sizeof hello.token - 1] = '\0';
  std::string token = opts_.token;
  token.resize(channel::kTokenBytes, '\0');
  if (hello.magic != channel::kAttachMagic || hello.version != channel::kAttachVersion)
    return refuse(channel::AttachStatus::BadVersion, "the interceptor belongs to another vcx version");
  unsigned char diff = 0;
  for (std::size_t i = 0; i < channel::kTokenBytes - 1; ++i)
    diff |= static_cast<unsigned char>(hello.token[i] ^ token[i]);
  if (diff != 0) return refuse(channel::AttachStatus::BadToken, "the session token does not match");
  if (app_state_ != AppState::NeverAttached)
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
  std::string error;
  const std::uint32_t mode = opts_.no_stall ? std::uint32_t{channel::kModeNoStall} : 0u;
  if (!channel::create_channel_block(opts_.ring_bytes, mode, &block_, &error))
    return refuse(channel::AttachStatus::Internal, error);
  reply.status = channel::AttachStatus::Ok;
  reply.mode_flags = mode;
  reply.channel_bytes = block_.bytes;
  if (!channel::send_attach_reply(fd, reply, block_.memfd)) {
    spdlog::error("could not answer application rank {}", rank_.value);
    channel::destroy_channel_block(&block_);
    sock->close(ec);
    return;
  }
  ::close(block_.memfd);  // the mapping stays; the application has its own descriptor
  block_.memfd = -1;
  consumer_.emplace(block_.control);
  app_socket_ = std::move(sock);
  app_socket_->native_non_blocking(true, ec);
  app_state_ = AppState::Attached;
  arm_app_read();
}

void ToolProcess::arm_app_read() {
  app_socket_->async_read_some(asio::buffer(wake_buf_), [this](const error_code& e, std::size_t) {
    if (e) {
      app_eof_ = true;
      app_gone();
      return;
    }
    arm_app_read();  // the bytes only wake us; the ring holds the events
  });
}

bool ToolProcess::wants_reply(std::uint32_t flags) const {
  return (flags & kEventAlwaysReply) || ((flags & kEventNeedsReply) && !opts_.no_stall);
}

void ToolProcess::handle_control_event(const EventHeader& ev) {
  if (static_cast<ControlEvent>(ev.type) == ControlEvent::Detach) {
    detach_seen_ = true;
    app_state_ = AppState::Finalized;
  }
  const bool wants = wants_reply(ev.flags);
  if (wants) max_reply_wanted_ = ev.seq;
  program_.reset(Model::Control, ev.type, ev.seq);
  engine_->enqueue(program_, wants);
}

bool ToolProcess::service_channel() {
  if (!consumer_) return false;
  int n = 0;
  for (; n < 4096; ++n) {
    const EventHeader* ev = consumer_->peek();
    if (!ev) break;
    ++events_;
    if (ev->model == Model::Control) {
      handle_control_event(*ev);
    } else {
      const auto m = static_cast<std::size_t>(ev->model);
      Translator* t = m < translators_.size() ? translators_[m] : nullptr;
      if (!t)
        fatal("events of model " + std::to_string(m) +
              " arrived but no translator for it is loaded (see vcx-run --help, --translators)");
      program_.reset(ev->model, ev->type, ev->seq);
      t->translate(*ev, engine_->control(), program_);
      const bool wants = wants_reply(ev->flags);
      if (wants) max_reply_wanted_ = ev->seq;
      engine_->enqueue(program_, wants);
    }
    consumer_->pop();
  }
  return n > 0;
}

void ToolProcess::app_gone() {
  if (app_state_ == AppState::Crashed) return;
  // Whatever the application pushed before it went is still in the ring.
  while (service_channel()) {
  }
  if (detach_seen_) return;
  app_state_ = AppState::Crashed;
  spdlog::error("application rank {} ended without finishing (crashed, killed or exited early)",
                rank_.value);
  engine_->run();
  abort_all("application rank " + std::to_string(rank_.value) + " ended without finishing");
}

// ---------------------------------------------------------------------------
// Agreement between the tools

void ToolProcess::on_control_message(Rank src, std::span<const std::uint8_t> b) {
  if (b.empty()) return;
  switch (static_cast<ControlMsg>(b[0])) {
    case ControlMsg::Done:
      if (++done_count_ == size_) broadcast_control(static_cast<std::uint8_t>(ControlMsg::Terminate));
      break;
    case ControlMsg::Terminate:
      terminate_ = true;
      break;
    case ControlMsg::Abort:
      if (!aborted_) {
        aborted_ = true;
        abort_reason_.assign(b.begin() + 1, b.end());
        spdlog::debug("stopping: {}", abort_reason_);
        flush_observers();
        if (consumer_) consumer_->set_tool_state(channel::ToolState::Failed);
        terminate_ = true;
      }
      break;
  }
}

void ToolProcess::broadcast_control(std::uint8_t what) {
  for (std::uint32_t r = 0; r < size_; ++r) transport_->send(Rank{r}, PeerChannel::Control, {&what, 1});
}

void ToolProcess::maybe_report_done() {
  if (done_sent_ || aborted_) return;
  if (app_state_ != AppState::Finalized || !engine_->idle()) return;
  done_sent_ = true;
  const auto what = static_cast<std::uint8_t>(ControlMsg::Done);
  transport_->send(Rank{0}, PeerChannel::Control, {&what, 1});
}

void ToolProcess::abort_all(const std::string& why) {
  if (aborted_) return;
  aborted_ = true;
  abort_reason_ = why;
  if (engine_ && !engine_->idle())
    spdlog::warn("stopping with calls left to analyse; the first waits for {}",
                 engine_->blocked_on());
  std::vector<std::uint8_t> msg{static_cast<std::uint8_t>(ControlMsg::Abort)};
  msg.insert(msg.end(), why.begin(), why.end());
  for (std::uint32_t r = 0; r < size_; ++r)
    if (r != rank_.value) transport_->send(Rank{r}, PeerChannel::Control, msg);
  flush_observers();
  if (consumer_) consumer_->set_tool_state(channel::ToolState::Failed);
  terminate_ = true;
}

void ToolProcess::flush_observers() {
  for (ClockedCallObserver* o : observers_) o->flush();
}

void ToolProcess::fatal(const std::string& why) {
  spdlog::critical("{}", why);
  abort_all(why);
  // Give the abort notices a moment to leave.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (!transport_->flushed() && std::chrono::steady_clock::now() < deadline)
    io_.run_one_for(std::chrono::milliseconds(50));
  write_stats();
  std::fflush(nullptr);
  std::_Exit(70);
}

// ---------------------------------------------------------------------------
// The loop

int ToolProcess::run() {
  auto guard = asio::make_work_guard(io_);
  asio::signal_set signals(io_, SIGTERM, SIGINT, SIGHUP);
  signals.async_wait([this](const error_code& e, int sig) {
    if (!e) abort_all("tool rank " + std::to_string(rank_.value) + " received signal " +
                      std::to_string(sig));
  });

  // The launcher creates "app-exited" in the session directory when the
  // application job is over; a tool whose rank never attached learns from it
  // that nobody will come.
  int ino = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  std::unique_ptr<asio::posix::stream_descriptor> ino_desc;
  std::array<char, 4096> ino_buf{};
  const std::string exited_flag = opts_.session_dir + "/app-exited";
  std::function<void()> arm_inotify;
  if (ino >= 0 && ::inotify_add_watch(ino, opts_.session_dir.c_str(), IN_CREATE | IN_MOVED_TO) >= 0) {
    ino_desc = std::make_unique<asio::posix::stream_descriptor>(io_, ino);
    arm_inotify = [&] {
      ino_desc->async_read_some(asio::buffer(ino_buf), [&](const error_code& e, std::size_t) {
        if (e) return;
        if (std::filesystem::exists(exited_flag) && app_state_ == AppState::NeverAttached) {
          app_state_ = AppState::Finalized;  // nothing to analyse, nothing to wait for
        }
        arm_inotify();
      });
    };
    arm_inotify();
  } else if (ino >= 0) {
    ::close(ino);
  }
  if (std::filesystem::exists(exited_flag) && app_state_ == AppState::NeverAttached)
    app_state_ = AppState::Finalized;

  while (!terminate_) {
    io_.poll();
    const bool progressed = service_channel();
    engine_->run();
    if (max_reply_wanted_ > replied_ && engine_->must_not_stall()) {
      ++released_replies_;
      reply(max_reply_wanted_);
    }
    maybe_report_done();
    if (terminate_) break;
    if (progressed) continue;

    // Nothing to do: poll a little, then sleep until a socket has news.
    const std::uint64_t spin_until = now_ns() + opts_.spin_ns;
    bool woke = false;
    while (now_ns() < spin_until) {
      if (io_.poll() > 0 || (consumer_ && !consumer_->empty())) {
        woke = true;
        break;
      }
    }
    if (woke) continue;
    if (consumer_ && !consumer_->prepare_sleep()) continue;
    io_.run_one();
    if (consumer_) consumer_->end_sleep();
  }

  flush_observers();
  // Let queued messages (e.g. Terminate to others) leave before closing.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (!transport_->flushed() && std::chrono::steady_clock::now() < deadline)
    io_.run_one_for(std::chrono::milliseconds(20));
  transport_->close();
  signals.cancel();
  if (ino_desc) ino_desc->close();
  return 0;
}

void ToolProcess::write_stats() const {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::uint64_t stall = 0, backpressure = 0;
  if (block_.control) {
    stall = block_.control->stall_ns.load();
    backpressure = block_.control->backpressure_ns.load();
  }
  const std::string path = opts_.session_dir + "/stats-" + std::to_string(rank_.value) + ".json";
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) return;
  std::string reason;
  for (char c : abort_reason_) {
    if (c == '"' || c == '\\') reason += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) reason += c;
  }
  std::fprintf(f,
               "{\"rank\":%u,\"events\":%llu,\"clocked_calls\":%llu,\"stall_ns\":%llu,"
               "\"backpressure_ns\":%llu,\"released_replies\":%llu,\"messages_sent\":%llu,"
               "\"bytes_sent\":%llu,\"max_rss_kb\":%ld,\"app\":\"%s\",\"aborted\":%s,"
               "\"reason\":\"%s\"}\n",
               rank_.value, static_cast<unsigned long long>(events_),
               static_cast<unsigned long long>(engine_ ? engine_->clocked_calls() : 0),
               static_cast<unsigned long long>(stall),
               static_cast<unsigned long long>(backpressure),
               static_cast<unsigned long long>(released_replies_),
               static_cast<unsigned long long>(transport_ ? transport_->stats().messages_sent : 0),
               static_cast<unsigned long long>(transport_ ? transport_->stats().bytes_sent : 0),
               ru.ru_maxrss, app_state_name(app_state_), aborted_ ? "true" : "false",
               reason.c_str());
  std::fclose(f);
  std::rename(tmp.c_str(), path.c_str());
}

}  // namespace vcx::tool
