#include "vcx/tcp_transport.h"

#include <spdlog/spdlog.h>

#include <cstring>

namespace vcx {
namespace {

using tcp = asio::ip::tcp;

constexpr std::uint64_t kHelloMagic = 0x3130'4f4c'4c45'4856ULL;  // "VHELLO01"
constexpr std::size_t kTokenBytes = 64;
constexpr std::size_t kFrameHeader = 8;

struct Hello {
  std::uint64_t magic;
  std::uint32_t src;
  std::uint32_t reserved;
  char token[kTokenBytes];
};
static_assert(sizeof(Hello) == 80);

bool token_equal(const char* a, const char* b) {
  // Constant time, so the comparison does not leak how much of a guess is right.
  unsigned char diff = 0;
  for (std::size_t i = 0; i < kTokenBytes; ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

void put_frame_header(std::vector<std::uint8_t>& buf, std::uint32_t len, ToolPart part) {
  const std::size_t at = buf.size();
  buf.resize(at + kFrameHeader);
  std::memcpy(buf.data() + at, &len, 4);
  buf[at + 4] = static_cast<std::uint8_t>(part);
  buf[at + 5] = buf[at + 6] = buf[at + 7] = 0;
}

}  // namespace

struct TcpTransport::Outgoing {
  explicit Outgoing(asio::io_context& io) : socket(io) {}
  enum class State { Idle, Connecting, Connected, Failed } state = State::Idle;
  tcp::socket socket;
  std::vector<std::uint8_t> pending;
  std::vector<std::uint8_t> inflight;
  bool writing = false;
};

struct TcpTransport::Incoming {
  explicit Incoming(asio::io_context& io) : socket(io) {}
  tcp::socket socket;
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(64 * 1024);
  std::size_t used = 0;
  bool greeted = false;
  Rank src{};
};

TcpTransport::TcpTransport(asio::io_context& io, Rank self, std::uint32_t size, std::string token)
    : io_(io), self_(self), size_(size), token_(std::move(token)) {
  token_.resize(kTokenBytes, '\0');
  out_.resize(size);
}

TcpTransport::~TcpTransport() { close(); }

std::string TcpTransport::listen(const std::string& bind_host, const std::string& advertise_host) {
  tcp::endpoint ep(asio::ip::make_address(bind_host), 0);
  acceptor_ = std::make_unique<tcp::acceptor>(io_);
  acceptor_->open(ep.protocol());
  acceptor_->set_option(tcp::acceptor::reuse_address(true));
  acceptor_->bind(ep);
  acceptor_->listen(asio::socket_base::max_listen_connections);
  start_accept();
  return advertise_host + ":" + std::to_string(acceptor_->local_endpoint().port());
}

void TcpTransport::set_peers(std::vector<std::string> endpoints) { endpoints_ = std::move(endpoints); }

void TcpTransport::set_handler(ToolPart part, Handler h) {
  handlers_[static_cast<std::size_t>(part)] = std::move(h);
}

void TcpTransport::report(Rank peer, const std::string& what) {
  if (!closing_ && on_error_) on_error_(peer, what);
}

void TcpTransport::close() {
  if (closing_) return;
  closing_ = true;
  error_code ec;
  if (acceptor_) acceptor_->close(ec);
  for (auto& o : out_)
    if (o) o->socket.close(ec);
  for (auto& i : in_)
    if (i) i->socket.close(ec);
}

bool TcpTransport::flushed() const {
  for (const auto& o : out_)
    if (o && o->state != Outgoing::State::Failed && (o->writing || !o->pending.empty()))
      return false;
  return loopback_.empty();
}

void TcpTransport::send(Rank dst, ToolPart part, std::span<const std::uint8_t> payload) {
  ++stats_.messages_sent;
  stats_.bytes_sent += payload.size();
  if (dst == self_) {
    loopback_.emplace_back(part, std::vector<std::uint8_t>(payload.begin(), payload.end()));
    if (!loopback_posted_) {
      loopback_posted_ = true;
      asio::post(io_, [this] {
        loopback_posted_ = false;
        while (!loopback_.empty()) {
          auto [c, bytes] = std::move(loopback_.front());
          loopback_.pop_front();
          deliver(self_, c, bytes);
        }
      });
    }
    return;
  }
  if (dst.value >= size_) return;
  auto& o = out_[dst.value];
  if (!o) o = std::make_unique<Outgoing>(io_);
  if (o->state == Outgoing::State::Failed) return;
  put_frame_header(o->pending, static_cast<std::uint32_t>(payload.size()), part);
  o->pending.insert(o->pending.end(), payload.begin(), payload.end());
  if (o->state == Outgoing::State::Idle) {
    start_connect(dst);
  } else if (o->state == Outgoing::State::Connected && !o->writing) {
    start_write(dst);
  }
}

void TcpTransport::start_connect(Rank dst) {
  auto& o = *out_[dst.value];
  if (dst.value >= endpoints_.size()) {
    o.state = Outgoing::State::Failed;
    report(dst, "no endpoint known for tool rank " + std::to_string(dst.value));
    return;
  }
  const std::string& ep = endpoints_[dst.value];
  const auto colon = ep.rfind(':');
  error_code ec;
  const auto addr = asio::ip::make_address(ep.substr(0, colon), ec);
  if (ec || colon == std::string::npos) {
    o.state = Outgoing::State::Failed;
    report(dst, "bad endpoint '" + ep + "'");
    return;
  }
  const tcp::endpoint target(addr, static_cast<unsigned short>(std::stoi(ep.substr(colon + 1))));
  o.state = Outgoing::State::Connecting;
  // The hello goes first, ahead of whatever was queued meanwhile.
  Hello hello{};
  hello.magic = kHelloMagic;
  hello.src = self_.value;
  std::memcpy(hello.token, token_.data(), kTokenBytes);
  o.inflight.assign(reinterpret_cast<const std::uint8_t*>(&hello),
                    reinterpret_cast<const std::uint8_t*>(&hello) + sizeof hello);
  o.socket.async_connect(target, [this, dst](const error_code& err) {
    auto& out = *out_[dst.value];
    if (err) {
      out.state = Outgoing::State::Failed;
      report(dst, "cannot connect to tool rank " + std::to_string(dst.value) + " at " +
                      endpoints_[dst.value] + ": " + err.message());
      return;
    }
    error_code ignored;
    out.socket.set_option(tcp::no_delay(true), ignored);
    out.state = Outgoing::State::Connected;
    out.writing = true;
    asio::async_write(out.socket, asio::buffer(out.inflight),
                      [this, dst](const error_code& e, std::size_t) {
                        auto& o2 = *out_[dst.value];
                        o2.writing = false;
                        o2.inflight.clear();
                        if (e) {
                          o2.state = Outgoing::State::Failed;
                          report(dst, "lost tool rank " + std::to_string(dst.value) + ": " +
                                          e.message());
                          return;
                        }
                        if (!o2.pending.empty()) start_write(dst);
                      });
  });
}

void TcpTransport::start_write(Rank dst) {
  auto& o = *out_[dst.value];
  o.inflight.swap(o.pending);
  o.pending.clear();
  o.writing = true;
  asio::async_write(o.socket, asio::buffer(o.inflight),
                    [this, dst](const error_code& e, std::size_t) {
                      auto& out = *out_[dst.value];
                      out.writing = false;
                      out.inflight.clear();
                      if (e) {
                        out.state = Outgoing::State::Failed;
                        report(dst, "lost tool rank " + std::to_string(dst.value) + ": " +
                                        e.message());
                        return;
                      }
                      if (!out.pending.empty()) start_write(dst);
                    });
}

void TcpTransport::start_accept() {
  auto in = std::make_shared<Incoming>(io_);
  acceptor_->async_accept(in->socket, [this, in](const error_code& e) {
    if (e) {
      if (!closing_) start_accept();
      return;
    }
    error_code ignored;
    in->socket.set_option(tcp::no_delay(true), ignored);
    in_.push_back(in);
    start_read(in);
    start_accept();
  });
}

void TcpTransport::start_read(const std::shared_ptr<Incoming>& in) {
  if (in->buf.size() - in->used < 4096) in->buf.resize(in->buf.size() * 2);
  in->socket.async_read_some(
      asio::buffer(in->buf.data() + in->used, in->buf.size() - in->used),
      [this, in](const error_code& e, std::size_t n) {
        if (e) {
          // A peer closes its connections only after the tools agreed to stop.
          if (in->greeted && e != asio::error::operation_aborted)
            report(in->src, "connection from tool rank " + std::to_string(in->src.value) +
                                " closed: " + e.message());
          error_code ignored;
          in->socket.close(ignored);
          return;
        }
        in->used += n;
        parse(in);
        if (in->socket.is_open()) start_read(in);
      });
}

void TcpTransport::parse(const std::shared_ptr<Incoming>& in) {
  std::size_t off = 0;
  if (!in->greeted) {
    if (in->used < sizeof(Hello)) return;
    Hello h;
    std::memcpy(&h, in->buf.data(), sizeof h);
    if (h.magic != kHelloMagic || h.src >= size_ || !token_equal(h.token, token_.data())) {
      ++stats_.refused_connections;
      spdlog::warn("refused a peer connection without this session's token");
      error_code ignored;
      in->socket.close(ignored);
      return;
    }
    in->greeted = true;
    in->src = Rank{h.src};
    off = sizeof(Hello);
  }
  while (in->used - off >= kFrameHeader) {
    std::uint32_t len;
    std::memcpy(&len, in->buf.data() + off, 4);
    const auto part = static_cast<ToolPart>(in->buf[off + 4]);
    if (in->used - off - kFrameHeader < len) {
      if (kFrameHeader + len > in->buf.size()) in->buf.resize(kFrameHeader + len + 4096);
      break;
    }
    ++stats_.messages_received;
    stats_.bytes_received += len;
    deliver(in->src, part, std::span<const std::uint8_t>(in->buf.data() + off + kFrameHeader, len));
    off += kFrameHeader + len;
  }
  if (off > 0) {
    std::memmove(in->buf.data(), in->buf.data() + off, in->used - off);
    in->used -= off;
  }
}

void TcpTransport::deliver(Rank src, ToolPart part, std::span<const std::uint8_t> payload) {
  const auto idx = static_cast<std::size_t>(part);
  if (idx < handlers_.size() && handlers_[idx]) handlers_[idx](src, payload);
}

}  // namespace vcx
