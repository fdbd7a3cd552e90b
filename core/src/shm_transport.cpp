#include "vcx/shm_transport.h"

#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

#include "vcx/channel/memfd.h"
#include "vcx/session_layout.h"

namespace vcx {
namespace {

constexpr std::uint64_t kAttachMagic = 0x3130'4843'5441'5856ULL;  // "VXATCH01"
constexpr std::size_t kTokenBytes = 64;
// Messages one ring delivers per poll(), so that a flood from one tool
// does not hold up the others and the application's channel.
constexpr std::size_t kMaxPerPoll = 1024;
// Frame of a queued message: u32 length, u8 channel, 3 bytes padding.
constexpr std::size_t kQueuedHeader = 8;

// Hands a ring to its reader, with the ring's memfd attached.
struct AttachMessage {
  std::uint64_t magic;
  std::uint32_t src;
  std::uint32_t reserved;
  char token[kTokenBytes];
};
static_assert(sizeof(AttachMessage) == 80);
static_assert(std::is_trivially_copyable_v<AttachMessage>);

bool token_equal(const char* a, const char* b) {
  // Constant time, so the comparison does not leak how much of a guess is right.
  unsigned char diff = 0;
  for (std::size_t i = 0; i < kTokenBytes; ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::string doorbell_path(const std::string& dir, std::uint32_t rank) {
  return session::peer_socket(dir, rank);
}

bool make_address(const std::string& path, sockaddr_un* addr) {
  if (path.size() >= sizeof addr->sun_path) return false;
  *addr = sockaddr_un{};
  addr->sun_family = AF_UNIX;
  std::memcpy(addr->sun_path, path.c_str(), path.size() + 1);
  return true;
}

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

}  // namespace

std::string local_node_id() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') return {};
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string boot;
  if (!(in >> boot) || boot.empty()) return {};
  return std::string(host) + "/" + boot;
}

struct ShmTransport::OutRing {
  PeerRingMapping map;
  PeerRingWriter writer;
  bool attach_sent = false;
  bool blocked = false;  // listed in blocked_
  // Messages that did not fit, as queued frames; the front one has
  // front_done bytes in the ring already.
  std::vector<std::uint8_t> pending;
  std::size_t pending_off = 0;
  std::uint32_t front_done = 0;
  bool has_pending() const { return pending_off < pending.size(); }
};

struct ShmTransport::InRing {
  Rank src;
  PeerRingMapping map;
  PeerRingReader reader;
  // A message that came in chunks, gathered here (capacity is kept).
  std::vector<std::uint8_t> assembly;
  bool assembling = false;
  ToolPart assembly_channel = ToolPart::Control;
};

struct ShmTransport::Peer {
  bool same_node = false;
  bool lost = false;
  pid_t pid = 0;
  sockaddr_un doorbell{};
  std::unique_ptr<asio::posix::stream_descriptor> pidfd;  // readable once the peer exited
  std::unique_ptr<OutRing> out;
  std::unique_ptr<InRing> in;
};

ShmTransport::ShmTransport(asio::io_context& io, Rank self, std::uint32_t size, std::string token,
                           std::string doorbell_dir, std::string node_id, std::size_t ring_bytes)
    : io_(io),
      self_(self),
      size_(size),
      token_(token),
      doorbell_dir_(std::move(doorbell_dir)),
      node_id_(std::move(node_id)),
      ring_bytes_(ring_bytes),
      tcp_(io, self, size, std::move(token)),
      peers_(size),
      attach_retry_(io) {
  token_.resize(kTokenBytes, '\0');
}

ShmTransport::~ShmTransport() {
  close();
  *alive_ = false;
  for (auto& p : peers_) {
    if (p.out) unmap_peer_ring(&p.out->map);
    if (p.in) unmap_peer_ring(&p.in->map);
  }
  if (sender_fd_ >= 0) ::close(sender_fd_);
}

std::string ShmTransport::listen(const std::string& bind_host, const std::string& advertise_host) {
  const std::string tcp_endpoint = tcp_.listen(bind_host, advertise_host);
  const std::string path = doorbell_path(doorbell_dir_, self_.value);
  sockaddr_un addr{};
  if (!make_address(path, &addr))
    throw std::runtime_error("the doorbell socket path " + path + " is too long");
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(errno_text("doorbell socket"));
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const std::string why = errno_text("binding the doorbell " + path);
    ::close(fd);
    throw std::runtime_error(why);
  }
  doorbell_ = std::make_unique<asio::posix::stream_descriptor>(io_, fd);
  sender_fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (sender_fd_ < 0) throw std::runtime_error(errno_text("doorbell sender socket"));
  arm_doorbell();
  return tcp_endpoint + " " + std::to_string(::getpid()) + " " +
         (node_id_.empty() ? std::string("-") : node_id_);
}

void ShmTransport::set_peers(const std::vector<std::string>& endpoints) {
  std::vector<std::string> tcp_endpoints;
  for (std::uint32_t r = 0; r < endpoints.size() && r < size_; ++r) {
    std::istringstream fields(endpoints[r]);
    std::string tcp_endpoint, node;
    long pid = 0;
    fields >> tcp_endpoint >> pid >> node;
    tcp_endpoints.push_back(tcp_endpoint);
    Peer& p = peers_[r];
    p.same_node = r != self_.value && !node_id_.empty() && node == node_id_ && pid > 0 &&
                  make_address(doorbell_path(doorbell_dir_, r), &p.doorbell);
    p.pid = static_cast<pid_t>(pid);
    if (p.same_node) watch_peer(Rank{r});
  }
  tcp_.set_peers(std::move(tcp_endpoints));
}

bool ShmTransport::shares_node_with(Rank peer) const {
  return peer.value < size_ && peers_[peer.value].same_node;
}

void ShmTransport::set_handler(ToolPart part, Handler h) {
  handlers_[static_cast<std::size_t>(part)] = h;
  tcp_.set_handler(part, std::move(h));
}

void ShmTransport::set_error_handler(ErrorHandler h) {
  on_error_ = h;
  tcp_.set_error_handler(std::move(h));
}

void ShmTransport::report(Rank peer, const std::string& what) {
  if (!closing_ && on_error_) on_error_(peer, what);
}

// A tool process that exits, however, makes its pidfd readable: the one
// sign of a lost peer that shared memory gives (TCP has the connection's
// end). Without pidfds the peer is reached over TCP instead.
void ShmTransport::watch_peer(Rank peer) {
  Peer& p = peers_[peer.value];
  if (p.pidfd || p.pid <= 0) return;
  const int fd = static_cast<int>(::syscall(SYS_pidfd_open, p.pid, 0));
  if (fd < 0) {
    if (errno == ESRCH) {
      asio::post(io_, [this, peer, alive = std::weak_ptr<bool>(alive_)] {
        if (!alive.expired()) peer_lost(peer, "tool rank " + std::to_string(peer.value) + " is gone");
      });
      return;
    }
    if (!p.out) {
      spdlog::debug("cannot watch tool rank {} (pidfd_open: {}); reaching it over TCP",
                    peer.value, std::strerror(errno));
      p.same_node = false;
    }
    return;
  }
  p.pidfd = std::make_unique<asio::posix::stream_descriptor>(io_, fd);
  p.pidfd->async_wait(asio::posix::stream_descriptor::wait_read,
                      [this, peer, alive = std::weak_ptr<bool>(alive_)](const error_code& e) {
                        if (e || alive.expired() || closing_) return;
                        // What it wrote before it went is still delivered.
                        poll();
                        peer_lost(peer, "tool rank " + std::to_string(peer.value) + " exited");
                      });
}

void ShmTransport::peer_lost(Rank peer, const std::string& what) {
  Peer& p = peers_[peer.value];
  if (p.lost) return;
  p.lost = true;
  if (p.out) {
    p.out->pending.clear();
    p.out->pending_off = 0;
    if (p.out->blocked) {
      p.out->blocked = false;
      blocked_.erase(std::find(blocked_.begin(), blocked_.end(), p.out.get()));
    }
  }
  report(peer, what);
}

ShmTransport::OutRing* ShmTransport::out_ring(Rank dst) {
  Peer& p = peers_[dst.value];
  if (p.out) return p.out.get();
  auto o = std::make_unique<OutRing>();
  std::string error;
  if (!create_peer_ring(self_.value, dst.value, ring_bytes_, &o->map, &error)) {
    // Nothing went through shared memory to this peer yet: TCP keeps the order.
    spdlog::warn("no shared-memory ring to tool rank {} ({}); using TCP", dst.value, error);
    p.same_node = false;
    return nullptr;
  }
  o->writer = PeerRingWriter(o->map.control);
  p.out = std::move(o);
  send_attach(*p.out);
  return p.out.get();
}

bool ShmTransport::send_attach(OutRing& o) {
  const Rank dst{o.map.control->dst};
  AttachMessage m{};
  m.magic = kAttachMagic;
  m.src = self_.value;
  std::memcpy(m.token, token_.data(), kTokenBytes);
  iovec iov{&m, sizeof m};
  channel::DescriptorControl control;
  msghdr msg{};
  msg.msg_name = &peers_[dst.value].doorbell;
  msg.msg_namelen = sizeof(sockaddr_un);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  channel::pass_descriptor(&msg, &control, o.map.fd);
  if (::sendmsg(sender_fd_, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) == sizeof m) {
    o.attach_sent = true;
    // The reader has its own descriptor now (or the datagram holds one).
    ::close(o.map.fd);
    o.map.fd = -1;
    return true;
  }
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS || errno == EINTR) {
    // The reader's doorbell queue is full: it is awake and draining it.
    retry_attaches_later();
    return false;
  }
  peer_lost(dst, errno_text("cannot reach tool rank " + std::to_string(dst.value) +
                            " through its doorbell"));
  return false;
}

