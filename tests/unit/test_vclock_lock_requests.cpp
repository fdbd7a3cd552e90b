// LockRequests alone (engines/vclock/lock_requests.h): this process's side
// of locks held at depositions, and its leases, over a recording outbox.
// What must go out, and when, follows from the rules in the header: order
// requests as soon as a program is queued (one call's acquisitions one after
// the other), releases as soon as they are read but never before their
// grant, clocks when the engine reaches the calls, and a lease handed back
// with the clock of the last release made under it.
#include <catch2/catch.hpp>

#include <deque>
#include <vector>

#include "lock_requests.h"
#include "support/lease_table_fixture.h"
#include "support/recording_outbox.h"

namespace {

using vcx::ClockValue;
using vcx::Op;
using vcx::Rank;
using vcx::VectorClock;
using vcx::test::PartFatal;
using vcx::test::RecordingOutbox;
using vcx::vclock::ClockPool;
using vcx::vclock::LockRequests;
using vcx::vclock::MsgType;
using vcx::vclock::P2PHeader;
using Clock = std::vector<ClockValue>;

constexpr std::uint32_t kWidth = 3;
constexpr std::uint64_t kLock = 5;

P2PHeader from_deposition(MsgType type, std::uint64_t number, std::uint16_t flags = 0) {
  P2PHeader h{};
  h.type = type;
  h.flags = flags;
  h.queue_a = kLock;
  h.seq = number;
  return h;
}

struct Rig {
  explicit Rig(vcx::channel::LeaseTable* table = nullptr)
      : requests(pool, out, [table] { return table; }) {}
  ClockPool pool{kWidth};
  RecordingOutbox out{kWidth};
  LockRequests requests;
  std::deque<Op> ops;

  std::uint32_t queue(std::initializer_list<Op> program, std::uint64_t event_seq) {
    const std::size_t first = ops.size();
    ops.insert(ops.end(), program);
    return requests.request(ops, first, event_seq);
  }
};

}  // namespace

TEST_CASE("lock requests: one call's acquisitions are asked for one after the other",
          "[vclock-parts][lock-requests]") {
  Rig rig;
  const std::uint16_t shared = vcx::kResourceShared;
  CHECK(rig.queue({Op::acquire(Rank{1}, kLock, shared), Op::acquire(Rank{2}, kLock, shared)},
                  10) == 2);
  // Numbered in program order; only the first is asked for yet.
  CHECK(rig.ops[0].value == 1);
  CHECK(rig.ops[1].value == 2);
  auto asked = rig.out.of(MsgType::Acquire);
  REQUIRE(asked.size() == 1);
  CHECK(asked[0].dst == Rank{1});
  CHECK(asked[0].seq == 1);
  CHECK(asked[0].flags == shared);
  CHECK(rig.requests.waiting_for_grant(10) == Rank{1});

  CHECK(rig.requests.on_grant(Rank{1}, from_deposition(MsgType::Grant, 1, shared)) == 10);
  asked = rig.out.of(MsgType::Acquire);
  REQUIRE(asked.size() == 2);
  CHECK(asked[1].dst == Rank{2});
  CHECK(asked[1].seq == 2);
  CHECK(rig.requests.waiting_for_grant(10) == Rank{2});
  CHECK(rig.requests.on_grant(Rank{2}, from_deposition(MsgType::Grant, 2, shared)) == 10);
  CHECK_FALSE(rig.requests.waiting_for_grant(10).has_value());

  // The releases go back as soon as they are read, naming the holdings.
  CHECK(rig.queue({Op::release(Rank{1}, kLock, shared), Op::release(Rank{2}, kLock, shared)},
                  11) == 0);
  const auto released = rig.out.of(MsgType::Release);
  REQUIRE(released.size() == 2);
  CHECK(released[0].dst == Rank{1});
  CHECK(released[0].seq == 1);
  CHECK(released[1].dst == Rank{2});
  CHECK(released[1].seq == 2);
  CHECK(released[0].flags == shared);
}

