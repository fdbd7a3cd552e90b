// The shared-memory transport between two tools: real transports, each on
// its own event loop (threads, or a forked process where a tool must die),
// sleeping the way the tool process does (poll, announce the sleep, sleep in
// the io_context). Small rings (4 KiB) make rings fill up and messages go in
// chunks all the time.
//
// No result depends on timing: a loop that sleeps 20 s without being woken
// has lost a wake-up, and the test fails instead of hanging.
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "vcx/shm_transport.h"
#include "support/temp_dir.h"

namespace {

using vcx::ToolPart;
using vcx::Rank;
using vcx::ShmTransport;
using namespace std::chrono_literals;

constexpr std::size_t kSmallRing = 4096;
const std::string kToken = "0123456789abcdef0123456789abcdef";

using vcx::test::TempDir;

struct Message {
  Rank src;
  ToolPart part;
  std::vector<std::uint8_t> bytes;
};

// One tool: its loop, its transport and what it received.
struct Tool {
  Tool(Rank self, std::uint32_t size, const std::string& dir, std::string node = "node-a")
      : transport(io, self, size, kToken, dir, std::move(node), kSmallRing) {
    for (auto part : {ToolPart::Control, ToolPart::Exchange, ToolPart::Analysis})
      transport.set_handler(part, [this, part](Rank src, std::span<const std::uint8_t> b) {
        received.push_back({src, part, {b.begin(), b.end()}});
      });
    transport.set_error_handler(
        [this](Rank peer, const std::string& what) { errors.push_back({peer, what}); });
    endpoint = transport.listen("127.0.0.1", "127.0.0.1");
  }
  ~Tool() { transport.close(); }

  // Runs the loop as the tool process does until `done`; false when a sleep
  // of 20 s was not woken (a lost wake-up) or after 120 s in all.
  bool run_until(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + 120s;
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      io.poll();
      transport.poll();
      if (done()) break;
      if (!transport.prepare_sleep()) continue;
      const std::size_t ran = io.run_one_for(20s);
      transport.end_sleep();
      if (ran == 0) return false;
    }
    return true;
  }

  vcx::asio::io_context io;
  ShmTransport transport;
  std::string endpoint;
  std::vector<Message> received;
  std::vector<std::pair<Rank, std::string>> errors;
};

void connect(Tool& a, Tool& b) {
  const std::vector<std::string> endpoints{a.endpoint, b.endpoint};
  a.transport.set_peers(endpoints);
  b.transport.set_peers(endpoints);
}

// Message `index` from `src`: its size varies from 0 to several rings, its
// bytes depend on both, so that a mixed-up, cut or reordered message shows.
std::vector<std::uint8_t> make_payload(std::uint32_t src, std::uint32_t index) {
  std::size_t size = (index * 37 + src) % 300;
  if (index % 97 == 5) size = 3 * kSmallRing + index % 13;  // chunked
  if (index % 11 == 0) size = 0;
  if (size < 8 && size != 0) size = 8;
  std::vector<std::uint8_t> p(size);
  if (size >= 8) {
    std::memcpy(p.data(), &src, 4);
    std::memcpy(p.data() + 4, &index, 4);
  }
  for (std::size_t i = 8; i < size; ++i) p[i] = static_cast<std::uint8_t>(i * 31 + index + src);
  return p;
}
ToolPart channel_of(std::uint32_t index) { return static_cast<ToolPart>(index % 3); }

// Every message from `src`, in sending order, unchanged.
void check_stream(const std::vector<Message>& got, std::uint32_t src, std::uint32_t count) {
  REQUIRE(got.size() == count);
  for (std::uint32_t i = 0; i < count; ++i) {
    INFO("message " << i);
    REQUIRE(got[i].src.value == src);
    REQUIRE(got[i].part == channel_of(i));
    REQUIRE(got[i].bytes == make_payload(src, i));
  }
}

}  // namespace