void ShmTransport::retry_attaches_later() {
  if (attach_retry_armed_ || closing_) return;
  attach_retry_armed_ = true;
  attach_retry_.expires_after(std::chrono::milliseconds(1));
  attach_retry_.async_wait([this, alive = std::weak_ptr<bool>(alive_)](const error_code& e) {
    if (e || alive.expired()) return;
    attach_retry_armed_ = false;
    for (std::uint32_t r = 0; r < size_; ++r) {
      Peer& p = peers_[r];
      if (p.out && !p.out->attach_sent && !p.lost) send_attach(*p.out);
    }
  });
}

void ShmTransport::send(Rank dst, ToolPart part, std::span<const std::uint8_t> payload) {
  if (dst.value >= size_ || !peers_[dst.value].same_node) {
    tcp_.send(dst, part, payload);  // loopback and other nodes
    return;
  }
  Peer& p = peers_[dst.value];
  if (p.lost) return;
  OutRing* o = out_ring(dst);
  if (!o) {
    tcp_.send(dst, part, payload);
    return;
  }
  ++own_.messages_sent;
  own_.bytes_sent += payload.size();
  const auto len = static_cast<std::uint32_t>(payload.size());
  if (o->has_pending()) {
    queue(*o, part, payload.data(), len, 0);
    return;
  }
  std::uint32_t done = 0;
  const bool complete = write_chunks(*o, part, payload.data(), len, done);
  if (o->writer.publish()) ring_doorbell(dst);
  if (complete) return;
  queue(*o, part, payload.data(), len, done);
  if (!flush(*o) && !o->blocked) {
    o->blocked = true;
    blocked_.push_back(o);
  }
}

