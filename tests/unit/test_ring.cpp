// The application→tool channel: the shared-memory event ring (order, payload
// integrity, wrap-around, backpressure, the sleep/wake handshake, replies and
// tool failure), across threads and across a fork, and the attach handshake
// over a real Unix socket.
//
// Timing never decides a result here: waits are bounded only as hang guards.
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "vcx/channel/attach.h"
#include "vcx/channel/futex.h"
#include "vcx/channel/ring.h"
#include "vcx/channel/shared_channel.h"
#include "vcx/types.h"
#include "support/channel_records.h"

namespace fs = std::filesystem;
namespace ch = vcx::channel;
using vcx::EventHeader;
using vcx::Model;
using namespace vcx::chtest;

namespace {

class Block {
 public:
  explicit Block(std::size_t capacity, std::uint32_t flags = 0) {
    std::string err;
    if (!ch::create_channel_block(capacity, flags, &b_, &err))
      throw std::runtime_error("create_channel_block: " + err);
  }
  ~Block() { ch::destroy_channel_block(&b_); }
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;
  ch::ChannelControl* c() const { return b_.control; }
  const ch::ChannelBlock& raw() const { return b_; }

 private:
  ch::ChannelBlock b_{};
};

struct HookState {
  std::atomic<bool> alive{true};
  std::atomic<std::uint64_t> wakes{0};
  int efd = -1;
};

void hook_wake(void* ctx) {
  auto* h = static_cast<HookState*>(ctx);
  h->wakes.fetch_add(1);
  if (h->efd >= 0) {
    const std::uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(h->efd, &one, sizeof one);
  }
}

bool hook_alive(void* ctx) { return static_cast<HookState*>(ctx)->alive.load(); }

ch::ProducerHooks hooks_for(HookState& h) { return ch::ProducerHooks{&h, &hook_wake, &hook_alive}; }

// Wakes every sleeper on the block so that it re-checks its conditions; used
// only by hang guards, never to make a test pass.
void nudge(ch::ChannelControl* c) {
  c->reply_futex.fetch_add(1);
  ch::futex_wake_all(&c->reply_futex);
  c->space_futex.fetch_add(1);
  ch::futex_wake_all(&c->space_futex);
}

// Joins a helper thread on every exit path (also when an assertion throws),
// after telling it to give up.
class Worker {
 public:
  Worker(HookState& h, ch::ChannelControl* c, std::function<void()> body)
      : h_(h), c_(c), t_(std::move(body)) {}
  ~Worker() { stop(); }
  void stop() {
    h_.alive = false;
    if (t_.joinable()) {
      nudge(c_);
      t_.join();
    }
  }

 private:
  HookState& h_;
  ch::ChannelControl* c_;
  std::thread t_;
};

}  // namespace

// ---------------------------------------------------------------------------
// Ring basics

