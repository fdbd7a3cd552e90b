// Delay injection (VCX_CHAOS_DELAY_US): the DelayingTransport around a fake
// inner transport, on a real io_context. Messages to one destination keep
// their order, messages to different destinations get reordered, nothing is
// lost or changed, flushed() and close() hold back nothing.
//
// No result depends on timing: the reordering test uses delays of up to
// 100 ms for messages sent within far less, and waits only ever exceed the
// longest delay.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "vcx/delaying_transport.h"

namespace {

using vcx::ToolPart;
using vcx::Rank;

struct Sent {
  Rank dst;
  ToolPart part;
  std::vector<std::uint8_t> payload;
};

// Records what it is given; flushed() and polling as the test says.
class FakeTransport final : public vcx::ToolTransport {
 public:
  FakeTransport(Rank self, std::uint32_t size) : self_(self), size_(size) {}
  void send(Rank dst, ToolPart part, std::span<const std::uint8_t> payload) override {
    sent.push_back({dst, part, {payload.begin(), payload.end()}});
    ++stats_.messages_sent;
  }
  void set_handler(ToolPart, Handler) override {}
  Rank self() const override { return self_; }
  std::uint32_t size() const override { return size_; }
  void set_error_handler(ErrorHandler) override {}
  std::size_t poll() override {
    ++polls;
    return 0;
  }
  bool flushed() const override { return inner_flushed; }
  void close() override { closed_with = sent.size(); }
  const vcx::TransportStats& stats() const override { return stats_; }

  std::vector<Sent> sent;
  bool inner_flushed = true;
  std::size_t polls = 0;
  std::optional<std::size_t> closed_with;  // messages sent when close() came

 private:
  Rank self_;
  std::uint32_t size_;
  vcx::TransportStats stats_;
};

// Payload: destination, index among the messages to it, then filler bytes
// that depend on both, so that a mixed-up or cut payload shows.
std::vector<std::uint8_t> make_payload(std::uint32_t dst, std::uint32_t index) {
  std::vector<std::uint8_t> p(8 + (index * 7 + dst) % 61);
  std::memcpy(p.data(), &dst, 4);
  std::memcpy(p.data() + 4, &index, 4);
  for (std::size_t i = 8; i < p.size(); ++i) p[i] = static_cast<std::uint8_t>(i * 31 + index + dst);
  return p;
}

struct Decoded {
  std::uint32_t dst, index;
};
Decoded decode(const Sent& s) {
  Decoded d{};
  REQUIRE(s.payload.size() >= 8);
  std::memcpy(&d.dst, s.payload.data(), 4);
  std::memcpy(&d.index, s.payload.data() + 4, 4);
  return d;
}

struct Rig {
  vcx::asio::io_context io;
  FakeTransport* fake = nullptr;
  std::unique_ptr<vcx::DelayingTransport> delaying;

  Rig(std::uint64_t max_delay_us, std::uint64_t seed, std::uint32_t size = 4) {
    auto inner = std::make_unique<FakeTransport>(Rank{1}, size);
    fake = inner.get();
    delaying = std::make_unique<vcx::DelayingTransport>(io, std::move(inner), max_delay_us, seed);
  }

  // Sends `rounds` messages to every destination (itself included), round
  // robin, channels cycling; returns how many.
  std::size_t send_rounds(std::uint32_t rounds) {
    std::size_t n = 0;
    for (std::uint32_t i = 0; i < rounds; ++i)
      for (std::uint32_t d = 0; d < fake->size(); ++d) {
        const auto p = make_payload(d, i);
        delaying->send(Rank{d}, static_cast<ToolPart>((i + d) % vcx::kToolParts), p);
        ++n;
      }
    return n;
  }
};

// Every message arrived once, intact, at its destination, on its channel,
// and in sending order per destination.
void check_complete_and_fifo(const std::vector<Sent>& sent, std::uint32_t size,
                             std::uint32_t rounds) {
  REQUIRE(sent.size() == std::size_t{size} * rounds);
  std::vector<std::uint32_t> next(size, 0);
  for (const Sent& s : sent) {
    const Decoded d = decode(s);
    REQUIRE(d.dst == s.dst.value);
    REQUIRE(d.index == next[d.dst]);  // FIFO per destination, none lost or repeated
    ++next[d.dst];
    REQUIRE(s.part == static_cast<ToolPart>((d.index + d.dst) % vcx::kToolParts));
    REQUIRE(s.payload == make_payload(d.dst, d.index));
  }
}

// Some message overtook one sent earlier to another destination.
bool reordered_across_destinations(const std::vector<Sent>& sent, std::uint32_t size) {
  // Sending position of each arrival: index * size + dst (round robin).
  std::uint64_t latest = 0;
  bool first = true;
  for (const Sent& s : sent) {
    const Decoded d = decode(s);
    const std::uint64_t pos = std::uint64_t{d.index} * size + d.dst;
    if (!first && pos < latest) return true;
    latest = first ? pos : std::max(latest, pos);
    first = false;
  }
  return false;
}

}  // namespace