TEST_CASE("lock requests: the acquisition merges its grant's clock, the release sends its own",
          "[vclock-parts][lock-requests]") {
  Rig rig;
  rig.queue({Op::acquire(Rank{1}, kLock, 0)}, 1);
  rig.requests.on_grant(Rank{1}, from_deposition(MsgType::Grant, 1));
  VectorClock clock(kWidth);
  clock[0] = 4;
  CHECK_FALSE(rig.requests.acquire(rig.ops[0], clock));  // its clock is not in yet
  const Clock granted{0, 7, 2};
  rig.requests.on_grant_clock(Rank{1}, from_deposition(MsgType::GrantClock, 1),
                              rig.pool.take_copy(granted));
  CHECK(rig.requests.pending_grants() == 1);
  REQUIRE(rig.requests.acquire(rig.ops[0], clock));
  CHECK(Clock(clock.view().begin(), clock.view().end()) == Clock{4, 7, 2});
  CHECK(rig.requests.pending_grants() == 0);

  rig.queue({Op::release(Rank{1}, kLock, 0)}, 2);
  clock[0] = 5;
  rig.requests.release(rig.ops[1], clock.view());
  const auto clocks = rig.out.of(MsgType::ReleaseClock);
  REQUIRE(clocks.size() == 1);
  CHECK(clocks[0].dst == Rank{1});
  CHECK(clocks[0].seq == 1);
  CHECK(clocks[0].clock == Clock{5, 7, 2});
  CHECK(rig.pool.in_use() == 0);
}

TEST_CASE("lock requests: a release read before its grant goes after it",
          "[vclock-parts][lock-requests]") {
  Rig rig;
  rig.queue({Op::acquire(Rank{2}, kLock, 0), Op::release(Rank{2}, kLock, 0)}, 1);
  CHECK(rig.out.of(MsgType::Release).empty());
  rig.requests.on_grant(Rank{2}, from_deposition(MsgType::Grant, 1));
  const auto released = rig.out.of(MsgType::Release);
  REQUIRE(released.size() == 1);
  CHECK(released[0].seq == 1);
  CHECK_THROWS_AS(rig.requests.on_grant(Rank{2}, from_deposition(MsgType::Grant, 9)), PartFatal);
}

TEST_CASE("lock requests: a lease keeps the lock until recalled, then gives it back with the "
          "last release's clock",
          "[vclock-parts][lock-requests]") {
  auto table = vcx::sim::fresh_lease_table();
  Rig rig(table.get());
  const std::uint64_t window = 77;
  const std::uint32_t target = 3;
  Op acquire = Op::acquire(Rank{1}, kLock, vcx::kResourceLeasable);
  acquire.lease_object = window;
  acquire.lease_target = target;
  rig.queue({acquire}, 1);
  REQUIRE(rig.out.of(MsgType::Acquire).size() == 1);
  CHECK((rig.out.of(MsgType::Acquire)[0].flags & vcx::kResourceLeasable) != 0);

  // Granted with a lease: published before the application goes on.
  rig.requests.on_grant(Rank{1}, from_deposition(MsgType::Grant, 1, vcx::kResourceLeasable));
  const int slot = vcx::channel::lease_held(*table, window, target);
  REQUIRE(slot >= 0);
  rig.requests.on_grant_clock(Rank{1}, from_deposition(MsgType::GrantClock, 1),
                              rig.pool.take_copy(Clock{0, 1, 0}));
  VectorClock clock(kWidth);
  REQUIRE(rig.requests.acquire(rig.ops[0], clock));

  // The application releases and takes it again under the lease, twice;
  // nothing goes to the deposition.
  const std::size_t sent_before = rig.out.sent.size();
  Clock last;
  for (ClockValue tick = 1; tick <= 2; ++tick) {
    REQUIRE(vcx::channel::lease_release(*table, slot));
    rig.queue({Op::release(Rank{1}, kLock, vcx::kResourceLeased)}, 2 * tick);
    clock[0] = 10 * tick;
    rig.requests.release(rig.ops.back(), clock.view());
    last = Clock(clock.view().begin(), clock.view().end());
    if (tick == 2) break;
    REQUIRE(vcx::channel::lease_acquire(*table, window, target, 0) == slot);
    rig.queue({Op::acquire(Rank{1}, kLock, vcx::kResourceLeased)}, 2 * tick + 1);
    CHECK(rig.ops.back().value == 1);  // the lease's holding
    REQUIRE(rig.requests.acquire(rig.ops.back(), clock));
  }
  CHECK(rig.out.sent.size() == sent_before);
  CHECK(rig.requests.leased_acquisitions() == 1);

  // Another process asks: the idle lease goes back, with the clock of the
  // last release made under it.
  rig.requests.on_recall(Rank{1}, from_deposition(MsgType::Recall, 1));
  const auto released = rig.out.of(MsgType::Release);
  REQUIRE(released.size() == 1);
  CHECK(released[0].seq == 1);
  const auto clocks = rig.out.of(MsgType::ReleaseClock);
  REQUIRE(clocks.size() == 1);
  CHECK(clocks[0].seq == 1);
  CHECK(clocks[0].clock == last);
  CHECK(vcx::channel::lease_held(*table, window, target) < 0);
  CHECK(rig.pool.in_use() == 0);
}
