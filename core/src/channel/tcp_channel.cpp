#include "vcx/channel/tcp_channel.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include "vcx/channel/futex.h"

namespace vcx::channel {
namespace {

void set_non_blocking(int fd) noexcept {
  const int fl = ::fcntl(fd, F_GETFL);
  if (fl >= 0 && !(fl & O_NONBLOCK)) ::fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

// Waits up to timeout_ns for `events` on fd; true if any (or an error) is reported.
bool wait_fd(int fd, short events, std::uint64_t timeout_ns) noexcept {
  pollfd p{fd, events, 0};
  timespec ts{static_cast<time_t>(timeout_ns / 1'000'000'000ULL),
              static_cast<long>(timeout_ns % 1'000'000'000ULL)};
  return ::ppoll(&p, 1, &ts, nullptr) > 0;
}

}  // namespace

PrivateRing::PrivateRing(std::size_t ring_capacity) {
  const std::size_t bytes = channel_bytes(ring_capacity);
  void* mem = std::aligned_alloc(kCacheLine, (bytes + kCacheLine - 1) / kCacheLine * kCacheLine);
  if (!mem) throw std::bad_alloc();
  std::memset(mem, 0, bytes);
  auto* c = static_cast<ChannelControl*>(mem);
  init_channel(c, ring_capacity, 0);
  control_.reset(c);
}

void PrivateRing::Free::operator()(ChannelControl* c) const noexcept {
  c->~ChannelControl();
  std::free(c);
}

void tune_channel_socket(int fd) noexcept {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  // A vanished peer is noticed after about 10 + 3 * 5 seconds of silence.
  const int idle = 10, interval = 5, count = 3;
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
}

// ---------------------------------------------------------------------------
// Application side

TcpProducer::TcpProducer(int fd, std::size_t ring_capacity, ProducerHooks hooks,
                         WaitPolicy policy)
    : fd_(fd),
      local_(ring_capacity),
      // The local ring is emptied by every commit, so it never waits for
      // space and never has a consumer to wake.
      ring_(local_.control(), ProducerHooks{}, policy),
      hooks_(hooks),
      policy_(policy) {
  set_non_blocking(fd_);
}

bool TcpProducer::tool_gone() const noexcept {
  return gone_.load(std::memory_order_acquire) || failed_.load(std::memory_order_acquire);
}

std::uint64_t TcpProducer::stall_ns() const noexcept {
  return local_.control()->stall_ns.load(std::memory_order_relaxed);
}

std::uint64_t TcpProducer::backpressure_ns() const noexcept {
  return local_.control()->backpressure_ns.load(std::memory_order_relaxed);
}

void* TcpProducer::begin(Model model, std::uint16_t type, std::uint32_t flags,
                         std::size_t payload_size, std::uint64_t call_site) {
  if (tool_gone()) return nullptr;
  return ring_.begin(model, type, flags, payload_size, call_site);
}

std::uint64_t TcpProducer::commit() noexcept {
  const std::uint64_t seq = ring_.commit();
  send_pending();
  return seq;
}

void TcpProducer::send_pending() noexcept {
  ChannelControl* c = local_.control();
  const std::uint64_t head = c->head.load(std::memory_order_relaxed);
  const std::uint64_t cap = c->ring_capacity;
  std::uint8_t* data = ring_data(c);
  while (sent_ < head && !tool_gone()) {
    // At most two pieces: wrap padding up to the ring's end, then the record.
    const std::uint64_t off = sent_ & (cap - 1);
    const std::uint64_t first = std::min(head - sent_, cap - off);
    iovec iov[2] = {{data + off, first}, {data, head - sent_ - first}};
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = iov[1].iov_len ? 2 : 1;
    const ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent_ += static_cast<std::uint64_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_for_room()) break;
      continue;
    }
    gone_.store(true, std::memory_order_release);
  }
  // Sent bytes are the tool's now; the local ring is free again.
  c->tail.store(tool_gone() ? head : sent_, std::memory_order_release);
}

bool TcpProducer::wait_for_room() noexcept {
  const std::uint64_t start = now_ns();
  waiting_for_room_.store(true);
  // The tool reads again once it has caught up. A tool that went away makes
  // the connection report an error or end of file; one that gave up says
  // so in a message, which is read meanwhile.
  bool ok = true;
  for (;;) {
    pollfd p{fd_, POLLOUT | POLLIN, 0};
    timespec ts{static_cast<time_t>(policy_.liveness_check_ns / 1'000'000'000ULL),
                static_cast<long>(policy_.liveness_check_ns % 1'000'000'000ULL)};
    if (::ppoll(&p, 1, &ts, nullptr) <= 0) continue;
    if (p.revents & POLLIN) receive(0);
    if (tool_gone()) {
      ok = false;
      break;
    }
    if (p.revents & (POLLOUT | POLLERR | POLLHUP)) break;
  }
  waiting_for_room_.store(false);
  local_.control()->backpressure_ns.fetch_add(now_ns() - start, std::memory_order_relaxed);
  return ok;
}

void TcpProducer::receive(std::uint64_t timeout_ns) noexcept {
  std::unique_lock<std::mutex> lock(reader_, std::try_to_lock);
  if (!lock.owns_lock()) {
    // Another thread reads for us; look again after a short nap.
    if (timeout_ns != 0) {
      timespec ts{0, static_cast<long>(std::min<std::uint64_t>(timeout_ns, 50'000))};
      nanosleep(&ts, nullptr);
    }
    return;
  }
  bool got = false;
  for (;;) {
    const ssize_t n =
        ::recv(fd_, inbox_ + inbox_bytes_, sizeof inbox_ - inbox_bytes_, MSG_DONTWAIT);
    if (n > 0) {
      got = true;
      inbox_bytes_ += static_cast<std::size_t>(n);
      std::size_t at = 0;
      for (; inbox_bytes_ - at >= sizeof(ToolMessage); at += sizeof(ToolMessage)) {
        ToolMessage m;
        std::memcpy(&m, inbox_ + at, sizeof m);
        if (m.kind == ToolMessageKind::Reply) {
          if (m.value > replied_.load(std::memory_order_relaxed))
            replied_.store(m.value, std::memory_order_release);
        } else if (m.kind == ToolMessageKind::State &&
                   m.value != static_cast<std::uint64_t>(ToolState::Running)) {
          failed_.store(true, std::memory_order_release);
        }
      }
      std::memmove(inbox_, inbox_ + at, inbox_bytes_ - at);
      inbox_bytes_ -= at;
      continue;
    }
    if (n == 0) {
      gone_.store(true, std::memory_order_release);
      return;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      gone_.store(true, std::memory_order_release);
      return;
    }
    if (got || timeout_ns == 0) return;
    if (!wait_fd(fd_, POLLIN, timeout_ns)) return;
    timeout_ns = 0;
  }
}

WaitResult TcpProducer::wait_reply(std::uint64_t seq) noexcept {
  auto answered = [&] { return replied_.load(std::memory_order_acquire) >= seq; };
  if (answered()) return WaitResult::Ok;
  const std::uint64_t start = now_ns();
  const std::uint64_t spin_until = start + policy_.spin_ns;
  WaitResult result = WaitResult::Ok;
  for (;;) {
    receive(0);
    if (answered()) break;
    if (tool_gone()) {
      result = WaitResult::ToolGone;
      break;
    }
    if (now_ns() >= spin_until) break;
    cpu_relax();
  }
  if (!answered() && result == WaitResult::Ok) {
    std::uint64_t nap = policy_.progress_min_ns;
    for (;;) {
      if (hooks_.progress) hooks_.progress(hooks_.ctx);
      receive(hooks_.progress ? nap : policy_.liveness_check_ns);
      if (answered()) break;
      if (tool_gone()) {
        result = WaitResult::ToolGone;
        break;
      }
      if (hooks_.progress) nap = std::min(nap * 2, policy_.progress_max_ns);
    }
  }
  local_.control()->stall_ns.fetch_add(now_ns() - start, std::memory_order_relaxed);
  return result;
}

// ---------------------------------------------------------------------------
// Tool side

TcpConsumer::TcpConsumer(int fd, std::size_t ring_capacity)
    : fd_(fd), local_(ring_capacity), ring_(local_.control()) {
  set_non_blocking(fd_);
}

const EventHeader* TcpConsumer::peek() noexcept {
  if (const EventHeader* h = ring_.peek()) return h;
  if (!receive()) return nullptr;
  return ring_.peek();
}

bool TcpConsumer::receive() noexcept {
  if (closed_) return false;
  ChannelControl* c = local_.control();
  const std::uint64_t cap = c->ring_capacity;
  std::uint8_t* data = ring_data(c);
  const std::uint64_t tail = c->tail.load(std::memory_order_relaxed);
  for (;;) {
    const std::uint64_t room = cap - (received_ - tail);
    if (room == 0) break;
    const std::uint64_t off = received_ & (cap - 1);
    const std::uint64_t chunk = std::min(room, cap - off);
    const ssize_t n = ::recv(fd_, data + off, chunk, MSG_DONTWAIT);
    if (n > 0) {
      received_ += static_cast<std::uint64_t>(n);
      if (static_cast<std::uint64_t>(n) < chunk) break;  // drained for now
      continue;
    }
    if (n == 0) {
      closed_ = true;
      break;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) closed_ = true;
    break;
  }
  // Publish the complete records; the application's ring put them at the
  // same offsets, padding included, so none straddles the end.
  const std::uint64_t before = published_;
  while (received_ - published_ >= sizeof(std::uint32_t)) {
    const std::uint64_t off = published_ & (cap - 1);
    std::uint32_t size;
    std::memcpy(&size, data + off, sizeof size);
    if (size < kEventAlign || size % kEventAlign != 0 || off + size > cap) {
      malformed_ = true;
      closed_ = true;
      break;
    }
    if (received_ - published_ < size) break;
    published_ += size;
  }
  if (published_ == before) return false;
  c->head.store(published_, std::memory_order_release);
  return true;
}

void TcpConsumer::queue(ToolMessageKind kind, std::uint64_t value) noexcept {
  // Replies only ever move forward: an unsent one is overwritten rather than
  // followed by another, so a tool whose application does not read keeps
  // one message, not a growing queue.
  if (kind == ToolMessageKind::Reply && out_.size() - out_sent_ >= sizeof(ToolMessage)) {
    ToolMessage last;
    std::memcpy(&last, out_.data() + out_.size() - sizeof last, sizeof last);
    if (last.kind == ToolMessageKind::Reply) {
      last.value = value;
      std::memcpy(out_.data() + out_.size() - sizeof last, &last, sizeof last);
      return;
    }
  }
  const ToolMessage m{kind, 0, value};
  const auto* p = reinterpret_cast<const std::uint8_t*>(&m);
  out_.insert(out_.end(), p, p + sizeof m);
}

void TcpConsumer::reply(std::uint64_t seq) noexcept {
  if (seq <= replied_) return;
  replied_ = seq;
  queue(ToolMessageKind::Reply, seq);
  flush_output();
}

void TcpConsumer::set_tool_state(ToolState s) noexcept {
  queue(ToolMessageKind::State, static_cast<std::uint64_t>(s));
  flush_output();
}

void TcpConsumer::flush_output() noexcept {
  while (out_sent_ < out_.size()) {
    const ssize_t n =
        ::send(fd_, out_.data() + out_sent_, out_.size() - out_sent_, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      out_sent_ += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    // The application is gone; nobody will read this.
    out_sent_ = out_.size();
  }
  out_.clear();
  out_sent_ = 0;
}

}  // namespace vcx::channel
