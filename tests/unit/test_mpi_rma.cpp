// One-sided communication in the MPI translator (translators/mpi/translate/
// rma.cpp), driven with hand-built interceptor events: window ids, fence and
// free as all-to-all on the window's group, post/start/complete/wait as
// signals and bound receives, locks as Acquire/Release at the target's tool
// (docs/clock-rules.md, "One-sided communication"). The last tests feed the
// translators' output into real engines and compare with the reference model.
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "support/mpi_harness.h"

using namespace vcx;
using namespace vcx::mpi;
using namespace vcx::mpitest;
using Catch::Matchers::Contains;
using vcx::sim::Clock;
using vcx::sim::SimFatal;

namespace {

std::vector<std::unique_ptr<Tx>> job_of(std::uint32_t n) {
  std::vector<std::unique_ptr<Tx>> tx;
  for (std::uint32_t r = 0; r < n; ++r) {
    tx.push_back(std::make_unique<Tx>(r, n));
    tx[r]->init(r, n);
  }
  return tx;
}

GroupId last_group(Tx& tx) { return tx.rec().groups.back().first; }

// A program that maps to nothing and touches nothing of the exchange.
void check_inert(Tx& tx, const CallProgram& p, std::size_t groups_before) {
  CHECK_FALSE(p.clocked());
  CHECK(p.ops().empty());
  CHECK(tx.rec().groups.size() == groups_before);
  CHECK(tx.rec().binds.empty());
  CHECK(tx.rec().send_seq.empty());
  CHECK(tx.rec().last_token == 0);
}

void check_fence(const CallProgram& p, GroupId win, std::uint64_t instance) {
  CHECK(p.clocked());
  // MPI_Win_free ends by retiring the window's locks deposited here.
  const bool free = p.call() == static_cast<std::uint16_t>(Call::Win_free);
  REQUIRE(ops(p).size() == (free ? 4u : 2u));
  if (free) {
    CHECK(p.ops()[2].kind == OpKind::Retire);
    // ... and ending this process's leases of the window's locks.
    CHECK(p.ops()[3].kind == OpKind::EndLeases);
  }
  CHECK(p.ops()[0].kind == OpKind::CollectiveContribute);
  CHECK(p.ops()[0].flags == kCollectiveBlocking);
  CHECK(p.ops()[1].kind == OpKind::CollectiveComplete);
  for (const Op& op : p.ops().first(2)) {
    CHECK(op.collective.group == win);
    CHECK(op.collective.instance == instance);
    CHECK(op.collective.kind == CollectiveKind::AllToAll);
  }
}

const Call kCreateCalls[] = {Call::Win_create,          Call::Win_create_c,
                             Call::Win_allocate,        Call::Win_allocate_c,
                             Call::Win_allocate_shared, Call::Win_allocate_shared_c,
                             Call::Win_create_dynamic};

}  // namespace

// ---------------------------------------------------------------------------
// Windows

TEST_CASE("mpi rma: every window constructor maps to nothing and registers the group",
          "[mpi][rma]") {
  for (const Call call : kCreateCalls) {
    INFO(kCallNames[static_cast<std::size_t>(call)]);
    Tx tx(1, 3);
    tx.init(1, 3);
    const CallProgram p = win_create(tx, kWorldHandle, 0x9000, call);
    CHECK_FALSE(p.clocked());
    CHECK(p.ops().empty());
    REQUIRE(tx.rec().groups.size() == 3);
    CHECK(tx.rec().groups[2].second == ranks({0, 1, 2}));
    CHECK(tx.rec().groups[2].first != world_id(tx));
    // The window is usable afterwards.
    check_fence(win_call(tx, Call::Win_fence, 0x9000), last_group(tx), 1);
  }
}

TEST_CASE("mpi rma: window ids agree between ranks and differ from communicator ids",
          "[mpi][rma]") {
  constexpr std::uint32_t n = 4;
  auto tx = job_of(n);
  // Handles differ per process; ids must not.
  for (std::uint32_t r = 0; r < n; ++r) {
    win_create(*tx[r], kWorldHandle, 0x9000 + r);
    const std::vector<std::int32_t> split =
        r % 2 ? std::vector<std::int32_t>{3, 1} : std::vector<std::int32_t>{2, 0};
    tx[r]->comm_new(Call::Comm_split, kWorldHandle, 0x3000 + r, split);
    win_create(*tx[r], 0x3000 + r, 0x9100 + r, Call::Win_allocate);
    tx[r]->comm_new(Call::Comm_dup, kWorldHandle, 0x5000 + r, {}, false, true);
    win_create(*tx[r], kWorldHandle, 0x9200 + r, Call::Win_create_dynamic);
    win_create(*tx[r], 0x5000 + r, 0x9300 + r, Call::Win_allocate_shared_c);
  }
  // Registered per rank: world, self, win, split, win-on-split, dup, win, win-on-dup.
  auto id = [&](std::uint32_t r, std::size_t i) { return tx[r]->rec().groups.at(i).first; };
  auto members = [&](std::uint32_t r, std::size_t i) { return tx[r]->rec().groups.at(i).second; };
  for (std::uint32_t r = 0; r < n; ++r) {
    INFO("rank " << r);
    REQUIRE(tx[r]->rec().groups.size() == 8);
    for (std::size_t i : {2u, 5u, 6u, 7u}) CHECK(id(r, i) == id(0, i));
    CHECK(id(r, 3) == id(r % 2, 3));
    CHECK(id(r, 4) == id(r % 2, 4));
    CHECK(members(r, 2) == ranks({0, 1, 2, 3}));
    // A window's group is its communicator's, in that order.
    CHECK(members(r, 4) == members(r, 3));
    CHECK(members(r, 4) == (r % 2 ? ranks({3, 1}) : ranks({2, 0})));
    CHECK(members(r, 7) == ranks({0, 1, 2, 3}));
  }
  std::set<std::uint64_t> distinct;
  for (std::uint32_t r = 0; r < n; ++r)
    for (std::size_t i = 0; i < 8; ++i) distinct.insert(id(r, i).value);
  // world, 4 selves, win, 2 splits, 2 wins on them, dup, win, win on dup
  CHECK(distinct.size() == 13);

  // The same parent and the same construction count: a window and a
  // communicator must still differ.
  Tx a(0, 2), b(0, 2);
  a.init(0, 2);
  b.init(0, 2);
  win_create(a, kWorldHandle, 0x9000);
  b.comm_new(Call::Comm_dup, kWorldHandle, 0x5000, {}, false, true);
  CHECK(last_group(a) != last_group(b));
}

