#include "vcx/channel/attach.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "vcx/channel/memfd.h"
#include "vcx/channel/tcp_channel.h"
#include "vcx/session_layout.h"

namespace vcx::channel {
namespace {

long monotonic_ms() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1000 + now.tv_nsec / 1'000'000;
}

// Waits that poll often must not end before their whole bound (a clock in
// whole milliseconds would end them up to 1 ms early).
long long monotonic_ns() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1'000'000'000LL + now.tv_nsec;
}

// How long to sleep between two looks: often at first (vcx-run starts the
// tools and the application at once, so the tool is usually a few
// milliseconds away), never past the bound.
timespec poll_pause(long long waited_ns, long long bound_ns) {
  const long long pause = std::min(waited_ns < 500'000'000 ? 1'000'000LL : 20'000'000LL,
                                   std::max(bound_ns - waited_ns, 0LL));
  return timespec{0, static_cast<long>(pause)};
}

// The first line of a small file; "" if it cannot be read.
std::string first_line(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char buf[512];
  std::size_t got = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buf + got, sizeof buf - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
    if (got == sizeof buf) break;
  }
  ::close(fd);
  std::string text(buf, got);
  return text.substr(0, text.find('\n'));
}

std::string errno_text(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

bool recv_reply(int fd, AttachReply* reply, int* passed_fd) {
  *passed_fd = -1;
  std::uint8_t* p = reinterpret_cast<std::uint8_t*>(reply);
  std::size_t got = 0;
  while (got < sizeof *reply) {
    iovec iov{p + got, sizeof *reply - got};
    alignas(cmsghdr) char ctrl[CMSG_SPACE(sizeof(int))];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = ctrl;
    msg.msg_controllen = sizeof ctrl;
    ssize_t n = ::recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
        std::memcpy(passed_fd, CMSG_DATA(c), sizeof(int));
    }
    got += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

const char* attach_status_name(AttachStatus s) {
  switch (s) {
    case AttachStatus::Ok: return "ok";
    case AttachStatus::BadVersion: return "protocol version mismatch";
    case AttachStatus::BadToken: return "wrong session token";
    case AttachStatus::SizeMismatch: return "rank count mismatch";
    case AttachStatus::RankMismatch: return "rank mismatch";
    case AttachStatus::AlreadyAttached: return "tool already has an application";
    case AttachStatus::Internal: return "tool error";
  }
  return "unknown";
}

bool write_full(int fd, const void* buf, std::size_t len) {
  const auto* p = static_cast<const std::uint8_t*>(buf);
  while (len > 0) {
    ssize_t n = ::send(fd, p, len, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    len -= static_cast<std::size_t>(n);
  }
  return true;
}

bool read_full(int fd, void* buf, std::size_t len) {
  auto* p = static_cast<std::uint8_t*>(buf);
  while (len > 0) {
    ssize_t n = ::recv(fd, p, len, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    len -= static_cast<std::size_t>(n);
  }
  return true;
}

std::string tool_socket_path(const std::string& session_dir, std::uint32_t rank) {
  return session::tool_socket(session_dir, rank);
}

std::string tool_endpoint_path(const std::string& session_dir, std::uint32_t rank) {
  return session::tool_endpoint(session_dir, rank);
}

bool token_matches(const char (&token)[kTokenBytes], const std::string& expected) {
  std::string want = expected;
  want.resize(kTokenBytes, '\0');
  unsigned char diff = 0;
  for (std::size_t i = 0; i < kTokenBytes - 1; ++i)
    diff |= static_cast<unsigned char>(token[i] ^ want[i]);
  return diff == 0 && expected.size() < kTokenBytes;
}

bool attach_in_session(const std::string& session_dir, const AttachHello& hello, int timeout_ms,
                       Attachment* out, std::string* error) {
  const std::string sock = tool_socket_path(session_dir, hello.world_rank);
  const std::string endpoint_file = tool_endpoint_path(session_dir, hello.world_rank);
  const long long start = monotonic_ns();
  const long long bound = timeout_ms * 1'000'000LL;
  for (;;) {
    const long long waited = monotonic_ns() - start;
    const long left = static_cast<long>((bound - waited) / 1'000'000);
    // The endpoint file is written under another name and renamed: when it
    // exists, it is complete.
    const std::string endpoint = first_line(endpoint_file);
    if (!endpoint.empty())
      return attach_to_tool_tcp(endpoint, hello, static_cast<int>(std::max(left, 1L)), out, error);
    if (::access(sock.c_str(), F_OK) == 0)
      return attach_to_tool(sock, hello, static_cast<int>(std::max(left, 1L)), out, error);
    if (waited >= bound) {
      *error = "neither " + sock + " nor " + endpoint_file + " appeared within " +
               std::to_string(timeout_ms) + " ms";
      return false;
    }
    const timespec pause = poll_pause(waited, bound);
    nanosleep(&pause, nullptr);
  }
}

bool attach_to_tool(const std::string& socket_path, const AttachHello& hello, int timeout_ms,
                    Attachment* out, std::string* error) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path) {
    *error = "socket path too long: " + socket_path;
    return false;
  }
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);

  const long long start = monotonic_ns();
  const long long bound = timeout_ms * 1'000'000LL;
  int fd = -1;
  for (;;) {
    fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      *error = errno_text("socket");
      return false;
    }
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) break;
    const int err = errno;
    ::close(fd);
    fd = -1;
    const long long waited = monotonic_ns() - start;
    if ((err != ENOENT && err != ECONNREFUSED) || waited >= bound) {
      *error = "cannot connect to " + socket_path + ": " + std::strerror(err) + " (after " +
               std::to_string(waited / 1'000'000) + " ms)";
      return false;
    }
    const timespec pause = poll_pause(waited, bound);
    nanosleep(&pause, nullptr);
  }

  if (!write_full(fd, &hello, sizeof hello)) {
    *error = errno_text("sending hello");
    ::close(fd);
    return false;
  }
  pollfd pfd{fd, POLLIN, 0};
  if (::poll(&pfd, 1, timeout_ms) <= 0) {
    *error = "no answer from the tool at " + socket_path;
    ::close(fd);
    return false;
  }
  AttachReply reply{};
  int memfd = -1;
  if (!recv_reply(fd, &reply, &memfd) || reply.magic != kAttachMagic) {
    *error = "malformed answer from the tool at " + socket_path;
    if (memfd >= 0) ::close(memfd);
    ::close(fd);
    return false;
  }
  if (reply.status != AttachStatus::Ok || memfd < 0) {
    reply.message[sizeof reply.message - 1] = '\0';
    *error = std::string("tool refused the application: ") + attach_status_name(reply.status) +
             (reply.message[0] ? std::string(": ") + reply.message : std::string());
    if (memfd >= 0) ::close(memfd);
    ::close(fd);
    return false;
  }
  void* mem = ::mmap(nullptr, reply.channel_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
  ::close(memfd);
  if (mem == MAP_FAILED) {
    *error = errno_text("mapping the channel");
    ::close(fd);
    return false;
  }
  auto* control = static_cast<ChannelControl*>(mem);
  if (!channel_valid(control, reply.channel_bytes)) {
    *error = "the tool's channel has an unexpected layout (mixed vcx versions?)";
    ::munmap(mem, reply.channel_bytes);
    ::close(fd);
    return false;
  }
  out->kind = ChannelKind::Shm;
  out->socket_fd = fd;
  out->mode_flags = reply.mode_flags;
  out->app_spin_ns = reply.app_spin_ns;
  out->control = control;
  out->mapped_bytes = reply.channel_bytes;
  out->ring_capacity = control->ring_capacity;
  return true;
}