bool ShmTransport::write_chunks(OutRing& o, ToolPart part, const std::uint8_t* data,
                                std::uint32_t len, std::uint32_t& done) {
  const std::uint32_t chunk = o.writer.max_chunk();
  do {
    const std::uint32_t n = std::min(len - done, chunk);
    const auto kind = done + n == len ? PeerRecordKind::Last : PeerRecordKind::More;
    if (!o.writer.try_write(part, kind, data + done, n)) return false;
    done += n;
  } while (done < len);
  return true;
}

void ShmTransport::queue(OutRing& o, ToolPart part, const std::uint8_t* data, std::uint32_t len,
                         std::uint32_t done) {
  if (!o.has_pending()) {
    o.pending.clear();
    o.pending_off = 0;
    o.front_done = done;
  }
  const std::size_t at = o.pending.size();
  o.pending.resize(at + kQueuedHeader + len);
  std::memcpy(o.pending.data() + at, &len, 4);
  o.pending[at + 4] = static_cast<std::uint8_t>(part);
  o.pending[at + 5] = o.pending[at + 6] = o.pending[at + 7] = 0;
  if (len > 0) std::memcpy(o.pending.data() + at + kQueuedHeader, data, len);
}

// Writes what was queued for one ring; false when the ring filled up again
// (the reader was told to ring this tool's doorbell once it has drained).
bool ShmTransport::flush(OutRing& o) {
  const Rank dst{o.map.control->dst};
  for (;;) {
    std::uint32_t len = 0;
    while (o.has_pending()) {
      std::memcpy(&len, o.pending.data() + o.pending_off, 4);
      const auto part = static_cast<ToolPart>(o.pending[o.pending_off + 4]);
      if (!write_chunks(o, part, o.pending.data() + o.pending_off + kQueuedHeader, len,
                        o.front_done))
        break;
      o.pending_off += kQueuedHeader + len;
      o.front_done = 0;
    }
    if (o.writer.publish()) ring_doorbell(dst);
    if (!o.has_pending()) {
      o.pending.clear();
      o.pending_off = 0;
      return true;
    }
    if (o.writer.announce_waiting(std::min(len - o.front_done, o.writer.max_chunk())))
      return false;
  }
}