TEST_CASE("mpi rma: fence and free are blocking all-to-alls counted per window", "[mpi][rma]") {
  Tx tx(1, 3);
  tx.init(1, 3);
  win_create(tx, kWorldHandle, 0x9000);
  const GroupId a = last_group(tx);
  tx.comm_new(Call::Comm_split, kWorldHandle, 0x3000, {2, 1});
  win_create(tx, 0x3000, 0x9001);
  const GroupId b = last_group(tx);
  CHECK(tx.rec().groups.back().second == ranks({2, 1}));

  check_fence(win_call(tx, Call::Win_fence, 0x9000), a, 1);
  check_fence(win_call(tx, Call::Win_fence, 0x9001), b, 1);
  check_fence(win_call(tx, Call::Win_fence, 0x9000), a, 2);
  // The communicators' own collectives are counted apart.
  const CallProgram bar = tx.collective(Call::Barrier);
  CHECK(bar.ops()[0].collective.group == world_id(tx));
  CHECK(bar.ops()[0].collective.instance == 1);
  CHECK(tx.collective(Call::Barrier, 0x3000).ops()[0].collective.instance == 1);
  // Free is the window's last collective.
  check_fence(win_call(tx, Call::Win_free, 0x9000), a, 3);
  check_fence(win_call(tx, Call::Win_free, 0x9001), b, 2);
  CHECK(tx.rec().binds.empty());
  CHECK(tx.rec().send_seq.empty());
  // Freed: the handle is unknown now.
  CHECK_THROWS_WITH(win_call(tx, Call::Win_fence, 0x9000), Contains("window handle"));
}

// ---------------------------------------------------------------------------
// Post, start, complete, wait

TEST_CASE("mpi rma: post signals each origin, start waits for each target", "[mpi][rma]") {
  auto tx = job_of(4);
  for (std::uint32_t r = 0; r < 4; ++r) win_create(*tx[r], kWorldHandle, 0x9000 + r);
  const GroupId win = last_group(*tx[0]);

  // Target 0 exposes to origins 3 and 1 (world ranks, in the group's order).
  const CallProgram post = win_group(*tx[0], Call::Win_post, 0x9000, {3, 1});
  CHECK(post.clocked());
  REQUIRE(ops(post).size() == 2);
  const QueueId qpost = post.ops()[0].queue;
  CHECK(qpost.a == win.value);
  CHECK(qpost.b > 0xffffffffULL);  // above every tag
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(post.ops()[i].kind == OpKind::Signal);
    CHECK(post.ops()[i].queue == qpost);
    CHECK(post.ops()[i].value == 1);  // the first on (0 -> origin, queue)
    CHECK(post.ops()[i].flags == 0);
  }
  CHECK(post.ops()[0].peer == Rank{3});
  CHECK(post.ops()[1].peer == Rank{1});

  // Origin 1 opens an access epoch to targets 0 and 2.
  const CallProgram start = win_group(*tx[1], Call::Win_start, 0x9001, {0, 2});
  CHECK(start.clocked());
  REQUIRE(ops(start).size() == 2);
  REQUIRE(tx[1]->rec().binds.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const Bind& b = tx[1]->rec().binds[i];
    CHECK(start.ops()[i].kind == OpKind::Wait);
    CHECK(start.ops()[i].value == b.token);
    CHECK(b.queue == qpost);  // where target 0 signalled it
    // Nothing answers a post: no snapshot wanted.
    CHECK_FALSE(tx[1]->rec().answers(b.token));
  }
  CHECK(tx[1]->rec().binds[0].src == Rank{0});
  CHECK(tx[1]->rec().binds[1].src == Rank{2});

  // Complete signals the start group's targets on another queue.
  const CallProgram complete = win_call(*tx[1], Call::Win_complete, 0x9001);
  CHECK(complete.clocked());
  REQUIRE(ops(complete).size() == 2);
  const QueueId qdone = complete.ops()[0].queue;
  CHECK(qdone.a == win.value);
  CHECK(qdone.b > 0xffffffffULL);
  CHECK(qdone != qpost);
  CHECK(complete.ops()[0].kind == OpKind::Signal);
  CHECK(complete.ops()[0].peer == Rank{0});
  CHECK(complete.ops()[1].peer == Rank{2});
  CHECK(complete.ops()[1].queue == qdone);
  CHECK(complete.ops()[0].value == 1);
  // The epoch is over: another complete has no target.
  const CallProgram again = win_call(*tx[1], Call::Win_complete, 0x9001);
  CHECK_FALSE(again.clocked());
  CHECK(again.ops().empty());

  // Target 0: a test that fails completes nothing; one that succeeds waits
  // for the complete of each origin of the post group.
  const std::size_t binds = tx[0]->rec().binds.size();
  const CallProgram no = win_call(*tx[0], Call::Win_test, 0x9000, 0, 0);
  CHECK_FALSE(no.clocked());
  CHECK(no.ops().empty());
  CHECK(tx[0]->rec().binds.size() == binds);
  const CallProgram yes = win_call(*tx[0], Call::Win_test, 0x9000, 0, 1);
  CHECK(yes.clocked());
  REQUIRE(ops(yes).size() == 2);
  REQUIRE(tx[0]->rec().binds.size() == binds + 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const Bind& b = tx[0]->rec().binds[binds + i];
    CHECK(yes.ops()[i].kind == OpKind::Wait);
    CHECK(yes.ops()[i].value == b.token);
    CHECK(b.queue == qdone);
    CHECK_FALSE(tx[0]->rec().answers(b.token));
  }
  CHECK(tx[0]->rec().binds[binds].src == Rank{3});
  CHECK(tx[0]->rec().binds[binds + 1].src == Rank{1});

  // A second exposure epoch, closed by MPI_Win_wait (reported with arg 1,
  // as the interceptor does): numbered on.
  const CallProgram post2 = win_group(*tx[0], Call::Win_post, 0x9000, {1});
  REQUIRE(ops(post2).size() == 1);
  CHECK(post2.ops()[0].value == 2);
  CHECK(post2.ops()[0].peer == Rank{1});
  const CallProgram wait2 = win_call(*tx[0], Call::Win_wait, 0x9000, 0, 1);
  CHECK(wait2.clocked());
  REQUIRE(ops(wait2).size() == 1);
  CHECK(tx[0]->rec().binds.back().src == Rank{1});
  CHECK(tx[0]->rec().binds.back().queue == qdone);
  // And the next complete of origin 1 towards 0 is its second on that queue.
  win_group(*tx[1], Call::Win_start, 0x9001, {0});
  CHECK(win_call(*tx[1], Call::Win_complete, 0x9001).ops()[0].value == 2);
}

