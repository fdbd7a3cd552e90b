// Flags in the vclock engine (docs/clock-rules.md, "Flags"): a write is
// registered at the PE it writes to before it happens (FlagWrite; FlagValue
// when what it stored is known only later); a wait merges the writes
// registered before it whose value says they came before the value it read.
// Black box through the built plugin, over a network that interleaves the
// tools' messages at random; the clocks are stated by hand (the reference
// model does not know the order of registrations).
#include <catch2/catch.hpp>
#include <cstdint>

#include "support/engine_sim.h"

using namespace vcx;
using namespace vcx::sim;
using Catch::Matchers::Contains;

namespace {

constexpr std::uint64_t kFlag = 0xf1a9;

Op write_op(std::uint32_t target, std::uint64_t id, FlagMode mode, std::uint64_t value,
            unsigned width = 4, bool is_signed = true, std::uint64_t flag = kFlag) {
  Op op;
  op.kind = OpKind::FlagWrite;
  op.peer = Rank{target};
  op.queue = QueueId{flag, mode == kFlagPending ? 0 : value};
  op.value = id;
  op.flags = flag_bits(mode, width, is_signed);
  return op;
}

Op value_op(std::uint32_t target, std::uint64_t id, FlagMode mode, std::uint64_t value,
            unsigned width = 4, bool is_signed = true) {
  Op op;
  op.kind = OpKind::FlagValue;
  op.peer = Rank{target};
  op.queue = QueueId{kFlag, value};
  op.value = id;
  op.flags = flag_bits(mode, width, is_signed);
  return op;
}

Op wait_op(std::uint32_t self, std::uint64_t value, unsigned width = 4, bool is_signed = true,
           std::uint64_t flag = kFlag) {
  Op op;
  op.kind = OpKind::FlagWait;
  op.peer = Rank{self};
  op.queue = QueueId{flag, value};
  op.flags = flag_bits(kFlagPending, width, is_signed);
  return op;
}

// A data call that may write a flag: not clocked, answered once registered.
EngineSim::Submitted write(EngineSim& sim, std::uint32_t writer, const Op& op) {
  Prog p = Prog::unclocked(70);
  p.ops.push_back(op);
  return sim.submit(writer, p, true);
}
EngineSim::Submitted value(EngineSim& sim, std::uint32_t writer, const Op& op) {
  Prog p = Prog::unclocked(71);
  p.ops.push_back(op);
  return sim.submit(writer, p);
}
EngineSim::Submitted wait(EngineSim& sim, std::uint32_t waiter, const Op& op) {
  Prog p = Prog::clocked_call(72);
  p.ops.push_back(op);
  return sim.submit(waiter, p, true);
}

const Clock& clock_of(const EngineSim& sim, std::uint32_t r, const EngineSim::Submitted& s) {
  return sim.calls(r).at(static_cast<std::size_t>(s.call_index)).clock;
}

std::size_t deposits(EngineSim& sim, std::uint32_t r) {
  return static_cast<const vclock::VclockEngine&>(sim.engine(r)).flag_deposits();
}
std::size_t pooled(EngineSim& sim, std::uint32_t r) {
  return static_cast<const vclock::VclockEngine&>(sim.engine(r)).pooled_clocks_in_use();
}

}  // namespace

TEST_CASE("flags: a wait merges the stores of the value it read, registered before it",
          "[engine][flags]") {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(3, seed);
    sim.local(1);
    sim.local(1);
    write(sim, 1, write_op(0, 1, kFlagStore, 1));
    sim.local(2);
    write(sim, 2, write_op(0, 1, kFlagStore, 2));  // the same id at another writer
    sim.drain();
    const auto w1 = wait(sim, 0, wait_op(0, 1));
    const auto w2 = wait(sim, 0, wait_op(0, 2));
    const auto w3 = wait(sim, 0, wait_op(0, 3));  // nobody stored 3
    sim.drain();
    REQUIRE(sim.all_idle());
    CHECK(clock_of(sim, 0, w1) == Clock{1, 2, 0});
    CHECK(clock_of(sim, 0, w2) == Clock{2, 2, 1});
    CHECK(clock_of(sim, 0, w3) == Clock{3, 2, 1});
    CHECK(sim.calls(0).at(0).peers.size() == 1);
    CHECK(sim.check_all_replies().empty());
    CHECK(deposits(sim, 0) == 0);
    CHECK(pooled(sim, 0) == 0);
  }
}