TEST_CASE("shm transport: many messages both ways keep order and contents", "[shm_transport]") {
  TempDir dir;
  Tool a(Rank{0}, 2, dir.path), b(Rank{1}, 2, dir.path);
  connect(a, b);
  REQUIRE(a.transport.shares_node_with(Rank{1}));
  REQUIRE(b.transport.shares_node_with(Rank{0}));
  constexpr std::uint32_t kCount = 5000;

  // Each sends in batches between loop turns, while the other does the same.
  auto exchange = [](Tool& self, std::uint32_t peer) {
    std::uint32_t sent = 0;
    return self.run_until([&] {
      for (int k = 0; k < 50 && sent < kCount; ++k, ++sent)
        self.transport.send(Rank{peer}, channel_of(sent), make_payload(self.transport.self().value, sent));
      return sent == kCount && self.received.size() == kCount && self.transport.flushed();
    });
  };
  bool b_ok = false;
  std::thread tb([&] { b_ok = exchange(b, 0); });
  const bool a_ok = exchange(a, 1);
  tb.join();
  REQUIRE(a_ok);
  REQUIRE(b_ok);
  check_stream(a.received, 1, kCount);
  check_stream(b.received, 0, kCount);
  CHECK(a.errors.empty());
  CHECK(b.errors.empty());
  CHECK(a.transport.stats().shm_messages_sent == kCount);
  CHECK(a.transport.stats().messages_sent == kCount);
  CHECK(b.transport.stats().messages_received == kCount);
}

TEST_CASE("shm transport: a full ring queues in the sender, which the reader wakes",
          "[shm_transport]") {
  TempDir dir;
  Tool a(Rank{0}, 2, dir.path), b(Rank{1}, 2, dir.path);
  connect(a, b);
  constexpr std::uint32_t kCount = 3000;  // far more than a 4 KiB ring holds
  // Sending never blocks, with nobody reading.
  for (std::uint32_t i = 0; i < kCount; ++i) a.transport.send(Rank{1}, channel_of(i), make_payload(0, i));
  REQUIRE_FALSE(a.transport.flushed());

  std::atomic<bool> go{false};
  bool b_ok = false;
  std::thread tb([&] {
    while (!go.load()) std::this_thread::yield();
    b_ok = b.run_until([&] { return b.received.size() == kCount; });
  });
  go.store(true);
  // The sender sleeps until the reader has drained the ring and rings it.
  const bool a_ok = a.run_until([&] { return a.transport.flushed(); });
  tb.join();
  REQUIRE(a_ok);
  REQUIRE(b_ok);
  check_stream(b.received, 0, kCount);
  CHECK(b.transport.stats().wakeups_sent >= 1);
}

TEST_CASE("shm transport: a sleeping receiver is woken, a busy one is not", "[shm_transport]") {
  TempDir dir;
  Tool a(Rank{0}, 2, dir.path), b(Rank{1}, 2, dir.path);
  connect(a, b);
  const std::uint8_t first[] = {1, 2, 3};
  a.transport.send(Rank{1}, ToolPart::Exchange, first);
  REQUIRE(b.run_until([&] { return b.received.size() == 1; }));
  // The ring existed before the receiver attached it: nobody slept yet.
  REQUIRE(a.transport.stats().wakeups_sent == 0);
  // A receiver that has not announced a sleep costs the sender no call.
  a.transport.send(Rank{1}, ToolPart::Exchange, first);
  REQUIRE(a.transport.stats().wakeups_sent == 0);
  REQUIRE(b.run_until([&] { return b.received.size() == 2; }));

  std::atomic<bool> asleep{false};
  bool woke = false;
  std::thread tb([&] {
    b.transport.poll();
    const bool may_sleep = b.transport.prepare_sleep();  // nothing there
    asleep.store(true);
    if (!may_sleep) return;
    woke = b.io.run_one_for(20s) > 0;
    b.transport.end_sleep();
    woke = woke && b.run_until([&] { return b.received.size() == 3; });
  });
  while (!asleep.load()) std::this_thread::yield();
  const std::uint8_t second[] = {4, 5};
  a.transport.send(Rank{1}, ToolPart::Analysis, second);
  CHECK(a.transport.stats().wakeups_sent == 1);
  tb.join();
  REQUIRE(woke);
  REQUIRE(b.received[2].part == ToolPart::Analysis);
  REQUIRE(b.received[2].bytes == std::vector<std::uint8_t>{4, 5});
}