TEST_CASE("ring: records arrive once, in order, intact, across wrap-around (threads)", "[ring]") {
  constexpr std::size_t kCap = 4096;
  constexpr std::uint64_t kRecords = 30000;
  Block block(kCap);
  HookState hooks;
  ch::RingProducer prod(block.c(), hooks_for(hooks), ch::WaitPolicy{2'000, 5'000'000});
  ch::RingConsumer cons(block.c());
  const std::size_t maxp = prod.max_payload();

  LayoutModel layout{kCap};
  std::string producer_error;
  {
    Worker w(hooks, block.c(), [&] {
      for (std::uint64_t s = 1; s <= kRecords; ++s) {
        layout.add(payload_size_for(s, maxp));
        if (!produce(prod, s)) {
          producer_error = "producer failed at seq " + std::to_string(s);
          return;
        }
      }
    });
    const std::string err = consume_range(cons, 1, kRecords, maxp);
    w.stop();
    REQUIRE(err == "");
  }
  REQUIRE(producer_error == "");
  CHECK(cons.peek() == nullptr);  // nothing beyond the last record
  CHECK(cons.empty());
  CHECK(prod.last_seq() == kRecords);
  // Wrap-around padding happened, and consumed exactly the bytes it should.
  CHECK(layout.pads > 100);
  CHECK(block.c()->head.load() == layout.head);
  CHECK(block.c()->tail.load() == layout.head);
}

TEST_CASE("ring: a producer in a forked process, mapping the same memfd", "[ring][fork]") {
  constexpr std::size_t kCap = 8192;
  constexpr std::uint64_t kRecords = 20000;
  Block block(kCap);
  const std::size_t maxp = ch::RingProducer(block.c(), {}).max_payload();

  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // Child: maps the block afresh, as the application does after attaching.
    void* mem = ::mmap(nullptr, block.raw().bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
                       block.raw().memfd, 0);
    if (mem == MAP_FAILED) ::_exit(10);
    auto* c = static_cast<ch::ChannelControl*>(mem);
    if (!ch::channel_valid(c, block.raw().bytes)) ::_exit(11);
    // Hang guard for the child: give up if the parent goes away.
    struct Guard {
      pid_t parent;
    } guard{::getppid()};
    ch::ProducerHooks hooks{
        &guard, nullptr, [](void* ctx) { return ::getppid() == static_cast<Guard*>(ctx)->parent; }};
    // No spinning: every wait for a reply sleeps on the shared futex.
    ch::RingProducer p(c, hooks, ch::WaitPolicy{0, 50'000'000});
    for (std::uint64_t s = 1; s <= kRecords; ++s) {
      if (!produce(p, s)) ::_exit(12);
      if (flags_for(s) & vcx::kEventNeedsReply) {
        if (p.wait_reply(s) != ch::WaitResult::Ok) ::_exit(13);
        if (c->replied_seq.load() < s) ::_exit(14);
      }
    }
    ::_exit(0);
  }

  // Parent: the tool's side. Replies to every record that asks for one.
  ch::RingConsumer cons(block.c());
  std::string err;
  const Deadline d(30);
  for (std::uint64_t seq = 1; seq <= kRecords && err.empty();) {
    const EventHeader* h = cons.peek();
    if (!h) {
      int status = 0;
      if (::waitpid(child, &status, WNOHANG) == child) {
        err = "producer process ended early, status " + std::to_string(status);
        break;
      }
      if (d.passed()) err = "timed out at seq " + std::to_string(seq);
      std::this_thread::yield();
      continue;
    }
    err = check_record(h, seq, maxp);
    const bool wants = h->flags & vcx::kEventNeedsReply;
    cons.pop();
    if (wants) cons.reply(seq);
    ++seq;
  }
  int status = 0;
  const pid_t w = reap_child(child, &status, 20, !err.empty());
  REQUIRE(err == "");
  REQUIRE(w == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(cons.peek() == nullptr);
  CHECK(block.c()->replied_seq.load() == kRecords);
  // The child slept for replies at least once (no spinning allowed).
  CHECK(block.c()->stall_ns.load() > 0);
}

TEST_CASE("ring: max_payload is a quarter of the ring and is enforced", "[ring]") {
  for (std::size_t cap : {4096u, 65536u}) {
    Block block(cap);
    ch::RingProducer prod(block.c(), {});
    ch::RingConsumer cons(block.c());
    const std::size_t maxp = prod.max_payload();
    INFO("capacity " << cap);
    CHECK(vcx::event_record_size(maxp, vcx::kEventTimed) == cap / 4);

    CHECK(prod.begin(Model::Example, 1, 0, maxp + 1) == nullptr);
    CHECK(block.c()->head.load() == 0);
    CHECK(prod.last_seq() == 0);

    // Records of the largest size, enough to wrap several times.
    for (std::uint64_t s = 1; s <= 20; ++s) {
      auto* p = static_cast<std::uint8_t*>(prod.begin(Model::Example, 9, 0, maxp));
      REQUIRE(p != nullptr);
      std::memset(p, static_cast<int>(s), maxp);
      REQUIRE(prod.commit() == s);
      const EventHeader* h = cons.peek();
      REQUIRE(h != nullptr);
      REQUIRE(h->seq == s);
      REQUIRE(h->payload_size == maxp);
      const auto* q = reinterpret_cast<const std::uint8_t*>(h + 1);
      REQUIRE(q[0] == static_cast<std::uint8_t>(s));
      REQUIRE(q[maxp - 1] == static_cast<std::uint8_t>(s));
      cons.pop();
    }
    // A zero-length payload is a record of its own.
    REQUIRE(prod.begin(Model::Example, 2, 0, 0) != nullptr);
    REQUIRE(prod.commit() == 21);
    const EventHeader* h = cons.peek();
    REQUIRE(h != nullptr);
    CHECK(h->size == sizeof(EventHeader));
    CHECK(h->payload_size == 0);
  }
}

TEST_CASE("ring: a timed record carries its timing after the payload", "[ring]") {
  Block block(4096);
  ch::RingProducer prod(block.c(), {});
  ch::RingConsumer cons(block.c());
  // Payload sizes of every alignment, the largest, and wrapping many times.
  const std::size_t sizes[] = {0, 1, 7, 8, 9, 13, 16, 100, prod.max_payload()};
  std::uint64_t seq = 0;
  for (int round = 0; round < 40; ++round) {
    for (std::size_t n : sizes) {
      auto* p = static_cast<std::uint8_t*>(prod.begin(Model::Example, 3, vcx::kEventTimed, n));
      REQUIRE(p != nullptr);
      std::memset(p, 0xab, n);
      const vcx::EventTiming t{1000 + seq, 2000 + seq};
      std::memcpy(p + vcx::timed_payload_offset(n), &t, sizeof t);
      REQUIRE(prod.commit() == ++seq);
      const EventHeader* h = cons.peek();
      REQUIRE(h != nullptr);
      INFO("payload " << n);
      REQUIRE(h->payload_size == n);
      REQUIRE(h->size == vcx::event_record_size(n, vcx::kEventTimed));
      const vcx::EventTiming* got = vcx::event_timing(*h);
      REQUIRE(got != nullptr);
      CHECK(got->enter_ns == 1000 + seq - 1);
      CHECK(got->previous_leave_ns == 2000 + seq - 1);
      if (n) CHECK(reinterpret_cast<const std::uint8_t*>(h + 1)[n - 1] == 0xab);
      cons.pop();
    }
  }
  // An untimed record has none, nor has one whose size cannot hold it.
  REQUIRE(prod.begin(Model::Example, 3, 0, 8) != nullptr);
  prod.commit();
  CHECK(vcx::event_timing(*cons.peek()) == nullptr);
  EventHeader forged{};
  forged.flags = vcx::kEventTimed;
  forged.size = sizeof forged + 8;
  CHECK(vcx::event_timing(forged) == nullptr);
}

// ---------------------------------------------------------------------------
// Backpressure

TEST_CASE("ring: a full ring makes the producer wait, and nothing is dropped", "[ring]") {
  constexpr std::size_t kCap = 4096;
  constexpr std::uint64_t kRecords = 400;
  Block block(kCap);
  HookState hooks;
  // Fixed 200-byte payloads: about 18 records fill the ring.
  ch::RingProducer prod(block.c(), hooks_for(hooks), ch::WaitPolicy{1'000, 5'000'000});
  ch::RingConsumer cons(block.c());
  std::atomic<std::uint64_t> produced{0};
  std::string producer_error;
  auto push = [&](std::uint64_t s) {
    auto* p = static_cast<std::uint8_t*>(prod.begin(Model::Example, 5, 0, 200));
    if (!p) return false;
    std::memset(p, static_cast<int>(s & 0xff), 200);
    std::memcpy(p, &s, sizeof s);
    return prod.commit() == s;
  };
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
    cons.pop();
    return "";
  };

  CHECK(block.c()->backpressure_ns.load() == 0);
  Worker w(hooks, block.c(), [&] {
    for (std::uint64_t s = 1; s <= kRecords; ++s) {
      if (!push(s)) {
        producer_error = "push failed at " + std::to_string(s);
        return;
      }
      produced = s;
    }
  });

  // First stall: nothing is consumed until the producer sleeps for space.
  REQUIRE(eventually([&] { return block.c()->producer_waiting.load() == 1; }));
  const std::uint64_t stuck_at = produced.load();
  CHECK(stuck_at < kRecords);
  CHECK(block.c()->head.load() - block.c()->tail.load() <= kCap);
  // The producer stays stuck: it cannot have pushed more than fits.
  CHECK(stuck_at * vcx::event_record_size(200) <= kCap);

  // Consume well past one ring's worth, then pause again.
  std::uint64_t next = 1;
  for (; next <= 150; ++next) REQUIRE(take(next) == "");
  REQUIRE(eventually([&] { return block.c()->producer_waiting.load() == 1; }));
  const std::uint64_t bp1 = block.c()->backpressure_ns.load();
  CHECK(bp1 > 0);  // at least the first stall is accounted for

  for (; next <= kRecords; ++next) REQUIRE(take(next) == "");
  w.stop();
  REQUIRE(producer_error == "");
  CHECK(produced.load() == kRecords);
  CHECK(cons.peek() == nullptr);
  CHECK(block.c()->backpressure_ns.load() > bp1);
}

TEST_CASE("ring: a producer waiting for space gives up when the tool fails", "[ring]") {
  constexpr std::size_t kCap = 4096;
  Block block(kCap);
  HookState hooks;
  // Long liveness interval: only the wake-up from set_tool_state can end the wait soon.
  ch::RingProducer prod(block.c(), hooks_for(hooks), ch::WaitPolicy{1'000, 60'000'000'000ULL});
  ch::RingConsumer cons(block.c());
  std::atomic<std::uint64_t> failed_at{0};
  const auto start = Clock::now();
  {
    Worker w(hooks, block.c(), [&] {
      for (std::uint64_t s = 1; s < 1000; ++s) {
        if (!prod.begin(Model::Example, 1, 0, 100)) {
          failed_at = s;
          return;
        }
        prod.commit();
      }
    });
    REQUIRE(eventually([&] { return block.c()->producer_waiting.load() == 1; }));
    cons.set_tool_state(ch::ToolState::Failed);
    REQUIRE(eventually([&] { return failed_at.load() != 0; }, 20));
  }
  CHECK(Clock::now() - start < std::chrono::seconds(15));
  // Everything pushed before the failure is still there, in order.
  const std::uint64_t pushed = failed_at.load() - 1;
  CHECK(pushed * vcx::event_record_size(100) <= kCap);
  for (std::uint64_t s = 1; s <= pushed; ++s) {
    const EventHeader* h = cons.peek();
    REQUIRE(h != nullptr);
    REQUIRE(h->seq == s);
    cons.pop();
  }
  CHECK(cons.peek() == nullptr);
}

TEST_CASE("ring: a producer waiting for space gives up when tool_alive says so", "[ring]") {
  Block block(4096);
  HookState hooks;
  ch::RingProducer prod(block.c(), hooks_for(hooks), ch::WaitPolicy{1'000, 2'000'000});
  std::atomic<std::uint64_t> failed_at{0};
  std::thread t([&] {
    for (std::uint64_t s = 1; s < 1000; ++s) {
      if (!prod.begin(Model::Example, 1, 0, 100)) {
        failed_at = s;
        return;
      }
      prod.commit();
    }
  });
  const bool waited = eventually([&] { return block.c()->producer_waiting.load() == 1; });
  hooks.alive = false;
  const bool gave_up = eventually([&] { return failed_at.load() != 0; }, 30);
  if (!gave_up) {
    // Unstick the thread before failing so that it can be joined.
    ch::RingConsumer(block.c()).set_tool_state(ch::ToolState::Failed);
  }
  t.join();
  CHECK(waited);
  CHECK(gave_up);
  CHECK(failed_at.load() > 1);
}

// Hysteresis: a producer that found the ring full sleeps until the ring has
// drained to ring_low_water(); the consumer wakes it once then, and makes no
// system call at the pops before. Every wake-up bumps space_futex, so its
// change counts them.

TEST_CASE("ring: a waiting producer is woken once, when the ring has drained to half", "[ring]") {
  constexpr std::size_t kCap = 4096;
  // 128-byte records: 32 fill the ring exactly.
  constexpr std::size_t kPayload = 128 - sizeof(vcx::EventHeader);
  static_assert(vcx::event_record_size(kPayload) == 128);
  Block block(kCap);
  ch::RingProducer prod(block.c(), {});
  ch::RingConsumer cons(block.c());
  for (std::uint64_t s = 1; s <= kCap / 128; ++s) {
    REQUIRE(prod.begin(Model::Example, 1, 0, kPayload) != nullptr);
    REQUIRE(prod.commit() == s);
  }
  REQUIRE(block.c()->head.load() - block.c()->tail.load() == kCap);

  // What wait_for_space() publishes before it sleeps.
  block.c()->producer_waiting.store(1);
  const std::uint32_t f0 = block.c()->space_futex.load();
  std::uint64_t seq = 1;
  for (; block.c()->head.load() - block.c()->tail.load() - 128 > ch::ring_low_water(kCap); ++seq) {
    const EventHeader* h = cons.peek();
    REQUIRE(h != nullptr);
    REQUIRE(h->seq == seq);
    cons.pop();
    INFO("after popping record " << seq);
    CHECK(block.c()->space_futex.load() == f0);
    CHECK(block.c()->producer_waiting.load() == 1);
    CHECK(cons.producer_wakes() == 0);
  }
  CHECK(seq == 16);  // 15 records popped, 17 left: above half
  // The pop that brings the ring down to half wakes the producer, once.
  const EventHeader* h = cons.peek();
  REQUIRE(h != nullptr);
  REQUIRE(h->seq == seq);
  cons.pop();
  CHECK(block.c()->head.load() - block.c()->tail.load() == ch::ring_low_water(kCap));
  CHECK(block.c()->space_futex.load() == f0 + 1);
  CHECK(block.c()->producer_waiting.load() == 0);
  CHECK(cons.producer_wakes() == 1);
  // Nobody waits any more: the remaining pops make no wake-up.
  while (cons.peek()) cons.pop();
  CHECK(block.c()->space_futex.load() == f0 + 1);
  CHECK(cons.producer_wakes() == 1);
}

TEST_CASE("ring: a producer blocked on a full ring resumes at the low-water mark, not before",
          "[ring]") {
  constexpr std::size_t kCap = 4096;
  // 128-byte records: 32 fill the ring exactly.
  constexpr std::size_t kPayload = 128 - sizeof(vcx::EventHeader);
  constexpr std::uint64_t kRecords = 200;
  Block block(kCap);
  HookState hooks;
  // A long liveness interval: only the consumer's wake-up ends the producer's sleep.
  ch::RingProducer prod(block.c(), hooks_for(hooks), ch::WaitPolicy{1'000, 60'000'000'000ULL});
  ch::RingConsumer cons(block.c());
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
    if (h->seq != s || got != s || h->payload_size != kPayload)
      return "record " + std::to_string(s) + " damaged or out of order";
    cons.pop();
    return "";
  };
  Worker w(hooks, block.c(), [&] {
    for (std::uint64_t s = 1; s <= kRecords; ++s) {
      auto* p = static_cast<std::uint8_t*>(prod.begin(Model::Example, 5, 0, kPayload));
      if (!p) {
        producer_error = "push failed at " + std::to_string(s);
        return;
      }
      std::memcpy(p, &s, sizeof s);
      if (prod.commit() != s) {
        producer_error = "wrong seq at " + std::to_string(s);
        return;
      }
      produced = s;
    }
  });

  REQUIRE(eventually([&] { return block.c()->producer_waiting.load() == 1; }));
  CHECK(produced.load() == kCap / 128);  // exactly full
  const std::uint32_t f0 = block.c()->space_futex.load();
  // 15 records out, 17 left (above half): room for a record, but the producer
  // stays asleep and cannot have pushed anything.
  std::uint64_t next = 1;
  for (; next <= 15; ++next) REQUIRE(take(next) == "");
  CHECK(block.c()->space_futex.load() == f0);
  CHECK(cons.producer_wakes() == 0);
  CHECK(produced.load() == kCap / 128);
  CHECK(block.c()->head.load() - block.c()->tail.load() == 17 * 128);
  // The 16th brings the ring to half: one wake-up, and the producer goes on.
  REQUIRE(take(next++) == "");
  CHECK(cons.producer_wakes() == 1);
  CHECK(block.c()->space_futex.load() == f0 + 1);
  REQUIRE(eventually([&] { return produced.load() > kCap / 128; }));

  for (; next <= kRecords; ++next) REQUIRE(take(next) == "");
  w.stop();
  REQUIRE(producer_error == "");
  CHECK(produced.load() == kRecords);
  CHECK(cons.peek() == nullptr);
}

TEST_CASE("ring: under a flood, producer wake-ups are bounded by half rings drained, not records",
          "[ring]") {
  constexpr std::size_t kCap = 65536;
  constexpr std::size_t kPayload = 64 - sizeof(vcx::EventHeader);  // 64-byte records, no padding
  constexpr std::uint64_t kRecord = 64;
  constexpr std::uint64_t kRecords = 300'000;
  static_assert(vcx::event_record_size(kPayload) == kRecord);
  Block block(kCap);
  HookState hooks;
  ch::RingProducer prod(block.c(), hooks_for(hooks), ch::WaitPolicy{2'000, 60'000'000'000ULL});
  ch::RingConsumer cons(block.c());
  const std::uint32_t f0 = block.c()->space_futex.load();
  std::string producer_error, consumer_error;
  std::uint64_t wakes = 0, futex_bumps = 0;
  {
    Worker w(hooks, block.c(), [&] {
      for (std::uint64_t s = 1; s <= kRecords; ++s) {
        auto* p = static_cast<std::uint8_t*>(prod.begin(Model::Example, 5, 0, kPayload));
        if (!p) {
          producer_error = "push failed at " + std::to_string(s);
          return;
        }
        std::memcpy(p, &s, sizeof s);
        std::memcpy(p + kPayload - sizeof s, &s, sizeof s);
        prod.commit();
      }
    });
    const Deadline d(60);
    for (std::uint64_t s = 1; s <= kRecords && consumer_error.empty();) {
      const EventHeader* h = cons.peek();
      if (!h) {
        if (d.passed()) consumer_error = "timed out waiting for " + std::to_string(s);
        std::this_thread::yield();
        continue;
      }
      std::uint64_t first = 0, last = 0;
      std::memcpy(&first, h + 1, sizeof first);
      std::memcpy(&last, reinterpret_cast<const std::uint8_t*>(h + 1) + kPayload - sizeof last,
                  sizeof last);
      if (h->seq != s || first != s || last != s)
        consumer_error = "record " + std::to_string(s) + " damaged or out of order";
      cons.pop();
      ++s;
    }
    // Read before stop(): its nudge bumps the futex word too.
    wakes = cons.producer_wakes();
    futex_bumps = block.c()->space_futex.load() - f0;
    w.stop();
  }
  REQUIRE(consumer_error == "");
  REQUIRE(producer_error == "");
  CHECK(cons.peek() == nullptr);
  CHECK(futex_bumps == wakes);
  // A producer sleeps only on a full ring and resumes at half, so between two
  // waits it pushed at least half a ring less one record; each wait takes at
  // most two wake-ups (one may race with its own ending).
  const std::uint64_t waits_at_most = kRecords * kRecord / (kCap / 2 - kRecord) + 1;
  INFO("wake-ups " << futex_bumps << " for " << kRecords << " records");
  CHECK(futex_bumps <= 2 * waits_at_most);
}

// ---------------------------------------------------------------------------
// Sleep/wake handshake

TEST_CASE("ring: prepare_sleep refuses while a record is present", "[ring]") {
  Block block(4096);
  HookState hooks;
  ch::RingProducer prod(block.c(), hooks_for(hooks));
  ch::RingConsumer cons(block.c());

  REQUIRE(cons.prepare_sleep());
  CHECK(block.c()->consumer_sleeping.load() == 1);
  cons.end_sleep();
  CHECK(block.c()->consumer_sleeping.load() == 0);

  REQUIRE(prod.begin(Model::Example, 1, 0, 16));
  prod.commit();
  CHECK_FALSE(cons.prepare_sleep());
  CHECK(block.c()->consumer_sleeping.load() == 0);  // the announcement is withdrawn

  // Peeked but not popped: still present.
  REQUIRE(cons.peek() != nullptr);
  CHECK_FALSE(cons.prepare_sleep());
  cons.pop();
  CHECK(cons.prepare_sleep());
  cons.end_sleep();
  CHECK(hooks.wakes.load() == 0);  // nobody slept while a record came in
}

TEST_CASE("ring: a commit calls the wake hook exactly when the consumer announced sleep",
          "[ring]") {
  Block block(4096);
  HookState hooks;
  ch::RingProducer prod(block.c(), hooks_for(hooks));
  ch::RingConsumer cons(block.c());
  auto push = [&] {
    REQUIRE(prod.begin(Model::Example, 1, 0, 8));
    prod.commit();
  };

  push();  // consumer awake: no wake-up
  CHECK(hooks.wakes.load() == 0);
  while (cons.peek()) cons.pop();

  REQUIRE(cons.prepare_sleep());
  push();  // consumer asleep: exactly one wake-up, and the flag is consumed
  CHECK(hooks.wakes.load() == 1);
  CHECK(block.c()->consumer_sleeping.load() == 0);
  push();  // already woken: no second call
  push();
  CHECK(hooks.wakes.load() == 1);
  cons.end_sleep();

  CHECK_FALSE(cons.prepare_sleep());  // records pending
  while (cons.peek()) cons.pop();
  REQUIRE(cons.prepare_sleep());
  push();
  CHECK(hooks.wakes.load() == 2);
  cons.end_sleep();

  // A consumer that announced sleep and then took it back is not woken.
  while (cons.peek()) cons.pop();
  REQUIRE(cons.prepare_sleep());
  cons.end_sleep();
  push();
  CHECK(hooks.wakes.load() == 2);
}

TEST_CASE("ring: a lazily sleeping consumer is woken for a record waited for, or a full "
          "sixteenth of the ring, only",
          "[ring]") {
  constexpr std::size_t kCap = 4096;
  Block block(kCap);
  HookState hooks;
  ch::RingProducer prod(block.c(), hooks_for(hooks));
  ch::RingConsumer cons(block.c());
  auto push = [&](std::uint32_t flags) {
    REQUIRE(prod.begin(Model::Example, 1, flags, 8));
    prod.commit();
  };
  const std::uint64_t record = vcx::event_record_size(8);
  // The record that makes the unread part reach a sixteenth wakes it.
  const std::uint64_t lazy_records = (ch::ring_lazy_wake_bytes(kCap) + record - 1) / record;
  REQUIRE(lazy_records >= 2);

  REQUIRE(cons.prepare_sleep(true));
  CHECK(block.c()->consumer_sleeping.load() == ch::kConsumerSleepingLazily);
  // Records nobody waits for leave it asleep until a sixteenth is unread.
  for (std::uint64_t i = 1; i < lazy_records; ++i) push(0);
  CHECK(hooks.wakes.load() == 0);
  CHECK(block.c()->consumer_sleeping.load() == ch::kConsumerSleepingLazily);
  push(0);
  CHECK(hooks.wakes.load() == 1);
  CHECK(block.c()->consumer_sleeping.load() == ch::kConsumerAwake);
  cons.end_sleep();
  while (cons.peek()) cons.pop();

  // A record the application waits for wakes it at once, in either kind.
  for (const std::uint32_t flags : {std::uint32_t{vcx::kEventNeedsReply},
                                    std::uint32_t{vcx::kEventAlwaysReply}}) {
    const std::uint64_t before = hooks.wakes.load();
    REQUIRE(cons.prepare_sleep(true));
    push(0);
    CHECK(hooks.wakes.load() == before);
    push(flags);
    CHECK(hooks.wakes.load() == before + 1);
    cons.end_sleep();
    while (cons.peek()) cons.pop();
  }

  // A lazy sleeper still refuses to sleep over unread records.
  push(0);
  CHECK_FALSE(cons.prepare_sleep(true));
  CHECK(block.c()->consumer_sleeping.load() == ch::kConsumerAwake);
}

TEST_CASE("ring: a consumer sleeping on an eventfd woken by the hook never misses a record",
          "[ring]") {
  constexpr std::uint64_t kBursts = 3000;
  Block block(16384);
  HookState hooks;
  hooks.efd = ::eventfd(0, EFD_CLOEXEC);
  REQUIRE(hooks.efd >= 0);
  ch::RingProducer prod(block.c(), hooks_for(hooks), ch::WaitPolicy{1'000, 5'000'000});
  ch::RingConsumer cons(block.c());
  const std::size_t maxp = prod.max_payload();

  // Burst sizes fixed up front so that the consumer knows when it is done.
  std::mt19937_64 rng(7);
  std::vector<std::uint64_t> burst(kBursts);
  std::uint64_t total = 0;
  for (auto& n : burst) total += n = 1 + rng() % 4;
  std::string producer_error;
  std::uint64_t sleeps = 0, wake_reads = 0, odd_reads = 0;
  std::string consumer_error;
  {
    Worker w(hooks, block.c(), [&] {
      std::uint64_t seq = 0;
      for (std::uint64_t b = 0; b < kBursts && hooks.alive; ++b) {
        // Half of the bursts land on a consumer known to be asleep; the
        // others race with it going to sleep.
        if (b % 2 == 0) {
          const Deadline d(10);
          while (block.c()->consumer_sleeping.load() == 0 && hooks.alive && !d.passed())
            std::this_thread::yield();
        }
        for (std::uint64_t i = 0; i < burst[b]; ++i) {
          if (!produce(prod, ++seq)) {
            producer_error = "push failed at " + std::to_string(seq);
            return;
          }
        }
      }
    });

    std::uint64_t next = 1;
    for (;;) {
      while (const EventHeader* h = cons.peek()) {
        std::string e = check_record(h, next, maxp);
        if (!e.empty()) {
          consumer_error = e;
          break;
        }
        cons.pop();
        ++next;
      }
      if (!consumer_error.empty()) break;
      if (next > total) break;
      if (!cons.prepare_sleep()) continue;
      ++sleeps;
      pollfd pfd{hooks.efd, POLLIN, 0};
      if (::poll(&pfd, 1, 10'000) != 1) {
        consumer_error = "missed wake-up: slept 10 s with seq " + std::to_string(next) + " due";
        cons.end_sleep();
        break;
      }
      std::uint64_t v = 0;
      if (::read(hooks.efd, &v, sizeof v) != sizeof v) consumer_error = "eventfd read failed";
      ++wake_reads;
      if (v != 1) ++odd_reads;
      cons.end_sleep();
    }
    w.stop();
  }
  ::close(hooks.efd);
  REQUIRE(consumer_error == "");
  REQUIRE(producer_error == "");
  CHECK(block.c()->head.load() == block.c()->tail.load());
  CHECK(sleeps >= kBursts / 2);
  // One wake-up per sleep: never a lost one, never a spare one.
  CHECK(hooks.wakes.load() == sleeps);
  CHECK(wake_reads == sleeps);
  CHECK(odd_reads == 0);
}

// ---------------------------------------------------------------------------
// Replies and tool failure

TEST_CASE("ring: wait_reply returns once the tool replied, from another thread", "[ring]") {
  constexpr std::uint64_t kRounds = 2000;
  Block block(4096);
  HookState hooks;
  // No spinning: each wait exercises the futex sleep and the reply's wake-up.
  ch::RingProducer prod(block.c(), hooks_for(hooks), ch::WaitPolicy{0, 1'000'000'000ULL});
  ch::RingConsumer cons(block.c());
  std::atomic<std::uint64_t> replied{0};
  {
    Worker w(hooks, block.c(), [&] {
      while (hooks.alive && replied.load() < kRounds) {
        const EventHeader* h = cons.peek();
        if (!h) {
          std::this_thread::yield();
          continue;
        }
        const std::uint64_t s = h->seq;
        cons.pop();
        // Sometimes reply only once the producer is really asleep.
        if (s % 3 == 0) {
          const Deadline d(10);
          while (block.c()->app_sleeping.load() == 0 && !d.passed()) std::this_thread::yield();
        }
        cons.reply(s);
        replied = s;
      }
      // Leaving early: let the waiting producer see a dead tool instead of hanging.
      if (replied.load() < kRounds) hooks.alive = false;
    });
    for (std::uint64_t s = 1; s <= kRounds; ++s) {
      REQUIRE(prod.begin(Model::Example, 1, vcx::kEventNeedsReply, 8));
      REQUIRE(prod.commit() == s);
      REQUIRE(prod.wait_reply(s) == ch::WaitResult::Ok);
      REQUIRE(block.c()->replied_seq.load() >= s);
    }
  }
  CHECK(block.c()->app_sleeping.load() == 0);
  CHECK(block.c()->stall_ns.load() > 0);
}

TEST_CASE("ring: a reply answers every earlier event too", "[ring]") {
  Block block(4096);
  ch::RingProducer prod(block.c(), {}, ch::WaitPolicy{0, 1'000'000});
  ch::RingConsumer cons(block.c());
  for (int i = 0; i < 5; ++i) {
    REQUIRE(prod.begin(Model::Example, 1, vcx::kEventNeedsReply, 0));
    prod.commit();
  }
  cons.reply(4);
  CHECK(prod.wait_reply(1) == ch::WaitResult::Ok);
  CHECK(prod.wait_reply(4) == ch::WaitResult::Ok);
  cons.reply(2);  // an older reply never moves the mark back
  CHECK(block.c()->replied_seq.load() == 4);
}

TEST_CASE("ring: wait_reply reports ToolGone when tool_alive says false", "[ring]") {
  Block block(4096);
  HookState hooks;
  hooks.alive = false;
  ch::RingProducer prod(block.c(), hooks_for(hooks), ch::WaitPolicy{0, 60'000'000'000ULL});
  REQUIRE(prod.begin(Model::Example, 1, vcx::kEventNeedsReply, 0));
  const std::uint64_t s = prod.commit();
  const auto start = Clock::now();
  CHECK(prod.wait_reply(s) == ch::WaitResult::ToolGone);
  // The liveness hook is asked before sleeping, not after a minute.
  CHECK(Clock::now() - start < std::chrono::seconds(30));
  CHECK(block.c()->app_sleeping.load() == 0);
}

TEST_CASE("ring: wait_reply reports ToolGone when the tool fails while it sleeps", "[ring]") {
  Block block(4096);
  HookState hooks;
  ch::RingProducer prod(block.c(), hooks_for(hooks), ch::WaitPolicy{0, 60'000'000'000ULL});
  ch::RingConsumer cons(block.c());
  REQUIRE(prod.begin(Model::Example, 1, vcx::kEventNeedsReply, 0));
  const std::uint64_t s = prod.commit();
  const auto start = Clock::now();
  std::atomic<bool> returned{false};
  std::thread tool([&] {
    eventually([&] { return block.c()->app_sleeping.load() == 1; });
    cons.set_tool_state(ch::ToolState::Failed);
    // Hang guard: a sleeper that was not woken is ended through its liveness hook.
    if (!eventually([&] { return returned.load(); }, 20)) {
      hooks.alive = false;
      nudge(block.c());
    }
  });
  const ch::WaitResult r = prod.wait_reply(s);
  returned = true;
  tool.join();
  CHECK(r == ch::WaitResult::ToolGone);
  // Only the wake-up from set_tool_state can end the wait this early.
  CHECK(Clock::now() - start < std::chrono::seconds(15));
  CHECK(block.c()->tool_state.load() == static_cast<std::uint32_t>(ch::ToolState::Failed));
}

TEST_CASE("ring: wait_reply on an answered event returns without waiting", "[ring]") {
  Block block(4096);
  HookState hooks;
  hooks.alive = false;  // would report ToolGone if it ever checked
  ch::RingProducer prod(block.c(), hooks_for(hooks), ch::WaitPolicy{0, 1'000'000});
  ch::RingConsumer cons(block.c());
  REQUIRE(prod.begin(Model::Example, 1, vcx::kEventNeedsReply, 0));
  const std::uint64_t s = prod.commit();
  cons.reply(s);
  CHECK(prod.wait_reply(s) == ch::WaitResult::Ok);
}

// ---------------------------------------------------------------------------
// Attaching over the tool's Unix socket

namespace {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "vcx-ring-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

int listen_on(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 4) != 0) {
    ::close(fd);
    throw std::runtime_error("bind/listen " + path);
  }
  return fd;
}

// A one-connection tool: accepts, reads the hello, then lets `respond` act.
// Everything it observes is checked by the test after join().
struct MiniTool {
  std::string path;
  int listen_fd = -1;
  std::thread thread;
  ch::AttachHello hello{};
  bool got_hello = false;
  bool saw_eof = false;
  std::string error;

  void start(std::function<void(int fd)> respond, int delay_ms = 0) {
    thread = std::thread([this, respond, delay_ms] {
      if (delay_ms) {
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
        listen_fd = listen_on(path);
      }
      pollfd pfd{listen_fd, POLLIN, 0};
      if (::poll(&pfd, 1, 10'000) != 1) {
        error = "no connection";
        return;
      }
      const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        error = "accept failed";
        return;
      }
      got_hello = ch::read_full(fd, &hello, sizeof hello);
      if (got_hello) respond(fd);
      // The application's end of the socket closes when it detaches or gives up.
      pollfd cp{fd, POLLIN, 0};
      if (::poll(&cp, 1, 10'000) == 1) {
        char b;
        saw_eof = ::recv(fd, &b, 1, 0) == 0;
      }
      ::close(fd);
    });
  }
  void join() {
    if (thread.joinable()) thread.join();
    if (listen_fd >= 0) ::close(listen_fd);
    listen_fd = -1;
  }
  ~MiniTool() { join(); }
};

ch::AttachHello make_hello() {
  ch::AttachHello h{};
  h.magic = ch::kAttachMagic;
  h.version = ch::kAttachVersion;
  h.world_rank = 3;
  h.world_size = 8;
  h.pid = ::getpid();
  h.model = static_cast<std::uint16_t>(Model::Mpi);
  std::strncpy(h.token, "session-secret-42", sizeof h.token);
  return h;
}

ch::AttachReply make_reply(ch::AttachStatus st, const char* msg = "") {
  ch::AttachReply r{};
  r.magic = ch::kAttachMagic;
  r.status = st;
  std::strncpy(r.message, msg, sizeof r.message - 1);
  return r;
}

}  // namespace

TEST_CASE("attach: the application maps the tool's channel through the socket", "[ring][attach]") {
  TempDir dir;
  MiniTool tool;
  tool.path = dir / "tool.sock";
  tool.listen_fd = listen_on(tool.path);
  Block block(8192, ch::kModeNoStall);
  tool.start([&](int fd) {
    ch::AttachReply r = make_reply(ch::AttachStatus::Ok);
    r.mode_flags = ch::kModeNoStall;
    r.app_spin_ns = 1234;
    r.channel_bytes = block.raw().bytes;
    if (!ch::send_attach_reply(fd, r, block.raw().memfd)) tool.error = "send_attach_reply failed";
  });

  const ch::AttachHello hello = make_hello();
  ch::Attachment att;
  std::string err;
  const bool ok = ch::attach_to_tool(tool.path, hello, 10'000, &att, &err);
  INFO(err);
  REQUIRE(ok);
  REQUIRE(att.control != nullptr);
  CHECK(att.socket_fd >= 0);
  CHECK(att.mapped_bytes == block.raw().bytes);
  CHECK(ch::channel_valid(att.control, att.mapped_bytes));
  CHECK(att.control->ring_capacity == 8192);
  CHECK(att.control->flags == ch::kModeNoStall);
  CHECK(att.mode_flags == ch::kModeNoStall);
  CHECK(att.app_spin_ns == 1234);  // the tool decides how long its application polls
  // A separate mapping of the same memory, not a copy.
  CHECK(static_cast<void*>(att.control) != static_cast<void*>(block.c()));

  // What the application pushes through its mapping, the tool reads in its own.
  ch::RingProducer prod(att.control, {});
  ch::RingConsumer cons(block.c());
  REQUIRE(produce(prod, 1));
  REQUIRE(produce(prod, 2));
  CHECK(consume_range(cons, 1, 2, prod.max_payload(), 5) == "");

  ch::detach(&att);
  CHECK(att.control == nullptr);
  CHECK(att.socket_fd == -1);
  tool.join();
  CHECK(tool.error == "");
  REQUIRE(tool.got_hello);
  CHECK(tool.hello.magic == ch::kAttachMagic);
  CHECK(tool.hello.version == ch::kAttachVersion);
  CHECK(tool.hello.world_rank == 3);
  CHECK(tool.hello.world_size == 8);
  CHECK(tool.hello.pid == ::getpid());
  CHECK(std::string(tool.hello.token) == "session-secret-42");
  CHECK(tool.saw_eof);  // detaching closes the socket: the tool learns the app is gone
}

TEST_CASE("attach: a refusal reports the tool's reason", "[ring][attach]") {
  TempDir dir;
  MiniTool tool;
  tool.path = dir / "tool.sock";
  tool.listen_fd = listen_on(tool.path);
  tool.start([&](int fd) {
    ch::send_attach_reply(fd, make_reply(ch::AttachStatus::BadToken, "token of job 1234 expected"),
                          -1);
  });
  ch::Attachment att;
  std::string err;
  CHECK_FALSE(ch::attach_to_tool(tool.path, make_hello(), 10'000, &att, &err));
  CHECK(att.control == nullptr);
  CHECK(att.socket_fd == -1);
  CHECK_THAT(err, Catch::Matchers::Contains(ch::attach_status_name(ch::AttachStatus::BadToken)));
  CHECK_THAT(err, Catch::Matchers::Contains("token of job 1234 expected"));
  tool.join();
  CHECK(tool.error == "");
  CHECK(tool.saw_eof);  // the refused application does not keep the socket
}

TEST_CASE("attach: an answer without the right magic is rejected", "[ring][attach]") {
  TempDir dir;
  MiniTool tool;
  tool.path = dir / "tool.sock";
  tool.listen_fd = listen_on(tool.path);
  Block block(4096);
  tool.start([&](int fd) {
    ch::AttachReply r = make_reply(ch::AttachStatus::Ok);
    r.magic = 0x1234;
    r.channel_bytes = block.raw().bytes;
    ch::send_attach_reply(fd, r, block.raw().memfd);
  });
  ch::Attachment att;
  std::string err;
  CHECK_FALSE(ch::attach_to_tool(tool.path, make_hello(), 10'000, &att, &err));
  CHECK(att.control == nullptr);
  CHECK_THAT(err, Catch::Matchers::Contains(tool.path));
  tool.join();
}

TEST_CASE("attach: a missing socket fails after the bounded wait, naming the path",
          "[ring][attach]") {
  TempDir dir;
  const std::string path = dir / "nobody-listens.sock";
  ch::Attachment att;
  std::string err;
  const auto start = Clock::now();
  CHECK_FALSE(ch::attach_to_tool(path, make_hello(), 300, &att, &err));
  const auto elapsed = Clock::now() - start;
  CHECK(elapsed >= std::chrono::milliseconds(300));  // it did keep trying
  CHECK(elapsed < std::chrono::seconds(10));
  CHECK_THAT(err, Catch::Matchers::Contains(path));
  CHECK(att.control == nullptr);
}

TEST_CASE("attach: a stale socket nobody listens on fails after the bounded wait",
          "[ring][attach]") {
  TempDir dir;
  const std::string path = dir / "stale.sock";
  ::close(listen_on(path));  // the file stays, the listener is gone: ECONNREFUSED
  REQUIRE(fs::exists(path));
  ch::Attachment att;
  std::string err;
  const auto start = Clock::now();
  CHECK_FALSE(ch::attach_to_tool(path, make_hello(), 300, &att, &err));
  const auto elapsed = Clock::now() - start;
  CHECK(elapsed >= std::chrono::milliseconds(300));
  CHECK(elapsed < std::chrono::seconds(10));
  CHECK_THAT(err, Catch::Matchers::Contains(path));
}

TEST_CASE("attach: a tool that never answers fails after the bounded wait", "[ring][attach]") {
  TempDir dir;
  MiniTool tool;
  tool.path = dir / "tool.sock";
  tool.listen_fd = listen_on(tool.path);
  tool.start([](int) {});  // reads the hello, says nothing
  ch::Attachment att;
  std::string err;
  const auto start = Clock::now();
  CHECK_FALSE(ch::attach_to_tool(tool.path, make_hello(), 300, &att, &err));
  CHECK(Clock::now() - start < std::chrono::seconds(10));
  CHECK_THAT(err, Catch::Matchers::Contains(tool.path));
  CHECK_THAT(err, Catch::Matchers::Contains("no answer"));
  tool.join();
  CHECK(tool.got_hello);
  CHECK(tool.saw_eof);
}

TEST_CASE("attach: connecting retries until the tool's socket appears", "[ring][attach]") {
  TempDir dir;
  MiniTool tool;
  tool.path = dir / "late.sock";
  Block block(4096);
  tool.start(
      [&](int fd) {
        ch::AttachReply r = make_reply(ch::AttachStatus::Ok);
        r.channel_bytes = block.raw().bytes;
        ch::send_attach_reply(fd, r, block.raw().memfd);
      },
      /*delay_ms=*/150);
  ch::Attachment att;
  std::string err;
  const bool ok = ch::attach_to_tool(tool.path, make_hello(), 10'000, &att, &err);
  INFO(err);
  CHECK(ok);
  if (ok) {
    CHECK(ch::channel_valid(att.control, att.mapped_bytes));
    ch::detach(&att);
  }
  tool.join();
  CHECK(tool.error == "");
}
