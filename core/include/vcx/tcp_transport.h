// Tool-to-tool messages over TCP (Boost.Asio), one connection per ordered
// pair, opened lazily on the first message. Frames: u32 length, u8 channel,
// 3 bytes padding, payload. Every connection starts with a hello that
// carries the session token; connections without it are closed unread.
#pragma once

#include <array>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "vcx/asio.h"
#include "vcx/transport.h"

namespace vcx {

class TcpTransport final : public ToolTransport {
 public:
  TcpTransport(asio::io_context& io, Rank self, std::uint32_t size, std::string token);
  ~TcpTransport() override;

  // Listens on bind_host:0 and returns "advertise_host:port" for the others.
  std::string listen(const std::string& bind_host, const std::string& advertise_host);
  // Endpoints of every tool, indexed by rank (from listen() on each).
  void set_peers(std::vector<std::string> endpoints);
  void set_error_handler(ErrorHandler h) override { on_error_ = std::move(h); }
  // Stops reporting peer losses (orderly shutdown) and closes everything.
  void close() override;
  // True when every queued message has been handed to the kernel.
  bool flushed() const override;

  void send(Rank dst, ToolPart part, std::span<const std::uint8_t> payload) override;
  void set_handler(ToolPart part, Handler h) override;
  Rank self() const override { return self_; }
  std::uint32_t size() const override { return size_; }
  const TransportStats& stats() const override { return stats_; }

 private:
  struct Outgoing;
  struct Incoming;

  void start_connect(Rank dst);
  void start_write(Rank dst);
  void start_accept();
  void start_read(const std::shared_ptr<Incoming>& in);
  void parse(const std::shared_ptr<Incoming>& in);
  void deliver(Rank src, ToolPart part, std::span<const std::uint8_t> payload);
  void report(Rank peer, const std::string& what);

  asio::io_context& io_;
  Rank self_;
  std::uint32_t size_;
  std::string token_;
  std::vector<std::string> endpoints_;
  std::unique_ptr<asio::ip::tcp::acceptor> acceptor_;
  std::vector<std::unique_ptr<Outgoing>> out_;
  std::vector<std::shared_ptr<Incoming>> in_;
  std::array<Handler, kToolParts> handlers_;
  std::deque<std::pair<ToolPart, std::vector<std::uint8_t>>> loopback_;
  bool loopback_posted_ = false;
  bool closing_ = false;
  ErrorHandler on_error_;
  TransportStats stats_;
};

}  // namespace vcx