TEST_CASE("flags: a write registered after the wait is not merged, even if stored already",
          "[engine][flags]") {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(2, seed);
    // The waiter's engine is held by an earlier receive; its wait is queued
    // (snapshot taken) before the write is registered.
    const QueueId q{7, 7};
    const auto early = sim.recv(0, 1, q);
    const auto w = wait(sim, 0, wait_op(0, 1));
    sim.drain();
    sim.local(1);
    write(sim, 1, write_op(0, 1, kFlagStore, 1));
    sim.drain();
    CHECK_FALSE(sim.engine(0).idle());
    sim.send(1, 0, q);
    sim.drain();
    REQUIRE(sim.all_idle());
    CHECK(clock_of(sim, 0, early) == Clock{1, 2});
    CHECK(clock_of(sim, 0, w) == Clock{2, 2});  // learnt rank 1 by the message only
    // A later wait of the same value merges it.
    const auto again = wait(sim, 0, wait_op(0, 1));
    sim.drain();
    CHECK(clock_of(sim, 0, again) == Clock{3, 2});
  }
}

TEST_CASE("flags: the writer's clock is the one at the write, and the wait waits for it",
          "[engine][flags]") {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(3, seed);
    const QueueId q{5, 5};
    // Rank 1's engine reaches the write only after a receive from rank 2.
    sim.recv(1, 2, q);
    write(sim, 1, write_op(0, 9, kFlagStore, 4));
    sim.local(1);  // after the write: never merged by the wait
    sim.drain();
    const auto w = wait(sim, 0, wait_op(0, 4));
    sim.drain();
    CHECK_FALSE(sim.engine(0).idle());
    CHECK_THAT(sim.engine(0).blocked_on(), Contains("the clock of a write of rank 1"));
    CHECK_FALSE(sim.engine(0).must_not_stall());
    sim.local(2);
    sim.send(2, 1, q);
    sim.drain();
    REQUIRE(sim.all_idle());
    CHECK(clock_of(sim, 0, w) == Clock{1, 1, 2});
  }
}

TEST_CASE("flags: the writer's reply waits for the registration", "[engine][flags]") {
  EngineSim sim(2, 3);
  const auto s = write(sim, 1, write_op(0, 1, kFlagStore, 1));
  // Nothing delivered yet: no reply may be given, even early.
  CHECK(sim.engine(1).replies_allowed_through() < s.event_seq);
  sim.run_all();
  CHECK(sim.host(1).replies.empty());
  sim.drain();
  CHECK(sim.engine(1).replies_allowed_through() >= s.event_seq);
  CHECK(sim.check_all_replies().empty());
  CHECK(sim.host(1).replies.size() == 1);
}

TEST_CASE("flags: counters merge every step not past the value read", "[engine][flags]") {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(4, seed);
    // Three increments registered (what they stored comes after the atomic).
    for (std::uint32_t r = 1; r <= 3; ++r) {
      sim.local(r);
      write(sim, r, write_op(0, 10 + r, kFlagPending, 0));
    }
    sim.drain();
    // Stored 1, 2 and 3, in the order ranks 2, 3, 1.
    value(sim, 2, value_op(0, 12, kFlagUp, 1));
    value(sim, 3, value_op(0, 13, kFlagUp, 2));
    const auto w = wait(sim, 0, wait_op(0, 2));  // read 2: rank 1's step came later
    sim.drain();
    CHECK_FALSE(sim.engine(0).idle());  // rank 1's value is not known yet
    CHECK_THAT(sim.engine(0).blocked_on(), Contains("what a write of rank 1 stored"));
    CHECK(sim.engine(0).must_not_stall());
    value(sim, 1, value_op(0, 11, kFlagUp, 3));
    sim.drain();
    REQUIRE(sim.all_idle());
    CHECK(clock_of(sim, 0, w) == Clock{1, 0, 1, 1});
    const auto all = wait(sim, 0, wait_op(0, 3));
    sim.drain();
    CHECK(clock_of(sim, 0, all) == Clock{2, 1, 1, 1});
    CHECK(deposits(sim, 0) == 0);
    CHECK(pooled(sim, 0) == 0);
  }
}