void ShmTransport::flush_blocked() {
  for (std::size_t i = 0; i < blocked_.size();) {
    OutRing* o = blocked_[i];
    // Still announced: the reader has not drained to half yet and will ring.
    if (o->map.control->writer_waiting.load(std::memory_order_acquire) != 0 || !flush(*o)) {
      ++i;
      continue;
    }
    o->blocked = false;
    blocked_[i] = blocked_.back();
    blocked_.pop_back();
  }
}

void ShmTransport::ring_doorbell(Rank peer) {
  Peer& p = peers_[peer.value];
  if (p.lost) return;
  const char byte = 'w';
  ++own_.wakeups_sent;
  if (::sendto(sender_fd_, &byte, 1, MSG_DONTWAIT | MSG_NOSIGNAL,
               reinterpret_cast<const sockaddr*>(&p.doorbell), sizeof p.doorbell) == 1)
    return;
  // A full doorbell queue wakes its owner anyway.
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS || errno == EINTR) return;
  peer_lost(peer, errno_text("lost tool rank " + std::to_string(peer.value) +
                             " (its doorbell is gone)"));
}

void ShmTransport::arm_doorbell() {
  doorbell_->async_wait(asio::posix::stream_descriptor::wait_read,
                        [this, alive = std::weak_ptr<bool>(alive_)](const error_code& e) {
                          if (e || alive.expired() || closing_) return;
                          read_doorbell();
                          poll();
                          if (!closing_) arm_doorbell();
                        });
}

void ShmTransport::read_doorbell() {
  for (;;) {
    AttachMessage m{};
    iovec iov{&m, sizeof m};
    alignas(cmsghdr) char ctrl[CMSG_SPACE(4 * sizeof(int))];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = ctrl;
    msg.msg_controllen = sizeof ctrl;
    const ssize_t n = ::recvmsg(doorbell_->native_handle(), &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // EAGAIN: read everything
    }
    std::vector<int> fds;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (std::size_t i = 0; i < count; ++i) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
        fds.push_back(fd);
      }
    }
    if (n == 1 && fds.empty()) continue;  // a wake-up: the rings hold the news
    const bool attach = n == sizeof m && fds.size() == 1 && m.magic == kAttachMagic &&
                        m.src < size_ && m.src != self_.value &&
                        token_equal(m.token, token_.data());
    if (attach) {
      this->attach(Rank{m.src}, fds[0]);
    } else {
      ++own_.refused_connections;
      spdlog::warn("refused a message on the doorbell without this session's token");
    }
    for (int fd : fds) ::close(fd);
  }
}