TEST_CASE("mpi rma: MPI_Win_wait completes the exposure epoch whatever its arg",
          "[mpi][rma]") {
  // WinEvent documents `arg` for locks and for MPI_Win_test only; the
  // translator reads arg 0 as "MPI_Win_test returned false" for MPI_Win_wait
  // too, and so drops the wait's merges unless the interceptor sets arg 1.
  Tx tx(0, 2);
  tx.init(0, 2);
  win_create(tx, kWorldHandle, 0x9000);
  win_group(tx, Call::Win_post, 0x9000, {1});
  const CallProgram w = win_call(tx, Call::Win_wait, 0x9000, 0, 0);
  CHECK(w.clocked());
  CHECK(ops(w).size() == 1);
}

TEST_CASE("mpi rma: empty post and start groups are not clocked, nor are their ends",
          "[mpi][rma]") {
  Tx tx(0, 2);
  tx.init(0, 2);
  win_create(tx, kWorldHandle, 0x9000);
  for (const Call call : {Call::Win_post, Call::Win_start}) {
    const CallProgram p = win_group(tx, call, 0x9000, {});
    CHECK_FALSE(p.clocked());
    CHECK(p.ops().empty());
  }
  const CallProgram c = win_call(tx, Call::Win_complete, 0x9000);
  CHECK_FALSE(c.clocked());
  CHECK(c.ops().empty());
  for (const Call call : {Call::Win_wait, Call::Win_test}) {
    const CallProgram w = win_call(tx, call, 0x9000, 0, 1);
    CHECK_FALSE(w.clocked());
    CHECK(w.ops().empty());
  }
  CHECK(tx.rec().binds.empty());
  CHECK(tx.rec().send_seq.empty());
}

TEST_CASE("mpi rma: post and start queues are the window's own", "[mpi][rma]") {
  Tx tx(0, 2);
  tx.init(0, 2);
  win_create(tx, kWorldHandle, 0x9000);
  win_create(tx, kWorldHandle, 0x9001);
  const QueueId q1 = win_group(tx, Call::Win_post, 0x9000, {1}).ops()[0].queue;
  const QueueId q2 = win_group(tx, Call::Win_post, 0x9001, {1}).ops()[0].queue;
  CHECK(q1 != q2);
  // Numbered per queue: each window's first post to rank 1.
  CHECK(tx.rec().send_seq.size() == 2);
  for (const auto& [key, seq] : tx.rec().send_seq) CHECK(seq == 1);
}

TEST_CASE("mpi rma: a post or start group naming a rank outside the world is fatal",
          "[mpi][rma]") {
  Tx tx(0, 2);
  tx.init(0, 2);
  win_create(tx, kWorldHandle, 0x9000);
  CHECK_THROWS_AS(win_group(tx, Call::Win_post, 0x9000, {2}), SimFatal);
  CHECK_THROWS_AS(win_group(tx, Call::Win_start, 0x9000, {-1}), SimFatal);
  // A group shorter than its count.
  WinGroupEvent head{0x9000, 3, 0};
  CHECK_THROWS_AS(tx.feed(with_items(Call::Win_post, head, std::vector<std::int32_t>{1})),
                  SimFatal);
  CHECK_THROWS_AS(tx.feed(Event(Call::Win_start, &head, 8)), SimFatal);
}

// ---------------------------------------------------------------------------
// Locks

namespace {

// The window: a communicator over world ranks {3, 1, 0, 2} in that order.
const std::vector<std::int32_t> kOrder{3, 1, 0, 2};

void make_window(Tx& tx, std::uint32_t r) {
  tx.comm_new(Call::Comm_split, kWorldHandle, 0x3000 + r, kOrder);
  win_create(tx, 0x3000 + r, 0x9000 + r);
  win_create(tx, kWorldHandle, 0xa000 + r);  // a second window, over the world
}

const Op& only_op(const CallProgram& p) {
  REQUIRE(ops(p).size() == 1);
  return p.ops()[0];
}

}  // namespace

