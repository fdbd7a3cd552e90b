// Lock leases in the vclock engine (engines/vclock/leases.cpp), black box
// through the built plugin, with the test playing each application's side
// of its lease table (vcx/channel/lease_table.h) as the MPI interceptor
// does: a lock nobody else wants is taken again under the lease, a request
// of another rank recalls it, and every clock is the one the lock rules give
// without leases (an exclusive acquisition merges every earlier release).
// The expected clocks are worked out by hand from those rules.
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <vector>

#include "support/engine_sim.h"
#include "support/lease_table_fixture.h"

using namespace vcx;
using namespace vcx::sim;
using namespace vcx::channel;

namespace {

constexpr std::uint64_t kRes = 0x77;
constexpr std::uint64_t kWin = 0x9001;  // the application's name of the window

// One application rank with its lease table, calling lock and unlock on
// (window kWin, target) as the interceptor would.
struct App {
  EngineSim& sim;
  std::uint32_t rank;
  LeaseTable& table;
  int held_slot = -1;

  EngineSim::Submitted lock(std::uint32_t target) {
    Op op;
    op.kind = OpKind::Acquire;
    op.peer = Rank{target};
    op.queue = QueueId{kRes, 0};
    op.lease_object = kWin;
    op.lease_target = target;
    held_slot = lease_acquire(table, kWin, target, 0);
    op.flags = held_slot >= 0 ? kResourceLeased : kResourceLeasable;
    Prog p = Prog::clocked_call(50);
    p.ops.push_back(op);
    return sim.submit(rank, p);
  }
  EngineSim::Submitted unlock(std::uint32_t target) {
    Op op;
    op.kind = OpKind::Release;
    op.peer = Rank{target};
    op.queue = QueueId{kRes, 0};
    const int slot = lease_held(table, kWin, target);
    if (slot >= 0) {
      op.flags = kResourceLeased;
      if (!lease_release(table, slot)) op.flags |= kResourceLeaseEnd;
    }
    Prog p = Prog::clocked_call(51);
    p.ops.push_back(op);
    return sim.submit(rank, p);
  }
  bool leased() const { return held_slot >= 0; }
};

Clock clock_of(const EngineSim& sim, std::uint32_t r, const EngineSim::Submitted& s) {
  return sim.calls(r).at(static_cast<std::size_t>(s.call_index)).clock;
}

}  // namespace

TEST_CASE("vclock leases: re-taken without messages, recalled idle and held, exact clocks",
          "[engine][lock][lease]") {
  for (std::uint64_t seed : {1u, 2u, 3u, 7u, 11u}) {
    INFO("delivery seed " << seed);
    EngineSim sim(3, seed);
    auto t1 = vcx::sim::fresh_lease_table();
    auto t2 = vcx::sim::fresh_lease_table();
    sim.host(1).leases = t1.get();
    sim.host(2).leases = t2.get();
    App a1{sim, 1, *t1};
    App a2{sim, 2, *t2};

    // Rank 1 takes rank 0's lock: granted with a lease, nobody else waits.
    const auto l1 = a1.lock(0);
    CHECK_FALSE(a1.leased());
    sim.drain();
    CHECK(lease_held(*t1, kWin, 0) >= 0);  // published before the lock returned
    const auto u1 = a1.unlock(0);
    const auto x1 = sim.local(1);
    sim.drain();
    const std::size_t before = sim.net().delivered();
    // Taken again under the lease: no message at all.
    const auto l2 = a1.lock(0);
    CHECK(a1.leased());
    const auto u2 = a1.unlock(0);
    sim.drain();
    CHECK(sim.net().delivered() == before);
    CHECK(sim.engine(1).leased_acquisitions() == 1);

    // Rank 2 asks: the deposition recalls the idle lease, rank 1's tool takes
    // it back and hands the lock on with the clock of rank 1's last unlock.
    const auto x2 = sim.local(2);
    const auto l3 = a2.lock(0);
    sim.drain();
    CHECK_FALSE(a2.leased());
    // Rank 1 asks again while rank 2 holds it: rank 2's lease is recalled
    // while held, and ends at rank 2's unlock.
    const auto l4 = a1.lock(0);
    CHECK_FALSE(a1.leased());
    sim.drain();
    const auto u3 = a2.unlock(0);
    sim.drain();
    const auto u4 = a1.unlock(0);
    sim.drain();
    CHECK(sim.all_idle());

    CHECK(clock_of(sim, 1, l1) == Clock{0, 1, 0});
    CHECK(clock_of(sim, 1, u1) == Clock{0, 2, 0});
    CHECK(clock_of(sim, 1, x1) == Clock{0, 3, 0});
    CHECK(clock_of(sim, 1, l2) == Clock{0, 4, 0});  // merges nothing: its own releases
    CHECK(clock_of(sim, 1, u2) == Clock{0, 5, 0});
    CHECK(clock_of(sim, 2, x2) == Clock{0, 0, 1});
    CHECK(clock_of(sim, 2, l3) == Clock{0, 5, 2});  // rank 1's last unlock under the lease
    CHECK(clock_of(sim, 2, u3) == Clock{0, 5, 3});
    CHECK(clock_of(sim, 1, l4) == Clock{0, 6, 3});  // rank 2's unlock that ended its lease
    CHECK(clock_of(sim, 1, u4) == Clock{0, 7, 3});
    // The recalled leases' slots are free again.
    CHECK(lease_state(t2->slots[0].word.load()) == kLeaseFree);
  }
}

TEST_CASE("vclock leases: a lease of the other kind is given back before a shared lock",
          "[engine][lock][lease]") {
  EngineSim sim(2, 5);
  auto t1 = vcx::sim::fresh_lease_table();
  sim.host(1).leases = t1.get();
  App a1{sim, 1, *t1};
  const auto l1 = a1.lock(0);  // exclusive, leased after
  sim.drain();
  const auto u1 = a1.unlock(0);
  sim.drain();
  // A shared lock of the same target: no lease matches, so the tool asks;
  // the deposition recalls this rank's own exclusive lease first.
  Op op;
  op.kind = OpKind::Acquire;
  op.peer = Rank{0};
  op.queue = QueueId{kRes, 0};
  op.flags = kResourceShared | kResourceLeasable;
  op.lease_object = kWin;
  CHECK(lease_acquire(*t1, kWin, 0, 1) == -1);
  Prog p = Prog::clocked_call(50);
  p.ops.push_back(op);
  const auto s1 = sim.submit(1, p);
  sim.drain();
  CHECK(clock_of(sim, 1, l1) == Clock{0, 1});
  CHECK(clock_of(sim, 1, u1) == Clock{0, 2});
  CHECK(clock_of(sim, 1, s1) == Clock{0, 3});
  CHECK(sim.engine(1).leased_acquisitions() == 0);
}