void ShmTransport::attach(Rank src, int memfd) {
  Peer& p = peers_[src.value];
  if (p.in || p.lost) {
    spdlog::warn("ignored a second ring from tool rank {}", src.value);
    return;
  }
  auto in = std::make_unique<InRing>();
  in->src = src;
  std::string error;
  if (!map_peer_ring(memfd, src.value, self_.value, &in->map, &error)) {
    ++own_.refused_connections;
    spdlog::warn("refused a ring: {}", error);
    return;
  }
  in->reader = PeerRingReader(in->map.control);
  in_list_.push_back(in.get());
  p.in = std::move(in);
  watch_peer(src);
}

std::size_t ShmTransport::drain(InRing& in, std::size_t at_most) {
  std::size_t n = 0;
  PeerRingReader::Record r;
  bool malformed = false;
  while (n < at_most && !closing_ && in.reader.peek(&r, &malformed)) {
    if (r.kind == PeerRecordKind::More || in.assembling) {
      if (!in.assembling) {
        in.assembly.clear();
        in.assembling = true;
        in.assembly_channel = r.channel;
      }
      in.assembly.insert(in.assembly.end(), r.payload.begin(), r.payload.end());
      if (r.kind == PeerRecordKind::Last) {
        in.assembling = false;
        ++n;
        ++own_.messages_received;
        own_.bytes_received += in.assembly.size();
        deliver(in.src, in.assembly_channel, in.assembly);
      }
    } else {
      ++n;
      ++own_.messages_received;
      own_.bytes_received += r.payload.size();
      deliver(in.src, r.channel, r.payload);
    }
    if (in.reader.pop()) ring_doorbell(in.src);
  }
  if (malformed) {
    in_list_.erase(std::find(in_list_.begin(), in_list_.end(), &in));
    report(in.src, "tool rank " + std::to_string(in.src.value) + " wrote a malformed ring");
  }
  return n;
}

std::size_t ShmTransport::poll() {
  if (polling_ || closing_) return 0;
  polling_ = true;
  std::size_t n = 0;
  for (std::size_t i = 0; i < in_list_.size(); ++i) n += drain(*in_list_[i], kMaxPerPoll);
  if (!blocked_.empty()) flush_blocked();
  polling_ = false;
  return n;
}

bool ShmTransport::prepare_sleep() {
  for (InRing* in : in_list_) {
    if (!in->reader.prepare_sleep()) {
      end_sleep();
      return false;
    }
  }
  return true;
}

void ShmTransport::end_sleep() {
  for (InRing* in : in_list_) in->reader.end_sleep();
}

bool ShmTransport::flushed() const {
  if (!blocked_.empty() || !tcp_.flushed()) return false;
  for (const Peer& p : peers_)
    if (p.out && !p.lost && !p.out->attach_sent) return false;
  return true;
}

void ShmTransport::close() {
  if (closing_) return;
  closing_ = true;
  tcp_.close();
  error_code ec;
  attach_retry_.cancel();
  if (doorbell_) doorbell_->close(ec);
  for (Peer& p : peers_)
    if (p.pidfd) p.pidfd->close(ec);
}

const TransportStats& ShmTransport::stats() const {
  merged_ = tcp_.stats();
  merged_.messages_sent += own_.messages_sent;
  merged_.bytes_sent += own_.bytes_sent;
  merged_.messages_received += own_.messages_received;
  merged_.bytes_received += own_.bytes_received;
  merged_.refused_connections += own_.refused_connections;
  merged_.shm_messages_sent = own_.messages_sent;
  merged_.wakeups_sent = own_.wakeups_sent;
  return merged_;
}

void ShmTransport::deliver(Rank src, ToolPart part, std::span<const std::uint8_t> payload) {
  const auto idx = static_cast<std::size_t>(part);
  if (idx < handlers_.size() && handlers_[idx]) handlers_[idx](src, payload);
}

}  // namespace vcx