TEST_CASE("mpi rma: lock and unlock acquire and release the lock at the target's world rank",
          "[mpi][rma][lock]") {
  auto tx = job_of(4);
  for (std::uint32_t r = 0; r < 4; ++r) make_window(*tx[r], r);
  Tx& t1 = *tx[1];

  // Exclusive on window rank 0, which is world rank 3.
  const CallProgram lock = win_call(t1, Call::Win_lock, 0x9001, 0, kLockExclusive);
  CHECK(lock.clocked());
  const Op acq = only_op(lock);
  CHECK(acq.kind == OpKind::Acquire);
  CHECK(acq.peer == Rank{3});
  // Leasable, under the application's name of the lock.
  CHECK(acq.flags == kResourceLeasable);
  CHECK(acq.lease_object == 0x9001);
  CHECK(acq.lease_target == 0);
  CHECK(acq.queue.b == 0);
  const CallProgram unlock = win_call(t1, Call::Win_unlock, 0x9001, 0);
  CHECK(unlock.clocked());
  const Op rel = only_op(unlock);
  CHECK(rel.kind == OpKind::Release);
  CHECK(rel.peer == Rank{3});
  CHECK(rel.flags == 0);
  CHECK(rel.queue == acq.queue);

  // Two targets held at once, in different modes: each unlock remembers its own.
  const Op s2 = only_op(win_call(t1, Call::Win_lock, 0x9001, 2, kLockShared));  // world 0
  const Op x3 = only_op(win_call(t1, Call::Win_lock, 0x9001, 3, kLockExclusive));  // world 2
  CHECK(s2.peer == Rank{0});
  CHECK(s2.flags == (kResourceShared | kResourceLeasable));
  CHECK(s2.lease_target == 2);
  CHECK(x3.peer == Rank{2});
  CHECK(x3.flags == kResourceLeasable);
  const Op u3 = only_op(win_call(t1, Call::Win_unlock, 0x9001, 3));
  const Op u2 = only_op(win_call(t1, Call::Win_unlock, 0x9001, 2));
  CHECK(u3.flags == 0);
  CHECK(u3.peer == Rank{2});
  CHECK(u3.queue == x3.queue);
  CHECK(u2.flags == kResourceShared);
  CHECK(u2.peer == Rank{0});
  CHECK(u2.queue == s2.queue);

  // The same target again, the other way round.
  CHECK(only_op(win_call(t1, Call::Win_lock, 0x9001, 2, kLockExclusive)).flags ==
        kResourceLeasable);
  CHECK(only_op(win_call(t1, Call::Win_unlock, 0x9001, 2)).flags == 0);

  // Taken and released under a lease, and a release that ends a recalled one.
  const Op leased = only_op(win_call(t1, Call::Win_lock, 0x9001, 2, kLockShared | kLockLeased));
  CHECK(leased.kind == OpKind::Acquire);
  CHECK(leased.flags == (kResourceShared | kResourceLeased));
  CHECK(only_op(win_call(t1, Call::Win_unlock, 0x9001, 2, kLockLeased)).flags ==
        (kResourceShared | kResourceLeased));
  only_op(win_call(t1, Call::Win_lock, 0x9001, 2, kLockShared | kLockLeased));
  CHECK(only_op(win_call(t1, Call::Win_unlock, 0x9001, 2, kLockLeased | kLockLeaseEnded)).flags ==
        (kResourceShared | kResourceLeased | kResourceLeaseEnd));

  // Every rank names the same lock for the same target ...
  const Op other = only_op(win_call(*tx[2], Call::Win_lock, 0x9002, 0, kLockShared));
  CHECK(other.peer == Rank{3});
  CHECK(other.queue == acq.queue);
  // ... and another window's lock at the same target is another lock.
  const Op world_win = only_op(win_call(t1, Call::Win_lock, 0xa001, 3, kLockExclusive));
  CHECK(world_win.peer == Rank{3});
  CHECK(world_win.queue != acq.queue);

  // Locks are no point-to-point traffic.
  CHECK(t1.rec().binds.empty());
  CHECK(t1.rec().send_seq.empty());
}

TEST_CASE("mpi rma: lock_all and unlock_all take every member's lock, shared",
          "[mpi][rma][lock]") {
  auto tx = job_of(4);
  for (std::uint32_t r = 0; r < 4; ++r) make_window(*tx[r], r);
  // The lock of each window rank, as a single lock names it (from rank 2).
  std::vector<QueueId> single;
  for (std::int32_t t = 0; t < 4; ++t) {
    single.push_back(only_op(win_call(*tx[2], Call::Win_lock, 0x9002, t, kLockShared)).queue);
    win_call(*tx[2], Call::Win_unlock, 0x9002, t);
  }
  const CallProgram all = win_call(*tx[0], Call::Win_lock_all, 0x9000);
  CHECK(all.clocked());
  REQUIRE(ops(all).size() == 4);
  const CallProgram none = win_call(*tx[0], Call::Win_unlock_all, 0x9000);
  CHECK(none.clocked());
  REQUIRE(ops(none).size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    INFO("window rank " << i);
    const Op& a = all.ops()[i];
    const Op& u = none.ops()[i];
    CHECK(a.kind == OpKind::Acquire);
    CHECK(u.kind == OpKind::Release);
    CHECK(a.flags == kResourceShared);
    CHECK(u.flags == kResourceShared);
    CHECK(a.peer == Rank{static_cast<std::uint32_t>(kOrder[i])});
    CHECK(u.peer == a.peer);
    // The very lock a single MPI_Win_lock takes: they must exclude each other.
    CHECK(a.queue == single[i]);
    CHECK(u.queue == single[i]);
  }
}