TEST_CASE("flags: down counters, signed and unsigned values, widths", "[engine][flags]") {
  EngineSim sim(4, 5);
  for (std::uint32_t r = 1; r <= 3; ++r) sim.local(r);
  // Counting down through zero as signed 8-byte values: 1, 0, -1.
  write(sim, 1, write_op(0, 1, kFlagDown, 1, 8, true));
  write(sim, 2, write_op(0, 1, kFlagDown, 0, 8, true));
  write(sim, 3, write_op(0, 1, kFlagDown, ~std::uint64_t{0}, 8, true));
  sim.drain();
  const auto w0 = wait(sim, 0, wait_op(0, 0, 8, true));
  sim.drain();
  CHECK(clock_of(sim, 0, w0) == Clock{1, 1, 1, 0});
  // Unsigned 2-byte values: 0xffff is above 1.
  write(sim, 1, write_op(0, 2, kFlagUp, 0xffff, 2, false, kFlag + 1));
  write(sim, 2, write_op(0, 2, kFlagUp, 1, 2, false, kFlag + 1));
  // A store of another width at the same flag is another variable.
  write(sim, 3, write_op(0, 2, kFlagStore, 1, 4, false, kFlag + 1));
  sim.drain();
  const auto u = wait(sim, 0, wait_op(0, 1, 2, false, kFlag + 1));
  sim.drain();
  CHECK(clock_of(sim, 0, u) == Clock{2, 1, 1, 0});
}

TEST_CASE("flags: a compare-and-swap that failed wrote nothing", "[engine][flags]") {
  EngineSim sim(3, 7);
  sim.local(1);
  sim.local(2);
  write(sim, 1, write_op(0, 1, kFlagPending, 0));
  write(sim, 2, write_op(0, 1, kFlagPending, 0));
  sim.drain();
  value(sim, 1, value_op(0, 1, kFlagNoWrite, 5));
  value(sim, 2, value_op(0, 1, kFlagStore, 5));
  const auto w = wait(sim, 0, wait_op(0, 5));
  sim.drain();
  REQUIRE(sim.all_idle());
  CHECK(clock_of(sim, 0, w) == Clock{1, 0, 1});
  CHECK(deposits(sim, 0) == 0);
  CHECK(pooled(sim, 0) == 0);
}

TEST_CASE("flags: a PE's own writes, and deposits below the clock are dropped",
          "[engine][flags]") {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(2, seed);
    sim.local(0);
    write(sim, 0, write_op(0, 1, kFlagStore, 3));
    sim.drain();
    const auto own = wait(sim, 0, wait_op(0, 3));
    sim.drain();
    CHECK(clock_of(sim, 0, own) == Clock{2, 0});
    // Rank 1 stores 8, which nobody waits for, then tells rank 0 by a
    // message: the deposit can no longer change rank 0's clock.
    sim.local(1);
    write(sim, 1, write_op(0, 2, kFlagStore, 8));
    sim.drain();
    CHECK(deposits(sim, 0) == 1);
    const QueueId q{3, 3};
    sim.send(1, 0, q);
    sim.recv(0, 1, q);
    sim.drain();
    const auto other = wait(sim, 0, wait_op(0, 9));  // prunes the flag
    sim.drain();
    REQUIRE(sim.all_idle());
    CHECK(clock_of(sim, 0, other) == Clock{4, 2});
    CHECK(deposits(sim, 0) == 0);
    CHECK(pooled(sim, 0) == 0);
  }
}

TEST_CASE("flags: many deposits nobody waits for are swept once below the clock",
          "[engine][flags]") {
  EngineSim sim(2, 11);
  sim.local(1);
  for (std::uint64_t i = 1; i <= 3000; ++i)
    write(sim, 1, write_op(0, i, kFlagStore, i, 4, true, kFlag + i));
  sim.drain();
  CHECK(deposits(sim, 0) == 3000);
  const QueueId q{3, 3};
  sim.send(1, 0, q);
  sim.recv(0, 1, q);  // a clocked call: the sweep runs after it
  sim.drain();
  REQUIRE(sim.all_idle());
  CHECK(deposits(sim, 0) == 0);
  CHECK(pooled(sim, 0) == 0);
}
