#include "vcx/channel/attach.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace vcx::channel {
namespace {

std::string errno_text(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
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

bool attach_to_tool(const std::string& socket_path, const AttachHello& hello, int timeout_ms,
                    Attachment* out, std::string* error) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path) {
    *error = "socket path too long: " + socket_path;
    return false;
  }
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);

  timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
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
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    const long elapsed_ms =
        (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1'000'000;
    if ((err != ENOENT && err != ECONNREFUSED) || elapsed_ms >= timeout_ms) {
      *error = "cannot connect to " + socket_path + ": " + std::strerror(err) + " (after " +
               std::to_string(elapsed_ms) + " ms)";
      return false;
    }
    timespec pause{0, 20'000'000};
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
  out->socket_fd = fd;
  out->control = control;
  out->mapped_bytes = reply.channel_bytes;
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
  int fd = ::memfd_create("vcx-channel", MFD_CLOEXEC);
  if (fd < 0) {
    *error = errno_text("memfd_create");
    return false;
  }
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    *error = errno_text("sizing the channel");
    ::close(fd);
    return false;
  }
  void* mem = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mem == MAP_FAILED) {
    *error = errno_text("mapping the channel");
    ::close(fd);
    return false;
  }
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
  alignas(cmsghdr) char ctrl[CMSG_SPACE(sizeof(int))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (fd >= 0) {
    msg.msg_control = ctrl;
    msg.msg_controllen = sizeof ctrl;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  }
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