TEST_CASE("mpi rma: locks taken with MPI_MODE_NOCHECK map to nothing, and so do their unlocks",
          "[mpi][rma][lock]") {
  // MPI acquires no lock for them: nothing to order, wait for or merge
  // (OpenCoarrays' event wait holds one while others lock exclusively).
  auto tx = job_of(4);
  for (std::uint32_t r = 0; r < 4; ++r) make_window(*tx[r], r);
  Tx& t1 = *tx[1];
  const std::size_t groups = t1.rec().groups.size();
  check_inert(t1, win_call(t1, Call::Win_lock_all, 0x9001, 0, kLockNoCheck), groups);
  check_inert(t1, win_call(t1, Call::Win_unlock_all, 0x9001), groups);
  for (const std::int32_t type : {kLockExclusive, kLockShared}) {
    check_inert(t1, win_call(t1, Call::Win_lock, 0x9001, 2, type | kLockNoCheck), groups);
    check_inert(t1, win_call(t1, Call::Win_unlock, 0x9001, 2), groups);
  }
  // A NOCHECK holding and a real one at once, on two targets: each unlock
  // releases what its own lock took.
  check_inert(t1, win_call(t1, Call::Win_lock, 0x9001, 0, kLockShared | kLockNoCheck), groups);
  const Op x = only_op(win_call(t1, Call::Win_lock, 0x9001, 3, kLockExclusive));
  CHECK(x.kind == OpKind::Acquire);
  check_inert(t1, win_call(t1, Call::Win_unlock, 0x9001, 0), groups);
  const Op u = only_op(win_call(t1, Call::Win_unlock, 0x9001, 3));
  CHECK(u.kind == OpKind::Release);
  CHECK(u.queue == x.queue);
  // After a NOCHECK lock_all ends, a plain one takes every lock again.
  check_inert(t1, win_call(t1, Call::Win_lock_all, 0x9001, 0, kLockNoCheck), groups);
  check_inert(t1, win_call(t1, Call::Win_unlock_all, 0x9001), groups);
  const CallProgram all = win_call(t1, Call::Win_lock_all, 0x9001);
  CHECK(all.clocked());
  CHECK(ops(all).size() == 4);
  CHECK(ops(win_call(t1, Call::Win_unlock_all, 0x9001)).size() == 4);
  // A NOCHECK unlock is no licence for a second one.
  win_call(t1, Call::Win_lock, 0x9001, 1, kLockExclusive | kLockNoCheck);
  win_call(t1, Call::Win_unlock, 0x9001, 1);
  CHECK_THROWS_WITH(win_call(t1, Call::Win_unlock, 0x9001, 1),
                    Contains("MPI_Win_unlock without MPI_Win_lock"));
}

TEST_CASE("mpi rma: an unlock without its lock is fatal", "[mpi][rma][lock]") {
  auto fresh = [] {
    auto t = std::make_unique<Tx>(1, 4);
    t->init(1, 4);
    make_window(*t, 1);
    return t;
  };
  {
    auto t = fresh();
    CHECK_THROWS_WITH(win_call(*t, Call::Win_unlock, 0x9001, 0),
                      Contains("MPI_Win_unlock without MPI_Win_lock"));
  }
  {
    auto t = fresh();  // twice
    win_call(*t, Call::Win_lock, 0x9001, 0, kLockExclusive);
    win_call(*t, Call::Win_unlock, 0x9001, 0);
    CHECK_THROWS_AS(win_call(*t, Call::Win_unlock, 0x9001, 0), SimFatal);
  }
  {
    auto t = fresh();  // another target
    win_call(*t, Call::Win_lock, 0x9001, 0, kLockExclusive);
    CHECK_THROWS_AS(win_call(*t, Call::Win_unlock, 0x9001, 1), SimFatal);
  }
  {
    auto t = fresh();  // another window
    win_call(*t, Call::Win_lock, 0x9001, 0, kLockExclusive);
    CHECK_THROWS_AS(win_call(*t, Call::Win_unlock, 0xa001, 0), SimFatal);
  }
  {
    auto t = fresh();  // after lock_all
    win_call(*t, Call::Win_lock_all, 0x9001);
    CHECK_THROWS_AS(win_call(*t, Call::Win_unlock, 0x9001, 0), SimFatal);
  }
  {
    auto t = fresh();  // a target outside the window's group
    CHECK_THROWS_AS(win_call(*t, Call::Win_lock, 0x9001, 4, kLockExclusive), SimFatal);
    CHECK_THROWS_AS(win_call(*t, Call::Win_lock, 0x9001, -1, kLockShared), SimFatal);
  }
  {
    auto t = fresh();  // a window vcx never saw
    CHECK_THROWS_AS(win_call(*t, Call::Win_lock, 0xdead, 0, kLockExclusive), SimFatal);
  }
}

// ---------------------------------------------------------------------------
// Data accesses