TEST_CASE("shm transport: tools on different nodes and loopback go over TCP", "[shm_transport]") {
  TempDir dir;
  Tool a(Rank{0}, 2, dir.path, "node-a"), b(Rank{1}, 2, dir.path, "node-b");
  connect(a, b);
  REQUIRE_FALSE(a.transport.shares_node_with(Rank{1}));
  constexpr std::uint32_t kCount = 300;
  for (std::uint32_t i = 0; i < kCount; ++i) a.transport.send(Rank{1}, channel_of(i), make_payload(0, i));
  // To itself: delivered from the loop later, never inside send().
  const std::uint8_t self_msg[] = {9};
  a.transport.send(Rank{0}, ToolPart::Control, self_msg);
  REQUIRE(a.received.empty());
  bool b_ok = false;
  std::thread tb([&] { b_ok = b.run_until([&] { return b.received.size() == kCount; }); });
  const bool a_ok = a.run_until([&] { return a.received.size() == 1 && a.transport.flushed(); });
  tb.join();
  REQUIRE(a_ok);
  REQUIRE(b_ok);
  check_stream(b.received, 0, kCount);
  REQUIRE(a.received[0].src.value == 0);
  CHECK(a.transport.stats().shm_messages_sent == 0);
  CHECK(a.transport.stats().messages_sent == kCount + 1);
}

TEST_CASE("shm transport: a stranger's ring on the doorbell is refused", "[shm_transport]") {
  TempDir dir;
  Tool a(Rank{0}, 2, dir.path), b(Rank{1}, 2, dir.path);
  connect(a, b);
  // A datagram with a descriptor but not the session's token, sent before
  // the real ring, so that the receiver has read it once the real one came.
  {
    const int s = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    REQUIRE(s >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const std::string path = dir.path + "/peer-1.sock";
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    vcx::PeerRingMapping ring;
    std::string error;
    REQUIRE(vcx::create_peer_ring(0, 1, kSmallRing, &ring, &error));
    char bogus[80] = "not the token";
    iovec iov{bogus, sizeof bogus};
    alignas(cmsghdr) char ctrl[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_name = &addr;
    msg.msg_namelen = sizeof addr;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = ctrl;
    msg.msg_controllen = sizeof ctrl;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &ring.fd, sizeof(int));
    REQUIRE(::sendmsg(s, &msg, 0) == static_cast<ssize_t>(sizeof bogus));
    vcx::unmap_peer_ring(&ring);
    ::close(s);
  }
  const std::uint8_t real[] = {7};
  a.transport.send(Rank{1}, ToolPart::Exchange, real);
  REQUIRE(b.run_until([&] { return b.received.size() == 1; }));
  CHECK(b.transport.stats().refused_connections == 1);
  CHECK(b.received[0].bytes == std::vector<std::uint8_t>{7});
}

TEST_CASE("shm transport: a peer that dies is reported after what it sent", "[shm_transport]") {
  TempDir dir;
  int to_child[2], to_parent[2];
  REQUIRE(::pipe(to_child) == 0);
  REQUIRE(::pipe(to_parent) == 0);
  constexpr std::uint32_t kCount = 50;
  auto read_endpoint = [](int fd) {
    char buf[256] = {};
    std::size_t got = 0;
    while (got < sizeof buf) {
      const ssize_t n = ::read(fd, buf + got, sizeof buf - got);
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    return std::string(buf);
  };
  auto write_endpoint = [](int fd, const std::string& e) {
    char buf[256] = {};
    std::memcpy(buf, e.c_str(), std::min(e.size(), sizeof buf - 1));
    return ::write(fd, buf, sizeof buf) == static_cast<ssize_t>(sizeof buf);
  };

  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // Tool rank 1: sends its messages, makes sure they left, and is killed.
    int status = 1;
    {
      Tool b(Rank{1}, 2, dir.path);
      if (write_endpoint(to_parent[1], b.endpoint)) {
        const std::string a_endpoint = read_endpoint(to_child[0]);
        b.transport.set_peers({a_endpoint, b.endpoint});
        for (std::uint32_t i = 0; i < kCount; ++i)
          b.transport.send(Rank{0}, channel_of(i), make_payload(1, i));
        if (b.run_until([&] { return b.transport.flushed(); })) ::kill(::getpid(), SIGKILL);
      }
    }
    ::_exit(status);
  }
  ::close(to_child[0]);
  ::close(to_parent[1]);
  Tool a(Rank{0}, 2, dir.path);
  const std::string b_endpoint = read_endpoint(to_parent[0]);
  REQUIRE(write_endpoint(to_child[1], a.endpoint));
  a.transport.set_peers({a.endpoint, b_endpoint});
  const bool ok = a.run_until([&] { return !a.errors.empty(); });
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(to_child[1]);
  ::close(to_parent[0]);
  REQUIRE(ok);
  REQUIRE(WIFSIGNALED(status));
  check_stream(a.received, 1, kCount);
  REQUIRE(a.errors.size() == 1);
  CHECK(a.errors[0].first.value == 1);
  CHECK_THAT(a.errors[0].second, Catch::Contains("tool rank 1 exited"));
}
