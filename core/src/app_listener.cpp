#include "vcx/app_listener.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "vcx/atomic_file.h"
#include "vcx/channel/tcp_channel.h"

namespace vcx {

struct AppListener::Handshake {
  Handshake(asio::io_context& io, int fd) : stream(io, fd), deadline(io) {}
  asio::posix::stream_descriptor stream;
  asio::steady_timer deadline;
  channel::AttachHello hello{};
  bool finished = false;
};

std::string advertised_endpoint(const std::string& bind_host, std::uint16_t port) {
  error_code ec;
  const asio::ip::address a = asio::ip::make_address(bind_host, ec);
  std::string host = bind_host;
  if (!ec && a.is_unspecified()) {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) == 0 && name[0]) host = name;
  } else if (!ec && a.is_v6()) {
    host = "[" + bind_host + "]";
  }
  return host + ":" + std::to_string(port);
}

std::shared_ptr<AppListener> AppListener::create(asio::io_context& io, channel::ChannelKind kind,
                                                 std::string token) {
  return std::shared_ptr<AppListener>(new AppListener(io, kind, std::move(token)));
}

AppListener::AppListener(asio::io_context& io, channel::ChannelKind kind, std::string token)
    : io_(io), kind_(kind), token_(std::move(token)) {}

AppListener::~AppListener() { close(); }

std::string AppListener::listen(const std::string& session_dir, std::uint32_t rank,
                                const std::string& bind_host) {
  if (kind_ == channel::ChannelKind::Shm) {
    const std::string path = channel::tool_socket_path(session_dir, rank);
    ::unlink(path.c_str());
    local_acceptor_ = std::make_unique<asio::local::stream_protocol::acceptor>(io_);
    local_acceptor_->open();
    local_acceptor_->bind(asio::local::stream_protocol::endpoint(path));
    ::chmod(path.c_str(), 0600);
    local_acceptor_->listen();
    published_ = path;
    accept_local();
    return path;
  }

  error_code ec;
  const asio::ip::address addr = asio::ip::make_address(bind_host, ec);
  if (ec)
    throw std::runtime_error("--bind needs an IP address for the application channel, not '" +
                             bind_host + "'");
  const asio::ip::tcp::endpoint ep(addr, 0);
  tcp_acceptor_ = std::make_unique<asio::ip::tcp::acceptor>(io_);
  tcp_acceptor_->open(ep.protocol());
  tcp_acceptor_->set_option(asio::ip::tcp::acceptor::reuse_address(true));
  tcp_acceptor_->bind(ep);
  tcp_acceptor_->listen(asio::socket_base::max_listen_connections);
  const std::string endpoint =
      advertised_endpoint(bind_host, tcp_acceptor_->local_endpoint().port());

  // Written under another name and renamed, so the application never reads
  // half of it.
  const std::string path = channel::tool_endpoint_path(session_dir, rank);
  std::string error;
  if (!write_file_atomically(path, endpoint + "\n", &error)) throw std::runtime_error(error);
  published_ = path;
  accept_tcp();
  return endpoint;
}

void AppListener::close() {
  if (closed_) return;
  closed_ = true;
  error_code ec;
  if (tcp_acceptor_) tcp_acceptor_->close(ec);
  if (local_acceptor_) local_acceptor_->close(ec);
  for (auto& w : pending_)
    if (auto hs = w.lock()) {
      hs->finished = true;
      hs->deadline.cancel();
      hs->stream.close(ec);
    }
  pending_.clear();
  if (!published_.empty()) ::unlink(published_.c_str());
}

void AppListener::accept_tcp() {
  auto self = shared_from_this();
  tcp_acceptor_->async_accept([self](const error_code& e, asio::ip::tcp::socket sock) {
    if (self->closed_) return;
    if (!e) {
      channel::tune_channel_socket(sock.native_handle());
      self->start_handshake(sock.release());
    }
    if (e != asio::error::operation_aborted) self->accept_tcp();
  });
}

void AppListener::accept_local() {
  auto self = shared_from_this();
  local_acceptor_->async_accept(
      [self](const error_code& e, asio::local::stream_protocol::socket sock) {
        if (self->closed_) return;
        if (!e) self->start_handshake(sock.release());
        if (e != asio::error::operation_aborted) self->accept_local();
      });
}

void AppListener::start_handshake(int fd) {
  auto hs = std::make_shared<Handshake>(io_, fd);
  // Forget handshakes that are over.
  std::erase_if(pending_, [](const std::weak_ptr<Handshake>& w) { return w.expired(); });
  pending_.push_back(hs);
  auto self = shared_from_this();
  hs->deadline.expires_after(hello_timeout_);
  hs->deadline.async_wait([self, hs](const error_code& e) {
    if (e || hs->finished || self->closed_) return;
    self->refuse(hs, channel::AttachStatus::Internal,
                 "no hello within " + std::to_string(self->hello_timeout_.count()) + " ms");
  });
  asio::async_read(hs->stream, asio::buffer(&hs->hello, sizeof hs->hello),
                   [self, hs](const error_code& e, std::size_t) {
                     if (hs->finished || self->closed_) return;
                     if (e) {  // the peer went away before saying hello
                       hs->finished = true;
                       hs->deadline.cancel();
                       error_code ignored;
                       hs->stream.close(ignored);
                       return;
                     }
                     self->finish_handshake(hs);
                   });
}

void AppListener::refuse(const std::shared_ptr<Handshake>& hs, channel::AttachStatus st,
                         const std::string& why) {
  hs->finished = true;
  hs->deadline.cancel();
  channel::AttachReply reply{};
  reply.magic = channel::kAttachMagic;
  reply.status = st;
  std::snprintf(reply.message, sizeof reply.message, "%s", why.c_str());
  // A fresh connection has room for the answer; a peer that cannot take it
  // does not get another chance.
  channel::send_attach_reply(hs->stream.native_handle(), reply, -1);
  error_code ignored;
  hs->stream.close(ignored);
  ++refused_count_;
  if (refused_) refused_(st, why);
}

void AppListener::finish_handshake(const std::shared_ptr<Handshake>& hs) {
  const channel::AttachHello& hello = hs->hello;
  if (hello.magic != channel::kAttachMagic || hello.version != channel::kAttachVersion)
    return refuse(hs, channel::AttachStatus::BadVersion,
                  "the interceptor belongs to another vcx version");
  if (!channel::token_matches(hello.token, token_))
    return refuse(hs, channel::AttachStatus::BadToken, "the session token does not match");
  Decision d;
  if (admit_) {
    d = admit_(hello);
  } else {
    d.reply.status = channel::AttachStatus::Internal;
    std::snprintf(d.reply.message, sizeof d.reply.message, "the tool is not ready");
  }
  if (d.reply.status != channel::AttachStatus::Ok)
    return refuse(hs, d.reply.status, d.reply.message);
  hs->finished = true;
  hs->deadline.cancel();
  d.reply.magic = channel::kAttachMagic;
  if (!channel::send_attach_reply(hs->stream.native_handle(), d.reply, d.pass_fd)) {
    error_code ignored;
    hs->stream.close(ignored);
    ++refused_count_;
    if (refused_) refused_(channel::AttachStatus::Internal, "could not answer the application");
    return;
  }
  const int fd = hs->stream.release();
  if (attached_) attached_(fd, hello);
  else ::close(fd);
}

}  // namespace vcx