TEST_CASE("mpi rma: data accesses are not clocked and emit nothing", "[mpi][rma]") {
  const Call calls[] = {Call::Put,
                        Call::Put_c,
                        Call::Get,
                        Call::Get_c,
                        Call::Accumulate,
                        Call::Accumulate_c,
                        Call::Get_accumulate,
                        Call::Get_accumulate_c,
                        Call::Fetch_and_op,
                        Call::Compare_and_swap,
                        Call::Rput,
                        Call::Rput_c,
                        Call::Rget,
                        Call::Rget_c,
                        Call::Raccumulate,
                        Call::Raccumulate_c,
                        Call::Rget_accumulate,
                        Call::Rget_accumulate_c};
  Tx tx(0, 3);
  tx.init(0, 3);
  win_create(tx, kWorldHandle, 0x9000);
  const std::size_t groups = tx.rec().groups.size();
  std::uint64_t request = 0x500;
  for (const Call call : calls) {
    INFO(kCallNames[static_cast<std::size_t>(call)]);
    const bool with_request = kCallNames[static_cast<std::size_t>(call)][4] == 'R';
    // Outside any epoch, inside a fence epoch and inside a lock epoch alike.
    check_inert(tx, rma(tx, call, 0x9000, 1, RmaKind::Put, with_request ? ++request : 0), groups);
  }
  win_call(tx, Call::Win_fence, 0x9000);
  check_inert(tx, rma(tx, Call::Get, 0x9000, 2, RmaKind::Get), groups);
  const CallProgram lock = win_call(tx, Call::Win_lock, 0x9000, 2, kLockShared);
  check_inert(tx, rma(tx, Call::Accumulate, 0x9000, 2, RmaKind::Accumulate), groups);
  win_call(tx, Call::Win_unlock, 0x9000, 2);
  // Completing a request-based access completes nothing vcx clocks.
  const CallProgram w = tx.wait(request);
  CHECK_FALSE(w.clocked());
  CHECK(w.ops().empty());
  const CallProgram all = tx.complete(Call::Waitall, {Completion{0x501, 0, 0, 0, 0},
                                                      Completion{0x502, 0, 0, 0, 0}});
  CHECK_FALSE(all.clocked());
  CHECK(all.ops().empty());
  (void)lock;
}

// ---------------------------------------------------------------------------
// Translators and engines together

namespace {

vcx::sim::EngineSim::Submitted submit(Job& job, std::uint32_t r, const CallProgram& p,
                                      bool needs_reply = false) {
  return job.sim.submit_program(r, p, needs_reply);
}

bool before(const Clock& a, const Clock& b) {
  bool less = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] > b[i]) return false;
    if (a[i] < b[i]) less = true;
  }
  return less;
}

}  // namespace

TEST_CASE("mpi+engine: three ranks contend for rank 0's window lock, share it, lock_all, fence",
          "[mpi][engine][rma][lock]") {
  constexpr std::uint32_t n = 3;
  std::set<std::vector<std::uint32_t>> orders;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    INFO("delivery seed " << seed);
    Job job(n, seed);
    using Sub = vcx::sim::EngineSim::Submitted;
    std::vector<std::vector<Sub>> locks(n), unlocks(n);
    std::vector<Sub> fences;
    for (std::uint32_t r = 0; r < n; ++r) {
      Tx& t = *job.tx[r];
      const std::uint64_t win = 0x9000 + r;
      submit(job, r, win_create(t, kWorldHandle, win));
      // Twice an exclusive epoch at rank 0, with a put inside.
      for (int i = 0; i < 2; ++i) {
        locks[r].push_back(submit(job, r, win_call(t, Call::Win_lock, win, 0, kLockExclusive), true));
        submit(job, r, rma(t, Call::Put, win, 0));
        unlocks[r].push_back(submit(job, r, win_call(t, Call::Win_unlock, win, 0)));
      }
      // A shared epoch at rank 0.
      submit(job, r, win_call(t, Call::Win_lock, win, 0, kLockShared), true);
      submit(job, r, rma(t, Call::Get, win, 0, RmaKind::Get));
      submit(job, r, win_call(t, Call::Win_unlock, win, 0));
      // A shared epoch everywhere.
      submit(job, r, win_call(t, Call::Win_lock_all, win), true);
      submit(job, r, rma(t, Call::Accumulate, win, static_cast<std::int32_t>((r + 1) % n),
                         RmaKind::Accumulate));
      submit(job, r, win_call(t, Call::Win_unlock_all, win));
      fences.push_back(submit(job, r, win_call(t, Call::Win_fence, win), true));
    }
    job.sim.drain();
    REQUIRE(job.sim.check_finished() == "");  // reference clocks, lock rules, replies, leaks

    // Every rank named one lock per target: one resource per deposition.
    const auto grants = vcx::sim::grant_order(job.sim.lock_log());
    REQUIRE(grants.size() == n);
    for (std::uint32_t d = 0; d < n; ++d) {
      auto it = grants.lower_bound({d, 0});
      REQUIRE(it != grants.end());
      CHECK(it->first.first == d);
    }
    // At rank 0: six exclusive grants, three shared, three from lock_all.
    const auto& at0 = grants.begin()->second;
    REQUIRE(at0.size() == 12);
    std::vector<std::uint32_t> exclusive;
    for (const auto& g : at0)
      if (!g.shared) exclusive.push_back(g.to);
    REQUIRE(exclusive.size() == 6);
    orders.insert(exclusive);
    // The exclusive holders are ordered by happened-before, each lock after
    // the previous holder's unlock.
    std::vector<std::size_t> seen(n, 0);
    Clock prev;
    for (std::uint32_t r : exclusive) {
      const std::size_t j = seen[r]++;
      const Clock got = job.clock(r, static_cast<std::size_t>(locks[r][j].call_index));
      if (!prev.empty()) CHECK(before(prev, got));
      prev = job.clock(r, static_cast<std::size_t>(unlocks[r][j].call_index));
    }
    // The fence: one clock for all, on the window's group.
    const auto& f0 = job.sim.calls(0).at(static_cast<std::size_t>(fences[0].call_index));
    CHECK(f0.group != GroupId{});
    for (std::uint32_t r = 0; r < n; ++r) {
      const auto& f = job.sim.calls(r).at(static_cast<std::size_t>(fences[r].call_index));
      CHECK(f.clock == f0.clock);
      CHECK(f.group == f0.group);
    }
  }
  CHECK(orders.size() > 10);
}

