// The application→tool channel over TCP: records (order, payload integrity,
// the mirrored ring layout with wrap padding), backpressure of a tool that
// stops reading, replies, the tool's end going away, and the tool's
// listener refusing wrong peers while an attached application runs on.
// Real loopback connections throughout; the application side runs in
// another thread or a forked process.
//
// Timing never decides a result here: waits are bounded only as hang guards.
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/channel_records.h"
#include "vcx/app_listener.h"
#include "vcx/channel/attach.h"
#include "vcx/channel/consumer.h"
#include "vcx/channel/producer.h"
#include "vcx/channel/tcp_channel.h"

namespace fs = std::filesystem;
namespace ch = vcx::channel;
using vcx::EventHeader;
using vcx::Model;
using namespace vcx::chtest;

namespace {

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// A connected loopback TCP pair: `app` and `tool` ends. With small_buffers,
// both kernels' buffers are as small as Linux allows, so a tool that stops
// reading soon makes the application wait.
struct TcpPair {
  int app = -1;
  int tool = -1;
  explicit TcpPair(bool small_buffers = false) {
    const int lst = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (lst < 0) throw std::runtime_error("socket");
    const int small = 4096;
    if (small_buffers) ::setsockopt(lst, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(lst, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(lst, 1) != 0 ||
        ::getsockname(lst, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      throw std::runtime_error("bind/listen");
    app = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (small_buffers) ::setsockopt(app, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    if (::connect(app, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
      throw std::runtime_error("connect");
    tool = ::accept4(lst, nullptr, nullptr, SOCK_CLOEXEC);
    ::close(lst);
    if (tool < 0) throw std::runtime_error("accept");
    ch::tune_channel_socket(app);
    ch::tune_channel_socket(tool);
  }
  ~TcpPair() {
    close_fd(app);
    close_fd(tool);
  }
  TcpPair(const TcpPair&) = delete;
  TcpPair& operator=(const TcpPair&) = delete;
};

// Runs the application side in a thread and joins it on every exit path.
// If the test gives up early, shutting the connection down ends any wait of
// the thread (its sends and reads fail).
class AppThread {
 public:
  AppThread(int app_fd, std::function<void()> body) : fd_(app_fd), t_(std::move(body)) {}
  ~AppThread() {
    if (t_.joinable()) {
      ::shutdown(fd_, SHUT_RDWR);
      t_.join();
    }
  }
  void join() { t_.join(); }

 private:
  int fd_;
  std::thread t_;
};

ch::WaitPolicy no_spin(std::uint64_t liveness_ns = 60'000'000'000ULL) {
  return ch::WaitPolicy{0, liveness_ns};
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "vcx-tcpch-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

ch::AttachHello hello_for(std::uint32_t rank, std::uint32_t size, const char* token) {
  ch::AttachHello h{};
  h.magic = ch::kAttachMagic;
  h.version = ch::kAttachVersion;
  h.world_rank = rank;
  h.world_size = size;
  h.pid = ::getpid();
  h.model = static_cast<std::uint16_t>(Model::Mpi);
  std::strncpy(h.token, token, sizeof h.token - 1);
  return h;
}

}  // namespace

// ---------------------------------------------------------------------------
// Records

TEST_CASE("tcp channel: records arrive once, in order, intact, across wrap-around",
          "[tcpchannel]") {
  constexpr std::size_t kCap = 4096;
  constexpr std::uint64_t kRecords = 30000;
  TcpPair pair;
  ch::TcpProducer prod(pair.app, kCap, {}, no_spin());
  ch::TcpConsumer cons(pair.tool, kCap);
  const std::size_t maxp = prod.max_payload();
  CHECK(vcx::event_record_size(maxp, vcx::kEventTimed) == kCap / 4);  // as the shared ring

  LayoutModel layout{kCap};
  std::string producer_error;
  {
    AppThread app(pair.app, [&] {
      for (std::uint64_t s = 1; s <= kRecords; ++s) {
        layout.add(payload_size_for(s, maxp));
        if (!produce(prod, s)) {
          producer_error = "producer failed at seq " + std::to_string(s);
          return;
        }
      }
    });
    REQUIRE(consume_range(cons, 1, kRecords, maxp) == "");
    app.join();
  }
  REQUIRE(producer_error == "");
  CHECK(cons.peek() == nullptr);
  CHECK_FALSE(cons.closed());
  CHECK(prod.last_seq() == kRecords);
  // The tool's ring mirrors the application's byte for byte: the same
  // padding at the same places, consumed exactly.
  CHECK(layout.pads > 100);
  CHECK(cons.control()->head.load() == layout.head);
  CHECK(cons.control()->tail.load() == layout.head);
  CHECK(prod.backpressure_ns() == 0);
}

TEST_CASE("tcp channel: max_payload is enforced and zero-length records travel",
          "[tcpchannel]") {
  TcpPair pair;
  ch::TcpProducer prod(pair.app, 4096, {}, no_spin());
  ch::TcpConsumer cons(pair.tool, 4096);
  CHECK(prod.begin(Model::Example, 1, 0, prod.max_payload() + 1) == nullptr);
  CHECK(prod.last_seq() == 0);
  REQUIRE(prod.begin(Model::Example, 2, 0, 0) != nullptr);
  REQUIRE(prod.commit() == 1);
  const EventHeader* h = nullptr;
  REQUIRE(eventually([&] { return (h = cons.peek()) != nullptr; }));
  CHECK(h->seq == 1);
  CHECK(h->size == sizeof(EventHeader));
  CHECK(h->payload_size == 0);
}

TEST_CASE("tcp channel: the tool reads everything sent before the application's end",
          "[tcpchannel]") {
  TcpPair pair;
  ch::TcpConsumer cons(pair.tool, 8192);
  std::size_t maxp = 0;
  {
    ch::TcpProducer prod(pair.app, 8192, {}, no_spin());
    maxp = prod.max_payload();
    for (std::uint64_t s = 1; s <= 500; ++s) REQUIRE(produce(prod, s));
  }
  close_fd(pair.app);  // the application exits
  REQUIRE(consume_range(cons, 1, 500, maxp) == "");
  REQUIRE(eventually([&] { return cons.peek() == nullptr && cons.closed(); }));
  CHECK_FALSE(cons.malformed());
}

TEST_CASE("tcp channel: a malformed stream ends the channel", "[tcpchannel]") {
  TcpPair pair;
  ch::TcpConsumer cons(pair.tool, 4096);
  const std::uint32_t bogus[2] = {3, 0};  // a record size that is not a multiple of 8
  REQUIRE(ch::write_full(pair.app, bogus, sizeof bogus));
  REQUIRE(eventually([&] { return cons.peek() == nullptr && cons.closed(); }));
  CHECK(cons.malformed());
}

// ---------------------------------------------------------------------------
// Backpressure

TEST_CASE("tcp channel: a tool that stops reading makes the application wait in send, "
          "and nothing is dropped",
          "[tcpchannel]") {
  constexpr std::size_t kCap = 4096;
  constexpr std::uint64_t kRecords = 4000;  // ~900 KB: far more than the buffers hold
  TcpPair pair(/*small_buffers=*/true);
  ch::TcpProducer prod(pair.app, kCap, {}, no_spin());
  ch::TcpConsumer cons(pair.tool, kCap);
  std::atomic<std::uint64_t> produced{0};
  std::string producer_error;
  auto take = [&](std::uint64_t s) -> std::string {
    const Deadline d(20);
    const EventHeader* h = nullptr;
    while (!(h = cons.peek())) {
      if (d.passed()) return "timed out waiting for " + std::to_string(s);
      std::this_thread::yield();
    }
    std::uint64_t got = 0;
    std::memcpy(&got, h + 1, sizeof got);
    const auto* q = reinterpret_cast<const std::uint8_t*>(h + 1);
    if (h->seq != s || got != s || q[199] != static_cast<std::uint8_t>(s & 0xff))
      return "record " + std::to_string(s) + " damaged or out of order";
    // The tool never holds more than its ring.
    if (cons.control()->head.load() - cons.control()->tail.load() > kCap)
      return "the tool read beyond its ring";
    cons.pop();
    return "";
  };

  AppThread app(pair.app, [&] {
    for (std::uint64_t s = 1; s <= kRecords; ++s) {
      auto* p = static_cast<std::uint8_t*>(prod.begin(Model::Example, 5, 0, 200));
      if (!p) {
        producer_error = "push failed at " + std::to_string(s);
        return;
      }
      std::memset(p, static_cast<int>(s & 0xff), 200);
      std::memcpy(p, &s, sizeof s);
      if (prod.commit() != s) {
        producer_error = "wrong seq at " + std::to_string(s);
        return;
      }
      produced = s;
    }
  });

  // Nothing is read yet: the application fills the connection and waits.
  REQUIRE(eventually([&] { return prod.waiting_for_room(); }));
  const std::uint64_t stuck_at = produced.load();
  CHECK(stuck_at < kRecords);

  // Read part of it, then stop again: the application waits again.
  std::uint64_t next = 1;
  for (; next <= stuck_at; ++next) REQUIRE(take(next) == "");
  REQUIRE(eventually([&] { return prod.waiting_for_room() && produced.load() > stuck_at; }));
  for (; next <= kRecords; ++next) REQUIRE(take(next) == "");
  app.join();
  REQUIRE(producer_error == "");
  CHECK(produced.load() == kRecords);
  CHECK(cons.peek() == nullptr);
  CHECK(prod.backpressure_ns() > 0);
}

TEST_CASE("tcp channel: an application waiting for room gives up when the tool says it failed",
          "[tcpchannel]") {
  TcpPair pair(/*small_buffers=*/true);
  // A minute between liveness checks: only the tool's message can end the wait soon.
  ch::TcpProducer prod(pair.app, 4096, {}, no_spin());
  ch::TcpConsumer cons(pair.tool, 4096);
  std::atomic<std::uint64_t> failed_at{0};
  const auto start = Clock::now();
  {
    AppThread app(pair.app, [&] {
      for (std::uint64_t s = 1; s < 100000; ++s) {
        if (!prod.begin(Model::Example, 1, 0, 200)) {
          failed_at = s;
          return;
        }
        prod.commit();
      }
    });
    REQUIRE(eventually([&] { return prod.waiting_for_room(); }));
    cons.set_tool_state(ch::ToolState::Failed);  // and it reads nothing more
    REQUIRE(eventually([&] { return failed_at.load() != 0; }, 30));
    app.join();
  }
  CHECK(failed_at.load() > 1);
  CHECK(prod.tool_gone());
  CHECK(Clock::now() - start < std::chrono::seconds(30));
  CHECK(prod.wait_reply(1) == ch::WaitResult::ToolGone);
}

// ---------------------------------------------------------------------------
// Replies and the tool going away

TEST_CASE("tcp channel: wait_reply returns once the tool replied, from another thread",
          "[tcpchannel]") {
  constexpr std::uint64_t kRounds = 2000;
  TcpPair pair;
  std::atomic<int> progress_calls{0};
  ch::ProducerHooks hooks;
  hooks.ctx = &progress_calls;
  hooks.progress = [](void* c) { static_cast<std::atomic<int>*>(c)->fetch_add(1); };
  ch::TcpProducer prod(pair.app, 4096, hooks, no_spin());
  ch::TcpConsumer cons(pair.tool, 4096);
  std::string tool_error;
  std::atomic<bool> stop{false};
  std::thread tool([&] {
    std::uint64_t replied = 0;
    const Deadline d(60);
    while (replied < kRounds && !stop) {
      const EventHeader* h = cons.peek();
      if (!h) {
        if (d.passed()) {
          tool_error = "tool timed out";
          break;
        }
        std::this_thread::yield();
        continue;
      }
      const std::uint64_t s = h->seq;
      cons.pop();
      cons.reply(s);
      replied = s;
    }
    // Leaving early: let the waiting application see a dead tool.
    if (replied < kRounds) ::shutdown(pair.tool, SHUT_RDWR);
  });
  bool ok = true;
  for (std::uint64_t s = 1; s <= kRounds && ok; ++s) {
    ok = prod.begin(Model::Example, 1, vcx::kEventNeedsReply, 8) != nullptr &&
         prod.commit() == s && prod.wait_reply(s) == ch::WaitResult::Ok &&
         prod.replied_seq() >= s;
  }
  stop = true;
  tool.join();
  REQUIRE(tool_error == "");
  REQUIRE(ok);
  CHECK(prod.stall_ns() > 0);
  CHECK(progress_calls.load() > 0);  // the application's library progressed while it waited
}

TEST_CASE("tcp channel: a reply answers every earlier event too", "[tcpchannel]") {
  TcpPair pair;
  ch::TcpProducer prod(pair.app, 4096, {}, no_spin(1'000'000));
  ch::TcpConsumer cons(pair.tool, 4096);
  for (int i = 0; i < 5; ++i) {
    REQUIRE(prod.begin(Model::Example, 1, vcx::kEventNeedsReply, 0));
    prod.commit();
  }
  cons.reply(4);
  CHECK(prod.wait_reply(1) == ch::WaitResult::Ok);
  CHECK(prod.wait_reply(4) == ch::WaitResult::Ok);
  cons.reply(2);  // an older reply is not even sent
  cons.reply(5);
  CHECK(prod.wait_reply(5) == ch::WaitResult::Ok);
  CHECK(prod.replied_seq() == 5);
}

TEST_CASE("tcp channel: the tool never blocks on replies the application does not read",
          "[tcpchannel]") {
  constexpr std::uint64_t kReplies = 200000;  // 3.2 MB of messages if none were merged
  TcpPair pair(/*small_buffers=*/true);
  const int small = 4096;
  ::setsockopt(pair.tool, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
  ::setsockopt(pair.app, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  ch::TcpProducer prod(pair.app, 4096, {}, no_spin());
  ch::TcpConsumer cons(pair.tool, 4096);
  bool saw_pending = false;
  for (std::uint64_t s = 1; s <= kReplies; ++s) {
    cons.reply(s);  // returns at once even when the connection is full
    saw_pending = saw_pending || cons.output_pending();
  }
  CHECK(saw_pending);
  // Once the application reads, the last reply arrives.
  REQUIRE(prod.begin(Model::Example, 1, vcx::kEventNeedsReply, 0));
  std::thread flusher([&] {
    const Deadline d(20);
    while (cons.output_pending() && !d.passed()) {
      cons.flush_output();
      std::this_thread::yield();
    }
  });
  const ch::WaitResult r = prod.wait_reply(kReplies);
  flusher.join();
  CHECK(r == ch::WaitResult::Ok);
  CHECK(prod.replied_seq() == kReplies);
  CHECK_FALSE(cons.output_pending());
}

TEST_CASE("tcp channel: wait_reply reports ToolGone when the tool's end closes",
          "[tcpchannel]") {
  TcpPair pair;
  // A minute between liveness checks: only the connection's end can stop the wait early.
  ch::TcpProducer prod(pair.app, 4096, {}, no_spin());
  REQUIRE(prod.begin(Model::Example, 1, vcx::kEventNeedsReply, 0));
  const std::uint64_t s = prod.commit();
  const auto start = Clock::now();
  std::thread tool([&] { close_fd(pair.tool); });
  const ch::WaitResult r = prod.wait_reply(s);
  tool.join();
  CHECK(r == ch::WaitResult::ToolGone);
  CHECK(Clock::now() - start < std::chrono::seconds(30));
  CHECK(prod.tool_gone());
}

TEST_CASE("tcp channel: wait_reply reports ToolGone when the tool says it failed",
          "[tcpchannel]") {
  TcpPair pair;
  ch::TcpProducer prod(pair.app, 4096, {}, no_spin());
  ch::TcpConsumer cons(pair.tool, 4096);
  REQUIRE(prod.begin(Model::Example, 1, vcx::kEventNeedsReply, 0));
  const std::uint64_t s = prod.commit();
  std::thread tool([&] { cons.set_tool_state(ch::ToolState::Failed); });
  const ch::WaitResult r = prod.wait_reply(s);
  tool.join();
  CHECK(r == ch::WaitResult::ToolGone);
  // The connection is still open: the message, not its end, said so.
  pollfd p{pair.tool, POLLRDHUP, 0};
  CHECK(::poll(&p, 1, 0) == 0);
  // And the application pushes nothing more.
  CHECK(prod.begin(Model::Example, 1, 0, 0) == nullptr);
}

TEST_CASE("tcp channel: a producer whose tool is gone stops at begin()", "[tcpchannel]") {
  TcpPair pair;
  ch::TcpProducer prod(pair.app, 4096, {}, no_spin());
  close_fd(pair.tool);
  // The first sends may still be accepted by the kernel; the peer's reset
  // makes a later one fail, and from then on begin() refuses.
  std::uint64_t pushed = 0;
  const Deadline d(20);
  while (!d.passed() && pushed < 100000) {
    void* p = prod.begin(Model::Example, 1, 0, 16);
    if (!p) break;
    prod.commit();
    ++pushed;
  }
  CHECK(prod.tool_gone());
  CHECK(prod.begin(Model::Example, 1, 0, 16) == nullptr);
  CHECK(prod.wait_reply(pushed + 1) == ch::WaitResult::ToolGone);
}

// ---------------------------------------------------------------------------
// The tool's listener and the attach handshake

namespace {

// A tool's listener on its own event loop thread, admitting one application
// of rank 0 in a world of 2 and recording everything it saw.
struct ListeningTool {
  TempDir dir;
  vcx::asio::io_context io;
  std::shared_ptr<vcx::AppListener> listener;
  std::thread loop;
  std::mutex m;
  std::vector<std::string> refusals;
  std::atomic<int> attached_fd{-1};
  std::atomic<int> admitted{0};
  ch::ChannelBlock block{};  // shm only
  std::size_t ring = 4096;

  explicit ListeningTool(ch::ChannelKind kind) {
    listener = vcx::AppListener::create(io, kind, "right-token");
    listener->set_hello_timeout(std::chrono::milliseconds(300));
    listener->on_admit([this, kind](const ch::AttachHello& h) {
      vcx::AppListener::Decision d;
      if (attached_fd.load() >= 0 || h.world_size != 2) {
        d.reply.status = ch::AttachStatus::AlreadyAttached;
        std::snprintf(d.reply.message, sizeof d.reply.message, "taken");
        return d;
      }
      ++admitted;
      d.reply.status = ch::AttachStatus::Ok;
      if (kind == ch::ChannelKind::Tcp) {
        d.reply.channel_bytes = ring;
      } else {
        std::string err;
        if (!ch::create_channel_block(ring, 0, &block, &err)) throw std::runtime_error(err);
        d.reply.channel_bytes = block.bytes;
        d.pass_fd = block.memfd;
      }
      return d;
    });
    listener->on_attached([this](int fd, const ch::AttachHello&) { attached_fd = fd; });
    listener->on_refused([this](ch::AttachStatus st, const std::string& why) {
      std::lock_guard<std::mutex> lock(m);
      refusals.push_back(std::string(ch::attach_status_name(st)) + ": " + why);
    });
    listener->listen(dir.path(), 0, "127.0.0.1");
  }
  void start() {
    loop = std::thread([this] {
      auto guard = vcx::asio::make_work_guard(io);
      io.run();
    });
  }
  // Stops the loop thread; the listener may then be inspected.
  void stop() {
    io.stop();
    if (loop.joinable()) loop.join();
  }
  ~ListeningTool() {
    stop();
    listener->close();
    if (attached_fd.load() >= 0) ::close(attached_fd.load());
    ch::destroy_channel_block(&block);
  }
  std::vector<std::string> refused() {
    std::lock_guard<std::mutex> lock(m);
    return refusals;
  }
};

// Connects to a loopback endpoint ("127.0.0.1:port") without saying anything.
int connect_silently(const std::string& endpoint) {
  const auto colon = endpoint.rfind(':');
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(std::stoi(endpoint.substr(colon + 1))));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string read_endpoint(const std::string& dir) {
  std::ifstream in(ch::tool_endpoint_path(dir, 0));
  std::string line;
  std::getline(in, line);
  return line;
}

// True once the tool closed the connection (end of file), within the guard.
bool closed_by_peer(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, 10'000) != 1) return false;
  char buf[512];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) {
  }
  return n == 0;
}

}  // namespace

TEST_CASE("tcp attach: wrong peers are refused and do not disturb the attached application",
          "[tcpchannel][attach]") {
  ListeningTool tool(ch::ChannelKind::Tcp);
  const std::string endpoint = read_endpoint(tool.dir.path());
  REQUIRE(endpoint.rfind("127.0.0.1:", 0) == 0);
  CHECK_FALSE(fs::exists(ch::tool_socket_path(tool.dir.path(), 0)));  // one channel only
  tool.start();

  // A peer that connects and says nothing, before the application comes.
  int silent = connect_silently(endpoint);
  REQUIRE(silent >= 0);

  // The application attaches through the session directory.
  ch::Attachment att;
  std::string err;
  const bool ok = ch::attach_in_session(tool.dir.path(), hello_for(0, 2, "right-token"), 10'000,
                                        &att, &err);
  INFO(err);
  REQUIRE(ok);
  CHECK(att.kind == ch::ChannelKind::Tcp);
  CHECK(att.ring_capacity == tool.ring);
  REQUIRE(eventually([&] { return tool.attached_fd.load() >= 0; }));
  ch::Producer prod(att, {}, no_spin(1'000'000'000ULL));
  ch::Consumer cons(tool.attached_fd.load(), tool.ring);
  const std::size_t maxp = prod.max_payload();

  std::uint64_t seq = 0;
  auto round = [&](int records) {
    for (int i = 0; i < records; ++i) REQUIRE(produce(prod, ++seq));
    REQUIRE(consume_range(cons, seq - records + 1, seq, maxp) == "");
    cons.reply(seq);
    REQUIRE(prod.wait_reply(seq) == ch::WaitResult::Ok);
  };
  round(100);

  // Intruders while the application runs: a wrong token, a wrong protocol,
  // a second application with the right token, and the silent one.
  ch::Attachment bad;
  std::string bad_err;
  CHECK_FALSE(ch::attach_to_tool_tcp(endpoint, hello_for(0, 2, "wrong-token"), 10'000, &bad,
                                     &bad_err));
  CHECK_THAT(bad_err, Catch::Matchers::Contains("wrong session token"));
  round(100);

  ch::AttachHello garbage = hello_for(0, 2, "right-token");
  garbage.magic = 0x0123456789abcdefULL;
  CHECK_FALSE(ch::attach_to_tool_tcp(endpoint, garbage, 10'000, &bad, &bad_err));
  CHECK_THAT(bad_err, Catch::Matchers::Contains("version"));

  CHECK_FALSE(ch::attach_to_tool_tcp(endpoint, hello_for(0, 2, "right-token"), 10'000, &bad,
                                     &bad_err));
  CHECK_THAT(bad_err, Catch::Matchers::Contains("taken"));
  round(100);

  // The silent peer is dropped after the hello deadline.
  CHECK(closed_by_peer(silent));
  close_fd(silent);
  round(100);

  // The tool reports a refusal just after closing the connection.
  REQUIRE(eventually([&] { return tool.refused().size() >= 4; }));
  tool.stop();
  CHECK(tool.admitted.load() == 1);
  const auto refused = tool.refused();
  CHECK(refused.size() == 4);
  CHECK(std::count_if(refused.begin(), refused.end(), [](const std::string& r) {
          return r.find("wrong session token") != std::string::npos;
        }) == 1);
  CHECK(tool.listener->refused_count() == 4);
  ch::detach(&att);
}

TEST_CASE("shm attach: a silent peer does not hold up the application's attach",
          "[tcpchannel][attach]") {
  ListeningTool tool(ch::ChannelKind::Shm);
  tool.listener->set_hello_timeout(std::chrono::seconds(60));
  const std::string path = ch::tool_socket_path(tool.dir.path(), 0);
  REQUIRE(fs::exists(path));
  CHECK_FALSE(fs::exists(ch::tool_endpoint_path(tool.dir.path(), 0)));
  tool.start();

  const int silent = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  REQUIRE(::connect(silent, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);

  // The silent peer has a minute to say hello; the application does not wait for it.
  const auto start = Clock::now();
  ch::Attachment att;
  std::string err;
  const bool ok = ch::attach_in_session(tool.dir.path(), hello_for(0, 2, "right-token"), 30'000,
                                        &att, &err);
  INFO(err);
  REQUIRE(ok);
  CHECK(Clock::now() - start < std::chrono::seconds(30));
  CHECK(att.kind == ch::ChannelKind::Shm);
  CHECK(ch::channel_valid(att.control, att.mapped_bytes));

  ch::Attachment bad;
  CHECK_FALSE(
      ch::attach_to_tool(path, hello_for(0, 2, "wrong-token"), 10'000, &bad, &err));
  CHECK_THAT(err, Catch::Matchers::Contains("wrong session token"));
  ::close(silent);
  ch::detach(&att);
}

TEST_CASE("tcp attach: an application in another process, with replies it sleeps for",
          "[tcpchannel][attach][fork]") {
  constexpr std::uint64_t kRecords = 20000;
  ListeningTool tool(ch::ChannelKind::Tcp);
  tool.ring = 8192;
  const std::string dir = tool.dir.path();
  const std::size_t maxp =
      tool.ring / 4 - sizeof(EventHeader) - sizeof(vcx::EventTiming);  // as the producer's

  // Forked before the tool's loop thread starts; the child uses only the channel.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ch::Attachment att;
    std::string err;
    if (!ch::attach_in_session(dir, hello_for(0, 2, "right-token"), 10'000, &att, &err))
      ::_exit(10);
    if (att.kind != ch::ChannelKind::Tcp) ::_exit(11);
    ch::Producer p(att, {}, ch::WaitPolicy{0, 50'000'000});
    for (std::uint64_t s = 1; s <= kRecords; ++s) {
      if (!produce(p, s)) ::_exit(12);
      if ((flags_for(s) & vcx::kEventNeedsReply) && p.wait_reply(s) != ch::WaitResult::Ok)
        ::_exit(13);
    }
    // What the detach reports.
    if (p.stall_ns() == 0) ::_exit(14);
    ::_exit(0);
  }
  tool.start();
  std::string error;
  if (!eventually([&] { return tool.attached_fd.load() >= 0; }, 20)) error = "never attached";
  std::optional<ch::Consumer> cons;
  if (error.empty()) cons.emplace(tool.attached_fd.load(), tool.ring);
  const Deadline d(60);
  for (std::uint64_t seq = 1; seq <= kRecords && error.empty();) {
    const EventHeader* h = cons->peek();
    if (!h) {
      if (d.passed()) error = "timed out at seq " + std::to_string(seq);
      std::this_thread::yield();
      continue;
    }
    error = check_record(h, seq, maxp);
    const bool wants = h->flags & vcx::kEventNeedsReply;
    cons->pop();
    if (wants) cons->reply(seq);
    ++seq;
  }
  int status = 0;
  const pid_t w = reap_child(child, &status, 20, !error.empty());
  REQUIRE(error == "");
  REQUIRE(w == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  // The child's exit closed the connection; nothing is left over.
  REQUIRE(eventually([&] { return cons->peek() == nullptr && cons->tcp()->closed(); }));
  CHECK_FALSE(cons->tcp()->malformed());
}

TEST_CASE("tcp attach: endpoints name an address, or this host for a wildcard bind",
          "[tcpchannel][attach]") {
  char host[256] = {};
  REQUIRE(::gethostname(host, sizeof host - 1) == 0);
  CHECK(vcx::advertised_endpoint("127.0.0.1", 4711) == "127.0.0.1:4711");
  CHECK(vcx::advertised_endpoint("10.1.2.3", 80) == "10.1.2.3:80");
  CHECK(vcx::advertised_endpoint("::1", 4711) == "[::1]:4711");
  CHECK(vcx::advertised_endpoint("0.0.0.0", 4711) == std::string(host) + ":4711");
  CHECK(vcx::advertised_endpoint("::", 4711) == std::string(host) + ":4711");

  ch::Attachment att;
  std::string err;
  CHECK_FALSE(ch::attach_to_tool_tcp("no-port-here", hello_for(0, 2, "t"), 100, &att, &err));
  CHECK_THAT(err, Catch::Matchers::Contains("host:port"));
  // Nobody listens (TcpPair closed its listener once connected): refused
  // until the bounded wait is over, naming the endpoint.
  TcpPair probe;
  sockaddr_in a{};
  socklen_t len = sizeof a;
  REQUIRE(::getsockname(probe.tool, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  const std::string endpoint = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  const auto start = Clock::now();
  CHECK_FALSE(ch::attach_to_tool_tcp(endpoint, hello_for(0, 2, "t"), 300, &att, &err));
  CHECK(Clock::now() - start < std::chrono::seconds(10));
  CHECK_THAT(err, Catch::Matchers::Contains(endpoint));
  CHECK(att.socket_fd == -1);
}