TEST_CASE("delayed messages keep per-destination order and get reordered across destinations",
          "[chaos]") {
  constexpr std::uint32_t kRounds = 50;
  Rig rig(100'000, 7);
  rig.send_rounds(kRounds);
  // Nothing leaves inside send(), not even a message drawn with no delay.
  CHECK(rig.fake->sent.empty());
  CHECK(rig.delaying->pending() == 4 * kRounds);
  CHECK_FALSE(rig.delaying->flushed());

  rig.io.run();  // returns once the timer has nothing left to wait for
  CHECK(rig.delaying->pending() == 0);
  CHECK(rig.delaying->flushed());
  check_complete_and_fifo(rig.fake->sent, 4, kRounds);
  CHECK(reordered_across_destinations(rig.fake->sent, 4));
  CHECK(rig.delaying->stats().messages_sent == 4 * kRounds);
}

TEST_CASE("the same holds for other seeds and for many small delays", "[chaos]") {
  for (std::uint64_t seed : {0ull, 1ull, 42ull, 0xFFFFFFFFFFFFFFFFull}) {
    Rig rig(500, seed, 3);
    rig.send_rounds(200);
    rig.io.run();
    check_complete_and_fifo(rig.fake->sent, 3, 200);
  }
}

TEST_CASE("flushed() waits for held messages and for the inner transport", "[chaos]") {
  Rig rig(1000, 3);
  CHECK(rig.delaying->flushed());
  rig.fake->inner_flushed = false;
  CHECK_FALSE(rig.delaying->flushed());
  rig.fake->inner_flushed = true;

  const std::uint8_t byte = 9;
  rig.delaying->send(Rank{2}, ToolPart::Control, {&byte, 1});
  CHECK_FALSE(rig.delaying->flushed());
  rig.io.run();
  REQUIRE(rig.fake->sent.size() == 1);
  CHECK(rig.delaying->flushed());
}

TEST_CASE("poll() hands over what is due without the event loop", "[chaos]") {
  Rig rig(1000, 5);
  rig.send_rounds(10);
  // Longer than the longest delay: everything is due.
  std::this_thread::sleep_for(std::chrono::milliseconds(3));
  rig.delaying->poll();
  CHECK(rig.fake->polls == 1);
  CHECK(rig.delaying->pending() == 0);
  check_complete_and_fifo(rig.fake->sent, 4, 10);
  rig.io.run();  // the timer armed for the first message finds nothing left
  CHECK(rig.fake->sent.size() == 40);
}

TEST_CASE("close() hands over every held message, in order, before closing the inner one",
          "[chaos]") {
  Rig rig(1'000'000, 11);
  rig.send_rounds(25);
  CHECK(rig.fake->sent.empty());
  rig.delaying->close();
  REQUIRE(rig.fake->closed_with == std::size_t{100});
  check_complete_and_fifo(rig.fake->sent, 4, 25);
  CHECK(rig.delaying->flushed());
  // The timer was cancelled: the loop has nothing left and sends nothing twice.
  rig.io.run();
  CHECK(rig.fake->sent.size() == 100);
  // After close, messages are not held back any more.
  const std::uint8_t byte = 1;
  rig.delaying->send(Rank{0}, ToolPart::Control, {&byte, 1});
  CHECK(rig.fake->sent.size() == 101);
}

TEST_CASE("a delaying transport destroyed with messages held leaves the loop harmless",
          "[chaos]") {
  vcx::asio::io_context io;
  {
    auto inner = std::make_unique<FakeTransport>(Rank{0}, 2);
    vcx::DelayingTransport t(io, std::move(inner), 1000, 1);
    const std::uint8_t byte = 1;
    t.send(Rank{1}, ToolPart::Exchange, {&byte, 1});
  }
  io.run();  // the cancelled wait completes without touching the transport
  SUCCEED();
}

TEST_CASE("VCX_CHAOS_DELAY_US and VCX_CHAOS_SEED are read strictly", "[chaos]") {
  vcx::ChaosSettings s;
  CHECK_FALSE(vcx::parse_chaos_settings(nullptr, nullptr, &s));
  CHECK(s.max_delay_us == 0);
  CHECK(s.seed == vcx::kDefaultChaosSeed);
  CHECK_FALSE(vcx::parse_chaos_settings("", "", &s));
  CHECK(s.max_delay_us == 0);

  CHECK_FALSE(vcx::parse_chaos_settings("2000", "12345678901234567890", &s));
  CHECK(s.max_delay_us == 2000);
  CHECK(s.seed == 12345678901234567890ull);
  CHECK_FALSE(vcx::parse_chaos_settings("1000000", nullptr, &s));
  CHECK(s.max_delay_us == 1'000'000);
  CHECK(s.seed == vcx::kDefaultChaosSeed);

  for (const char* bad : {"-1", "1e3", " 5", "5 ", "2ms", "abc", "1000001", "+5",
                          "99999999999999999999999"}) {
    const auto err = vcx::parse_chaos_settings(bad, nullptr, &s);
    REQUIRE(err);
    CHECK(err->rfind("VCX_CHAOS_DELAY_US must be a whole number of microseconds", 0) == 0);
    CHECK(err->find(std::string("'") + bad + "'") != std::string::npos);
  }
  for (const char* bad : {"-3", "x", "18446744073709551616", "0x10"}) {
    const auto err = vcx::parse_chaos_settings("100", bad, &s);
    REQUIRE(err);
    CHECK(err->rfind("VCX_CHAOS_SEED must be a whole number", 0) == 0);
  }
}