TEST_CASE("mpi+engine: exclusive locks are granted while the target holds a NOCHECK lock_all",
          "[mpi][engine][rma][lock]") {
  // OpenCoarrays' event wait and post: rank 0 holds MPI_Win_lock_all
  // (MPI_MODE_NOCHECK) and polls its memory until ranks 1 and 2 posted, each
  // with an exclusive lock of rank 0, an accumulate and an unlock; only then
  // does it unlock_all and lock itself shared to take the posts off.
  constexpr std::uint32_t n = 3;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("delivery seed " << seed);
    Job job(n, seed);
    using Sub = vcx::sim::EngineSim::Submitted;
    for (std::uint32_t r = 0; r < n; ++r)
      submit(job, r, win_create(*job.tx[r], kWorldHandle, 0x9000 + r));
    Tx& t0 = *job.tx[0];
    submit(job, 0, win_call(t0, Call::Win_lock_all, 0x9000, 0, kLockNoCheck));
    std::vector<Sub> unlocks(n);
    for (std::uint32_t r = 1; r < n; ++r) {
      Tx& t = *job.tx[r];
      submit(job, r, win_call(t, Call::Win_lock, 0x9000 + r, 0, kLockExclusive), true);
      submit(job, r, rma(t, Call::Accumulate, 0x9000 + r, 0, RmaKind::Accumulate));
      unlocks[r] = submit(job, r, win_call(t, Call::Win_unlock, 0x9000 + r, 0));
    }
    job.sim.drain();
    // The posters got their locks while rank 0 still holds its NOCHECK epoch
    // (it will not end it before it sees both posts).
    for (std::uint32_t r = 1; r < n; ++r) {
      INFO("rank " << r);
      CHECK(job.sim.host(r).replies.size() == 1);
    }
    submit(job, 0, win_call(t0, Call::Win_unlock_all, 0x9000));
    const Sub shared = submit(job, 0, win_call(t0, Call::Win_lock, 0x9000, 0, kLockShared), true);
    submit(job, 0, rma(t0, Call::Fetch_and_op, 0x9000, 0, RmaKind::FetchAndOp));
    submit(job, 0, win_call(t0, Call::Win_unlock, 0x9000, 0));
    job.sim.drain();
    REQUIRE(job.sim.check_finished() == "");
    // The NOCHECK epoch was not clocked; the shared lock merges both posts.
    CHECK(shared.call_index == 0);
    const Clock got = job.clock(0, static_cast<std::size_t>(shared.call_index));
    for (std::uint32_t r = 1; r < n; ++r)
      CHECK(before(job.clock(r, static_cast<std::size_t>(unlocks[r].call_index)), got));
  }
}

TEST_CASE("mpi+engine: post, start, complete and wait order the epochs", "[mpi][engine][rma]") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("delivery seed " << seed);
    Job job(3, seed);
    for (std::uint32_t r = 0; r < 3; ++r)
      submit(job, r, win_create(*job.tx[r], kWorldHandle, 0x9000 + r));
    const auto post = submit(job, 0, win_group(*job.tx[0], Call::Win_post, 0x9000, {1, 2}));
    std::vector<vcx::sim::EngineSim::Submitted> starts, completes;
    for (std::uint32_t r : {1u, 2u}) {
      starts.push_back(submit(job, r, win_group(*job.tx[r], Call::Win_start, 0x9000 + r, {0}), true));
      submit(job, r, rma(*job.tx[r], Call::Put, 0x9000 + r, 0));
      completes.push_back(submit(job, r, win_call(*job.tx[r], Call::Win_complete, 0x9000 + r)));
    }
    submit(job, 0, win_call(*job.tx[0], Call::Win_test, 0x9000, 0, 0));
    const auto wait = submit(job, 0, win_call(*job.tx[0], Call::Win_wait, 0x9000, 0, 1), true);
    std::vector<vcx::sim::EngineSim::Submitted> fences;
    for (std::uint32_t r = 0; r < 3; ++r)
      fences.push_back(submit(job, r, win_call(*job.tx[r], Call::Win_fence, 0x9000 + r), true));
    job.sim.drain();
    REQUIRE(job.sim.check_finished() == "");
    auto at = [&](std::uint32_t r, const vcx::sim::EngineSim::Submitted& s) {
      return job.clock(r, static_cast<std::size_t>(s.call_index));
    };
    CHECK(at(0, post) == Clock{1, 0, 0});
    CHECK(at(1, starts[0]) == Clock{1, 1, 0});
    CHECK(at(2, starts[1]) == Clock{1, 0, 1});
    CHECK(at(1, completes[0]) == Clock{1, 2, 0});
    CHECK(at(2, completes[1]) == Clock{1, 0, 2});
    CHECK(at(0, wait) == Clock{2, 2, 2});
    for (std::uint32_t r = 0; r < 3; ++r) CHECK(at(r, fences[r]) == Clock{3, 3, 3});
  }
}

