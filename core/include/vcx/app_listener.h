// Where a tool process waits for its application rank: the Unix socket of
// the shm channel or the TCP endpoint of the tcp channel, published in the
// session directory (channel/attach.h names both). Each connection's hello
// is read asynchronously under a deadline and its session token checked
// before anything else, so a silent, wrong or hostile peer is refused
// without holding up the event loop or touching an attached application.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "vcx/asio.h"
#include "vcx/channel/attach.h"

namespace vcx {

class AppListener : public std::enable_shared_from_this<AppListener> {
 public:
  // What to answer a hello that carried the right token.
  struct Decision {
    channel::AttachReply reply{};  // status Ok, or a refusal with its message
    int pass_fd = -1;              // shm: the channel's memfd, sent with the reply
  };
  using Admit = std::function<Decision(const channel::AttachHello&)>;
  // An admitted application's connection; the callee owns `fd` from now on.
  using Attached = std::function<void(int fd, const channel::AttachHello&)>;
  // A refused connection, for the log.
  using Refused = std::function<void(channel::AttachStatus, const std::string& why)>;

  static std::shared_ptr<AppListener> create(asio::io_context& io, channel::ChannelKind kind,
                                             std::string token);
  ~AppListener();

  void on_admit(Admit f) { admit_ = std::move(f); }
  void on_attached(Attached f) { attached_ = std::move(f); }
  void on_refused(Refused f) { refused_ = std::move(f); }
  void set_hello_timeout(std::chrono::milliseconds t) { hello_timeout_ = t; }

  // Listens and publishes for `rank` in `session_dir` (tcp: on bind_host,
  // any port). Returns what it published: the socket path or the endpoint.
  // Throws std::runtime_error saying what failed.
  std::string listen(const std::string& session_dir, std::uint32_t rank,
                     const std::string& bind_host);
  // Stops accepting, drops pending handshakes, removes what was published.
  void close();

  channel::ChannelKind kind() const { return kind_; }
  std::uint64_t refused_count() const { return refused_count_; }

 private:
  struct Handshake;
  AppListener(asio::io_context& io, channel::ChannelKind kind, std::string token);
  void accept_tcp();
  void accept_local();
  void start_handshake(int fd);
  void finish_handshake(const std::shared_ptr<Handshake>& hs);
  void refuse(const std::shared_ptr<Handshake>& hs, channel::AttachStatus st,
              const std::string& why);

  asio::io_context& io_;
  channel::ChannelKind kind_;
  std::string token_;
  std::unique_ptr<asio::ip::tcp::acceptor> tcp_acceptor_;
  std::unique_ptr<asio::local::stream_protocol::acceptor> local_acceptor_;
  std::string published_;  // file to remove on close
  std::chrono::milliseconds hello_timeout_{5000};
  std::vector<std::weak_ptr<Handshake>> pending_;
  Admit admit_;
  Attached attached_;
  Refused refused_;
  std::uint64_t refused_count_ = 0;
  bool closed_ = false;
};

// "host:port" for a listener bound to `bind_host`: the address itself, or
// this machine's name when it is a wildcard address (0.0.0.0, ::).
std::string advertised_endpoint(const std::string& bind_host, std::uint16_t port);

}  // namespace vcx