namespace {

// Connects a TCP socket to `ai` within timeout_ms; the socket is returned
// blocking. -1 with errno set on failure.
int connect_within(const addrinfo* ai, int timeout_ms) {
  const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                          ai->ai_protocol);
  if (fd < 0) return -1;
  int err = 0;
  if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
    if (errno != EINPROGRESS) {
      err = errno;
    } else {
      pollfd p{fd, POLLOUT, 0};
      const int r = ::poll(&p, 1, std::max(timeout_ms, 1));
      socklen_t len = sizeof err;
      if (r <= 0) err = r == 0 ? ETIMEDOUT : errno;
      else if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    }
  }
  if (err != 0) {
    ::close(fd);
    errno = err;
    return -1;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

}  // namespace

bool attach_to_tool_tcp(const std::string& endpoint, const AttachHello& hello, int timeout_ms,
                        Attachment* out, std::string* error) {
  const auto colon = endpoint.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == endpoint.size()) {
    *error = "malformed tool endpoint '" + endpoint + "' (expected host:port)";
    return false;
  }
  std::string host = endpoint.substr(0, colon);
  const std::string port = endpoint.substr(colon + 1);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &list); rc != 0) {
    *error = "cannot resolve the tool endpoint " + endpoint + ": " + ::gai_strerror(rc);
    return false;
  }

  const long start = monotonic_ms();
  int fd = -1;
  int last_err = 0;
  for (;;) {
    for (const addrinfo* ai = list; ai && fd < 0; ai = ai->ai_next) {
      const long left = timeout_ms - (monotonic_ms() - start);
      fd = connect_within(ai, static_cast<int>(std::max(left, 1L)));
      if (fd < 0) last_err = errno;
    }
    const long elapsed = monotonic_ms() - start;
    if (fd >= 0 || last_err != ECONNREFUSED || elapsed >= timeout_ms) break;
    timespec pause{0, 20'000'000};
    nanosleep(&pause, nullptr);
  }
  ::freeaddrinfo(list);
  if (fd < 0) {
    *error = "cannot connect to the tool at " + endpoint + ": " + std::strerror(last_err) +
             " (after " + std::to_string(monotonic_ms() - start) + " ms)";
    return false;
  }
  tune_channel_socket(fd);

  auto fail = [&](const std::string& why) {
    *error = why;
    ::close(fd);
    return false;
  };
  if (!write_full(fd, &hello, sizeof hello)) return fail(errno_text("sending hello"));
  const long left = std::max(timeout_ms - (monotonic_ms() - start), 1L);
  pollfd pfd{fd, POLLIN, 0};
  if (::poll(&pfd, 1, static_cast<int>(left)) <= 0)
    return fail("no answer from the tool at " + endpoint);
  // The reply arrives in one piece; the limit only guards against a peer
  // that stops in the middle of it.
  timeval tv{static_cast<time_t>(left / 1000), static_cast<suseconds_t>(left % 1000 * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  AttachReply reply{};
  if (!read_full(fd, &reply, sizeof reply) || reply.magic != kAttachMagic)
    return fail("malformed answer from the tool at " + endpoint);
  const timeval none{0, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
  if (reply.status != AttachStatus::Ok) {
    reply.message[sizeof reply.message - 1] = '\0';
    return fail(std::string("tool refused the application: ") + attach_status_name(reply.status) +
                (reply.message[0] ? std::string(": ") + reply.message : std::string()));
  }
  const std::uint64_t cap = reply.channel_bytes;
  if (cap < 4096 || cap > (std::uint64_t{1} << 32) || (cap & (cap - 1)) != 0)
    return fail("the tool at " + endpoint + " announced an unusable ring (mixed vcx versions?)");
  out->kind = ChannelKind::Tcp;
  out->socket_fd = fd;
  out->mode_flags = reply.mode_flags;
  out->app_spin_ns = reply.app_spin_ns;
  out->control = nullptr;
  out->mapped_bytes = 0;
  out->ring_capacity = cap;
  return true;
}

void detach(Attachment* a) {
  if (a->control) ::munmap(a->control, a->mapped_bytes);
  if (a->socket_fd >= 0) ::close(a->socket_fd);
  *a = Attachment{};
}

bool create_channel_block(std::size_t ring_capacity, std::uint32_t mode_flags, ChannelBlock* out,
                          std::string* error) {
  const std::size_t bytes = channel_bytes(ring_capacity);
  int fd = -1;
  void* mem = nullptr;
  if (!create_shared_memfd("vcx-channel", bytes, "the channel", &fd, &mem, error)) return false;
  init_channel(static_cast<ChannelControl*>(mem), ring_capacity, mode_flags);
  out->memfd = fd;
  out->control = static_cast<ChannelControl*>(mem);
  out->bytes = bytes;
  return true;
}

void destroy_channel_block(ChannelBlock* b) {
  if (b->control) ::munmap(b->control, b->bytes);
  if (b->memfd >= 0) ::close(b->memfd);
  *b = ChannelBlock{};
}

bool send_attach_reply(int socket_fd, const AttachReply& reply, int fd) {
  iovec iov{const_cast<AttachReply*>(&reply), sizeof reply};
  DescriptorControl control;
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (fd >= 0) pass_descriptor(&msg, &control, fd);
  for (;;) {
    ssize_t n = ::sendmsg(socket_fd, &msg, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (static_cast<std::size_t>(n) == sizeof reply) return true;
    // The descriptor went with the first part; send the rest plainly.
    return write_full(socket_fd, reinterpret_cast<const std::uint8_t*>(&reply) + n,
                      sizeof reply - static_cast<std::size_t>(n));
  }
}

}  // namespace vcx::channel