TEST_CASE("mpi+engine: lock order does not wait for engines held up by a wildcard receive",
          "[mpi][engine][rma][lock]") {
  // Rank 1's engine owes a synchronous sender (rank 0) the answer of a
  // wildcard receive that only rank 1's later MPI_Wait resolves, so neither
  // engine can go on and both applications are let go. Rank 0's application
  // unlocks; rank 1's then locks the same lock. Its deposition grants it at
  // once, in the order the applications called: MPI_Win_lock may return
  // (and call MPI) although the grant's clock, which needs rank 0's release
  // clock, is not in yet. The clocks follow once the MPI_Wait is read.
  Job job(3, 1);
  for (std::uint32_t r = 0; r < 3; ++r)
    submit(job, r, win_create(*job.tx[r], kWorldHandle, 0x9000 + r));
  submit(job, 1, job.tx[1]->irecv(1, kRankAny, kTagAny));
  const auto lock0 =
      submit(job, 0, win_call(*job.tx[0], Call::Win_lock, 0x9000, 2, kLockExclusive), true);
  job.sim.drain();
  REQUIRE(job.sim.engine(0).idle());
  submit(job, 0, job.tx[0]->send(Call::Ssend, 1, 0), true);
  job.sim.drain();
  REQUIRE(job.sim.engine(0).must_not_stall());  // the deferred answer lets rank 0 go on
  submit(job, 0, win_call(*job.tx[0], Call::Win_unlock, 0x9000, 2));
  const auto lock1 =
      submit(job, 1, win_call(*job.tx[1], Call::Win_lock, 0x9001, 2, kLockExclusive), true);
  job.sim.drain();
  REQUIRE_FALSE(job.sim.engine(1).idle());
  CHECK_THAT(job.sim.engine(1).blocked_on(), Contains("the clock of a lock granted at rank 2"));
  CHECK(job.sim.host(1).replies.empty());
  CHECK(job.sim.engine(1).must_not_stall());
  CHECK(job.sim.engine(1).replies_allowed_through() >= lock1.event_seq);
  submit(job, 1, job.tx[1]->wait(1, 0, 0), true);
  const auto unlock1 = submit(job, 1, win_call(*job.tx[1], Call::Win_unlock, 0x9001, 2));
  job.sim.drain();
  REQUIRE(job.sim.check_finished() == "");
  // Rank 1's lock merged rank 0's release (after its Ssend).
  const auto& c0 = job.sim.calls(0);
  const auto& c1 = job.sim.calls(1);
  REQUIRE(lock0.call_index >= 0);
  REQUIRE(lock1.call_index >= 0);
  REQUIRE(unlock1.call_index >= 0);
  const auto& unlock0 = c0.back().clock;
  CHECK(c1.at(static_cast<std::size_t>(lock1.call_index)).clock[0] == unlock0[0]);
}

TEST_CASE("mpi+engine: a lock call waits for its grant even while its engine is held up",
          "[mpi][engine][rma][lock]") {
  // Rank 1's application is let go (its engine waits for a wildcard
  // receive's match), but its MPI_Win_lock must still wait until the lock's
  // deposition grants it: rank 0 holds the lock. No reply may pass it.
  Job job(3, 1);
  for (std::uint32_t r = 0; r < 3; ++r)
    submit(job, r, win_create(*job.tx[r], kWorldHandle, 0x9000 + r));
  submit(job, 0, win_call(*job.tx[0], Call::Win_lock, 0x9000, 2, kLockExclusive), true);
  job.sim.drain();
  submit(job, 1, job.tx[1]->irecv(1, kRankAny, kTagAny));
  // Its position on (2, tag 0) depends on the wildcard receive: no stall.
  submit(job, 1, job.tx[1]->recv(2, 0, 2, 0), true);
  const auto lock1 =
      submit(job, 1, win_call(*job.tx[1], Call::Win_lock, 0x9001, 2, kLockExclusive), true);
  job.sim.drain();
  REQUIRE(job.sim.engine(1).must_not_stall());
  CHECK(job.sim.engine(1).replies_allowed_through() == lock1.event_seq - 1);
  CHECK_THAT(job.sim.engine(1).blocked_on(), Contains("whose match is not known yet"));
  // Rank 0 releases: now the lock call may go on.
  submit(job, 0, win_call(*job.tx[0], Call::Win_unlock, 0x9000, 2));
  job.sim.drain();
  CHECK(job.sim.engine(1).replies_allowed_through() >= lock1.event_seq);
  // The rest of the run: rank 2's messages, the wildcard's completion.
  submit(job, 2, job.tx[2]->send(Call::Send, 1, 5));
  submit(job, 2, job.tx[2]->send(Call::Send, 1, 0));
  submit(job, 1, win_call(*job.tx[1], Call::Win_unlock, 0x9001, 2));
  submit(job, 1, job.tx[1]->wait(1, 2, 5), true);
  job.sim.drain();
  CHECK(job.sim.check_finished() == "");
}

TEST_CASE("mpi+engine: a freed window's locks leave nothing at their deposition",
          "[mpi][engine][rma][lock]") {
  // Each window's locks keep their last releases at the target's tool for
  // the next grant. After MPI_Win_free no grant can come; a program that
  // creates, locks and frees windows in a loop should not grow the tool.
  Job job(2, 1);
  constexpr int kWindows = 50;
  for (int i = 0; i < kWindows; ++i) {
    for (std::uint32_t r = 0; r < 2; ++r)
      submit(job, r, win_create(*job.tx[r], kWorldHandle, 0x9000 + r));
    submit(job, 1, win_call(*job.tx[1], Call::Win_lock, 0x9001, 0, kLockExclusive), true);
    submit(job, 1, win_call(*job.tx[1], Call::Win_unlock, 0x9001, 0));
    for (std::uint32_t r = 0; r < 2; ++r)
      submit(job, r, win_call(*job.tx[r], Call::Win_free, 0x9000 + r), true);
    job.sim.drain();
  }
  REQUIRE(job.sim.check_finished() == "");
  const auto& dep = static_cast<const vcx::vclock::VclockEngine&>(job.sim.engine(0));
  CHECK(dep.pooled_clocks_in_use() == 0);
}
