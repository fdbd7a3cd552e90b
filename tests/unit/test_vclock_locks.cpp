// Locks in the vclock engine (Acquire/Release ops; engines/vclock/
// lock_requests.h and lock_deposition.h), black box through the built
// plugin: depositions serve exclusive requests first come first served and
// grant shared ones whenever no exclusive holder exists, side by side; an
// exclusive grant carries the last exclusive release and every shared
// release since, a shared grant the last exclusive release
// (docs/clock-rules.md, "One-sided communication").
//
// The grant order is decided at run time; support/engine_sim.h logs it from
// the engines' messages, checks it against the lock rules (mutual exclusion,
// arrival order) and feeds it to the reference model, which then gives the
// clocks every call must have.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "support/engine_sim.h"

using namespace vcx;
using namespace vcx::sim;
using Catch::Matchers::Contains;

namespace {

constexpr std::uint64_t kRes = 0x51;
constexpr std::uint64_t kRes2 = 0x52;
constexpr GroupId kWorld{0xabcdef};

std::vector<Rank> ranks(std::initializer_list<std::uint32_t> v) {
  std::vector<Rank> out;
  for (auto x : v) out.push_back(Rank{x});
  return out;
}
std::vector<Rank> all_ranks(std::uint32_t n) {
  std::vector<Rank> out;
  for (std::uint32_t r = 0; r < n; ++r) out.push_back(Rank{r});
  return out;
}

const Clock& clock_of(const EngineSim& sim, std::uint32_t r, const EngineSim::Submitted& s) {
  return sim.calls(r).at(static_cast<std::size_t>(s.call_index)).clock;
}

// a < b in the happened-before order of vector clocks.
bool before(const Clock& a, const Clock& b) {
  bool less = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] > b[i]) return false;
    if (a[i] < b[i]) less = true;
  }
  return less;
}

// The grantees of one lock, in grant order.
std::vector<std::uint32_t> grantees(const EngineSim& sim, std::uint32_t deposition,
                                    std::uint64_t resource) {
  std::vector<std::uint32_t> out;
  GrantOrder all = grant_order(sim.lock_log());
  for (const GrantRecord& g : all[{deposition, resource}]) out.push_back(g.to);
  return out;
}

std::size_t pooled(EngineSim& sim, std::uint32_t r) {
  return static_cast<const vclock::VclockEngine&>(sim.engine(r)).pooled_clocks_in_use();
}
std::size_t pending_grants(EngineSim& sim, std::uint32_t r) {
  return static_cast<const vclock::VclockEngine&>(sim.engine(r)).pending_grants();
}

}  // namespace

// ---------------------------------------------------------------------------
// The harness itself: the lock-log checks and the reference model's use of
// a grant order must catch what they are there to catch.

TEST_CASE("lock log check: overlap, overtaking, idle waiting and leftovers are caught",
          "[engine][lock]") {
  using K = LockEvent::Kind;
  auto ev = [](K k, std::uint32_t rank, std::uint64_t number, bool shared) {
    return LockEvent{k, 0, kRes, rank, number, shared};
  };
  const std::vector<LockEvent> good{
      ev(K::Request, 1, 1, true),  ev(K::Grant, 1, 1, true),    ev(K::Request, 2, 1, true),
      ev(K::Grant, 2, 1, true),    ev(K::Request, 3, 1, false), ev(K::Release, 1, 0, true),
      ev(K::Release, 2, 0, true),  ev(K::Grant, 3, 1, false),   ev(K::Release, 3, 0, false)};
  CHECK(check_lock_log(good) == "");
  // Cut short: the exclusive one still holds it.
  const std::vector<LockEvent> held(good.begin(), good.end() - 1);
  CHECK(check_lock_log(held, false) == "");
  CHECK_THAT(check_lock_log(held), Contains("still held"));

  CHECK_THAT(check_lock_log({ev(K::Request, 1, 1, false), ev(K::Grant, 1, 1, false),
                             ev(K::Request, 2, 1, false), ev(K::Grant, 2, 1, false)}),
             Contains("holds it exclusively"));
  CHECK_THAT(check_lock_log({ev(K::Request, 1, 1, true), ev(K::Grant, 1, 1, true),
                             ev(K::Request, 2, 1, false), ev(K::Grant, 2, 1, false)}),
             Contains("shared holder"));
  // Exclusive requests keep their arrival order, also behind shared ones.
  CHECK_THAT(check_lock_log({ev(K::Request, 1, 1, false), ev(K::Grant, 1, 1, false),
                             ev(K::Request, 2, 1, false), ev(K::Request, 3, 1, false),
                             ev(K::Release, 1, 0, false), ev(K::Grant, 3, 1, false)}),
             Contains("ahead of rank 2"));
  CHECK_THAT(check_lock_log({ev(K::Request, 1, 1, false), ev(K::Grant, 1, 1, false),
                             ev(K::Request, 2, 1, true), ev(K::Request, 3, 1, false),
                             ev(K::Release, 1, 0, false), ev(K::Grant, 3, 1, false)}),
             Contains("ahead of rank 2"));
  // A shared request may pass a waiting exclusive one ...
  CHECK(check_lock_log({ev(K::Request, 1, 1, true), ev(K::Grant, 1, 1, true),
                        ev(K::Request, 2, 1, false), ev(K::Request, 3, 1, true),
                        ev(K::Grant, 3, 1, true), ev(K::Release, 1, 0, true),
                        ev(K::Release, 3, 0, true), ev(K::Grant, 2, 1, false),
                        ev(K::Release, 2, 0, false)}) == "");
  // ... and must be granted at once when no exclusive holder exists.
  CHECK_THAT(check_lock_log({ev(K::Request, 1, 1, true), ev(K::Grant, 1, 1, true),
                             ev(K::Request, 2, 1, true), ev(K::Release, 1, 0, true)}),
             Contains("left waiting"));
  CHECK_THAT(check_lock_log({ev(K::Request, 1, 1, true), ev(K::Grant, 1, 1, true),
                             ev(K::Request, 2, 1, false), ev(K::Request, 3, 1, true),
                             ev(K::Release, 1, 0, true)}),
             Contains("left waiting"));
  CHECK_THAT(check_lock_log({ev(K::Request, 1, 1, true), ev(K::Grant, 1, 1, false)}),
             Contains("other mode"));
  CHECK_THAT(check_lock_log({ev(K::Release, 1, 0, false)}), Contains("without holding"));
  CHECK_THAT(check_lock_log({ev(K::Grant, 1, 1, false)}), Contains("without a request"));
  CHECK_THAT(check_lock_log({ev(K::Request, 1, 1, false), ev(K::Grant, 1, 1, false),
                             ev(K::Request, 2, 1, false), ev(K::Release, 1, 0, false)}),
             Contains("never granted"));
}

TEST_CASE("reference model: lock clocks follow the grant order it is given", "[engine][lock]") {
  ReferenceModel ref(3);
  // Ranks 1 and 2 lock exclusively at rank 0, with work inside.
  for (std::uint32_t r : {1u, 2u}) {
    ref.program(Rank{r}, Prog::clocked_call().acquire(Rank{0}, kRes));
    ref.program(Rank{r}, Prog::clocked_call());
    ref.program(Rank{r}, Prog::clocked_call().release(Rank{0}, kRes));
  }
  // Then rank 0 takes it shared: it merges the last exclusive release only.
  ref.program(Rank{0}, Prog::clocked_call().acquire(Rank{0}, kRes, true));
  ref.program(Rank{0}, Prog::clocked_call().release(Rank{0}, kRes, true));

  const auto first = ref.clocks({{{0, kRes}, {{1, false}, {2, false}, {0, true}}}});
  CHECK(first[1][0] == Clock{0, 1, 0});
  CHECK(first[2][0] == Clock{0, 3, 1});
  CHECK(first[0][0] == Clock{1, 3, 3});
  const auto second = ref.clocks({{{0, kRes}, {{2, false}, {1, false}, {0, true}}}});
  CHECK(second[2][0] == Clock{0, 0, 1});
  CHECK(second[1][0] == Clock{0, 1, 3});
  CHECK(second[0][0] == Clock{1, 3, 3});
  // Without a grant for everyone, the programs cannot finish.
  CHECK_THROWS_AS(ref.clocks({{{0, kRes}, {{1, false}, {2, false}}}}), std::logic_error);
  CHECK_THROWS_AS(ref.clocks(), std::logic_error);
  // A grant in the other mode is a broken log, not a different order.
  CHECK_THROWS_AS(ref.clocks({{{0, kRes}, {{1, true}, {2, false}, {0, true}}}}),
                  std::logic_error);
}

TEST_CASE("reference model: an exclusive grant merges the shared releases since the last "
          "exclusive one, a shared grant does not",
          "[engine][lock]") {
  ReferenceModel ref(4);
  // Grant order: 1 exclusive, 2 shared, 3 shared, 0 exclusive, 2 shared.
  ref.program(Rank{1}, Prog::clocked_call().acquire(Rank{0}, kRes));
  ref.program(Rank{1}, Prog::clocked_call().release(Rank{0}, kRes));
  ref.program(Rank{2}, Prog::clocked_call().acquire(Rank{0}, kRes, true));
  ref.program(Rank{2}, Prog::clocked_call().release(Rank{0}, kRes, true));
  ref.program(Rank{3}, Prog::clocked_call().acquire(Rank{0}, kRes, true));
  ref.program(Rank{3}, Prog::clocked_call().release(Rank{0}, kRes, true));
  ref.program(Rank{0}, Prog::clocked_call().acquire(Rank{0}, kRes));
  ref.program(Rank{0}, Prog::clocked_call().release(Rank{0}, kRes));
  ref.program(Rank{2}, Prog::clocked_call().acquire(Rank{0}, kRes, true));
  const auto c = ref.clocks({{{0, kRes},
                              {{1, false}, {2, true}, {3, true}, {0, false}, {2, true}}}});
  CHECK(c[2][0] == Clock{0, 2, 1, 0});  // rank 1's release
  CHECK(c[3][0] == Clock{0, 2, 0, 1});  // rank 1's release, not rank 2's
  CHECK(c[0][0] == Clock{1, 2, 2, 2});  // rank 1's and both shared releases
  CHECK(c[2][2] == Clock{2, 2, 3, 2});  // rank 0's release
}

// ---------------------------------------------------------------------------
// Exclusive locks

TEST_CASE("engine locks: exclusive contention from many ranks, many delivery orders",
          "[engine][lock]") {
  // Six ranks, the deposition among them, three epochs each with work inside
  // and between: every order of grants the arrival order allows.
  constexpr std::uint32_t n = 6;
  constexpr std::uint32_t kDep = 3;
  constexpr int kRounds = 3;
  std::set<std::vector<std::uint32_t>> orders;
  for (std::uint64_t seed = 1; seed <= 120; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(n, seed);
    std::vector<std::vector<EngineSim::Submitted>> locks(n), unlocks(n);
    for (int round = 0; round < kRounds; ++round)
      for (std::uint32_t r = 0; r < n; ++r) {
        if ((r + round + seed) % 3 == 0) sim.local(r);
        locks[r].push_back(sim.lock(r, kDep, kRes, false, /*needs_reply=*/true));
        sim.local(r);
        unlocks[r].push_back(sim.unlock(r, kDep, kRes));
      }
    sim.drain();
    REQUIRE(sim.check_finished() == "");

    // Mutual exclusion and FIFO are in check_finished (the lock log); here
    // the clocks: consecutive holders are ordered by happened-before, each
    // lock after the previous holder's unlock.
    const std::vector<std::uint32_t> order = grantees(sim, kDep, kRes);
    REQUIRE(order.size() == n * kRounds);
    orders.insert(order);
    std::vector<std::size_t> seen(n, 0);
    const Clock* prev_unlock = nullptr;
    for (const std::uint32_t r : order) {
      const std::size_t j = seen[r]++;
      const Clock& got = clock_of(sim, r, locks[r][j]);
      if (prev_unlock) CHECK(before(*prev_unlock, got));
      prev_unlock = &clock_of(sim, r, unlocks[r][j]);
    }
    // The lock call names its deposition as its peer.
    CHECK(sim.calls(0).at(static_cast<std::size_t>(locks[0][0].call_index)).peers ==
          ranks({kDep}));
  }
  // The seeds led to many different grant orders.
  CHECK(orders.size() > 50);
}

TEST_CASE("engine locks: an exclusive request waits, and the application waits with it",
          "[engine][lock]") {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(3, seed);
    const auto l1 = sim.lock(1, 0, kRes, false, true);
    sim.drain();
    REQUIRE(sim.engine(1).idle());
    const auto l2 = sim.lock(2, 0, kRes, false, true);
    sim.drain();
    CHECK_FALSE(sim.engine(2).idle());
    // The lock order is the tool's to decide: the application must wait.
    CHECK_FALSE(sim.engine(2).must_not_stall());
    CHECK_THAT(sim.engine(2).blocked_on(), Contains("a lock held at rank 0"));
    CHECK(sim.host(2).replies.empty());
    CHECK(sim.check_locks(false) == "");
    sim.local(1);
    const auto u1 = sim.unlock(1, 0, kRes);
    sim.drain();
    REQUIRE(sim.engine(2).idle());
    const auto u2 = sim.unlock(2, 0, kRes);
    sim.drain();
    REQUIRE(sim.check_finished() == "");
    CHECK(clock_of(sim, 1, l1) == Clock{0, 1, 0});
    CHECK(clock_of(sim, 1, u1) == Clock{0, 3, 0});
    CHECK(clock_of(sim, 2, l2) == Clock{0, 3, 1});
    CHECK(clock_of(sim, 2, u2) == Clock{0, 3, 2});
  }
}

TEST_CASE("engine locks: a shared request passes waiting exclusive ones, which keep their order",
          "[engine][lock]") {
  // Rank 1 holds it shared; rank 2 asks exclusively, then rank 3 shared,
  // then rank 4 exclusively. Rank 3 shares with rank 1 at once (a reader in
  // the middle of MPI_Win_lock_all must not wait behind a writer); rank 2
  // gets it when both readers are gone, and rank 4 after rank 2.
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(5, seed);
    const auto s1 = sim.lock(1, 0, kRes, true, true);
    sim.drain();
    REQUIRE(sim.engine(1).idle());
    const auto e2 = sim.lock(2, 0, kRes, false, true);
    sim.drain();
    CHECK_FALSE(sim.engine(2).idle());
    const auto s3 = sim.lock(3, 0, kRes, true, true);
    sim.drain();
    CHECK(sim.engine(3).idle());
    const auto e4 = sim.lock(4, 0, kRes, false, true);
    sim.drain();
    CHECK_FALSE(sim.engine(4).idle());
    CHECK(sim.check_locks(false) == "");
    sim.local(1);
    const auto u1 = sim.unlock(1, 0, kRes, true);
    sim.drain();
    CHECK_FALSE(sim.engine(2).idle());  // rank 3 still reads
    const auto u3 = sim.unlock(3, 0, kRes, true);
    sim.drain();
    CHECK(sim.engine(2).idle());
    CHECK_FALSE(sim.engine(4).idle());
    const auto u2 = sim.unlock(2, 0, kRes);
    sim.drain();
    CHECK(sim.engine(4).idle());
    const auto u4 = sim.unlock(4, 0, kRes);
    sim.drain();
    REQUIRE(sim.check_finished() == "");
    CHECK(grantees(sim, 0, kRes) == std::vector<std::uint32_t>{1, 3, 2, 4});
    CHECK(clock_of(sim, 1, s1) == Clock{0, 1, 0, 0, 0});
    CHECK(clock_of(sim, 1, u1) == Clock{0, 3, 0, 0, 0});
    CHECK(clock_of(sim, 3, s3) == Clock{0, 0, 0, 1, 0});
    CHECK(clock_of(sim, 3, u3) == Clock{0, 0, 0, 2, 0});
    // Both readers' releases, none of them before.
    CHECK(clock_of(sim, 2, e2) == Clock{0, 3, 1, 2, 0});
    CHECK(clock_of(sim, 2, u2) == Clock{0, 3, 2, 2, 0});
    CHECK(clock_of(sim, 4, e4) == Clock{0, 3, 2, 2, 1});
    CHECK(clock_of(sim, 4, u4) == Clock{0, 3, 2, 2, 2});
  }
}

TEST_CASE("engine locks: after an exclusive release the earliest waiting request goes first",
          "[engine][lock]") {
  // Rank 1 writes; rank 2 asks exclusively, rank 3 shared, rank 4
  // exclusively. Rank 2 came first: it goes before rank 3, and rank 3 (a
  // reader, with no writer holding it any more) before rank 4.
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(5, seed);
    sim.lock(1, 0, kRes);
    sim.drain();
    for (std::uint32_t r : {2u, 3u, 4u}) {
      sim.lock(r, 0, kRes, r == 3, true);
      sim.drain();
      CHECK_FALSE(sim.engine(r).idle());
    }
    sim.unlock(1, 0, kRes);
    sim.drain();
    CHECK(sim.engine(2).idle());
    CHECK_FALSE(sim.engine(3).idle());
    sim.unlock(2, 0, kRes);
    sim.drain();
    CHECK(sim.engine(3).idle());
    CHECK_FALSE(sim.engine(4).idle());
    sim.unlock(3, 0, kRes, true);
    sim.drain();
    CHECK(sim.engine(4).idle());
    sim.unlock(4, 0, kRes);
    sim.drain();
    REQUIRE(sim.check_finished() == "");
    CHECK(grantees(sim, 0, kRes) == std::vector<std::uint32_t>{1, 2, 3, 4});
  }
}

// ---------------------------------------------------------------------------
// Shared locks

TEST_CASE("engine locks: shared grants side by side; exclusive merges every shared release "
          "since, shared only the exclusive release",
          "[engine][lock]") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(5, seed);
    // Three readers at once: none has released when the last is granted.
    const auto r1 = sim.lock(1, 0, kRes, true, true);
    const auto r2 = sim.lock(2, 0, kRes, true, true);
    const auto r3 = sim.lock(3, 0, kRes, true, true);
    sim.drain();
    for (std::uint32_t r : {1u, 2u, 3u}) CHECK(sim.engine(r).idle());
    CHECK(clock_of(sim, 1, r1) == Clock{0, 1, 0, 0, 0});
    CHECK(clock_of(sim, 2, r2) == Clock{0, 0, 1, 0, 0});
    CHECK(clock_of(sim, 3, r3) == Clock{0, 0, 0, 1, 0});
    // A writer waits for all three.
    const auto w4 = sim.lock(4, 0, kRes, false, true);
    sim.drain();
    CHECK_FALSE(sim.engine(4).idle());
    for (std::uint32_t r : {1u, 2u}) {
      sim.local(r);
      sim.unlock(r, 0, kRes, true);
    }
    sim.drain();
    CHECK_FALSE(sim.engine(4).idle());  // rank 3 still reads
    sim.unlock(3, 0, kRes, true);
    sim.drain();
    REQUIRE(sim.engine(4).idle());
    CHECK(clock_of(sim, 4, w4) == Clock{0, 3, 3, 2, 1});
    const auto u4 = sim.unlock(4, 0, kRes);
    sim.drain();
    CHECK(clock_of(sim, 4, u4) == Clock{0, 3, 3, 2, 2});
    // A reader after the writer: the writer's release.
    const auto r1b = sim.lock(1, 0, kRes, true);
    const auto u1b = sim.unlock(1, 0, kRes, true);
    sim.drain();
    CHECK(clock_of(sim, 1, r1b) == Clock{0, 4, 3, 2, 2});
    CHECK(clock_of(sim, 1, u1b) == Clock{0, 5, 3, 2, 2});
    // Another reader after that reader's release: still only the writer's.
    const auto r2b = sim.lock(2, 0, kRes, true);
    const auto u2b = sim.unlock(2, 0, kRes, true);
    sim.drain();
    CHECK(clock_of(sim, 2, r2b) == Clock{0, 3, 4, 2, 2});
    CHECK(clock_of(sim, 2, u2b) == Clock{0, 3, 5, 2, 2});
    // A writer now: the last writer's release and both readers' since.
    const auto w3 = sim.lock(3, 0, kRes);
    sim.unlock(3, 0, kRes);
    sim.drain();
    CHECK(clock_of(sim, 3, w3) == Clock{0, 5, 5, 3, 2});
    REQUIRE(sim.check_finished() == "");
  }
}

TEST_CASE("engine locks: readers and writers mixed at random match the reference",
          "[engine][lock]") {
  // Four locks: two resources at rank 0, the same resource id at rank 3 (a
  // different lock), one at rank 4. Ranks lock one or two of them (nested in
  // one global order, so no cycle), with work inside and between, and meet
  // in a barrier in the middle.
  constexpr std::uint32_t n = 5;
  const std::vector<std::pair<std::uint32_t, std::uint64_t>> kLocks{
      {0, kRes}, {0, kRes2}, {3, kRes}, {4, 9}};
  std::set<std::string> orders;
  for (std::uint64_t seed = 1; seed <= 80; ++seed) {
    INFO("seed " << seed);
    EngineSim sim(n, seed);
    sim.set_applications_wait(true);
    sim.register_group_everywhere(kWorld, all_ranks(n));
    std::mt19937_64 rng(seed * 7919);
    auto coin = [&](int in) { return static_cast<int>(rng() % static_cast<unsigned>(in)) == 0; };
    for (int phase = 0; phase < 2; ++phase) {
      for (std::uint32_t r = 0; r < n; ++r) {
        for (int epoch = 0; epoch < 3; ++epoch) {
          std::size_t a = rng() % kLocks.size();
          std::size_t b = rng() % kLocks.size();
          if (a > b) std::swap(a, b);
          const bool nested = a != b && coin(3);
          const bool sa = coin(2), sb = coin(2);
          if (coin(2)) sim.local(r);
          sim.lock(r, kLocks[a].first, kLocks[a].second, sa, coin(2));
          if (nested) sim.lock(r, kLocks[b].first, kLocks[b].second, sb, coin(2));
          if (coin(2)) sim.local(r);
          if (nested) sim.unlock(r, kLocks[b].first, kLocks[b].second, sb);
          sim.unlock(r, kLocks[a].first, kLocks[a].second, sa);
        }
      }
      for (std::uint32_t r = 0; r < n; ++r) sim.collective(r, coll(kWorld, phase + 1), true);
    }
    sim.drain();
    REQUIRE(sim.check_finished() == "");
    std::string order;
    for (const auto& [key, grants] : grant_order(sim.lock_log()))
      for (const GrantRecord& g : grants) order += std::to_string(g.to) + (g.shared ? "s" : "x");
    orders.insert(order);
  }
  CHECK(orders.size() > 40);
}

// ---------------------------------------------------------------------------
// Where locks live

TEST_CASE("engine locks: a rank locks its own resource (it is the deposition)",
          "[engine][lock]") {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(2, seed);
    const auto l0 = sim.lock(0, 0, kRes, false, true);
    sim.drain();
    REQUIRE(sim.engine(0).idle());
    const auto l1 = sim.lock(1, 0, kRes, false, true);
    sim.drain();
    CHECK_FALSE(sim.engine(1).idle());
    const auto u0 = sim.unlock(0, 0, kRes);
    sim.drain();
    REQUIRE(sim.engine(1).idle());
    const auto u1 = sim.unlock(1, 0, kRes);
    const auto s0 = sim.lock(0, 0, kRes, true, true);
    const auto v0 = sim.unlock(0, 0, kRes, true);
    sim.drain();
    REQUIRE(sim.check_finished() == "");
    CHECK(clock_of(sim, 0, l0) == Clock{1, 0});
    CHECK(clock_of(sim, 0, u0) == Clock{2, 0});
    CHECK(clock_of(sim, 1, l1) == Clock{2, 1});
    CHECK(clock_of(sim, 1, u1) == Clock{2, 2});
    CHECK(clock_of(sim, 0, s0) == Clock{3, 2});
    CHECK(clock_of(sim, 0, v0) == Clock{4, 2});
    CHECK(sim.calls(0).at(0).peers == ranks({0}));
  }
  // And contended, both ranks at once, many times.
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(2, seed);
    for (int i = 0; i < 4; ++i)
      for (std::uint32_t r = 0; r < 2; ++r) {
        const bool shared = (i + r) % 3 == 0;
        sim.lock(r, 0, kRes, shared, true);
        sim.local(r);
        sim.unlock(r, 0, kRes, shared);
      }
    sim.drain();
    REQUIRE(sim.check_finished() == "");
  }
}

TEST_CASE("engine locks: several resources at one deposition are independent locks",
          "[engine][lock]") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(3, seed);
    // Rank 1 uses A at rank 0 once.
    sim.lock(1, 0, kRes);
    sim.local(1);
    const auto ua = sim.unlock(1, 0, kRes);
    sim.drain();
    CHECK(clock_of(sim, 1, ua) == Clock{0, 3, 0});
    // B at rank 0 knows nothing of A's release.
    const auto lb = sim.lock(2, 0, kRes2, false, true);
    const auto ub = sim.unlock(2, 0, kRes2);
    sim.drain();
    CHECK(clock_of(sim, 2, lb) == Clock{0, 0, 1});
    CHECK(clock_of(sim, 2, ub) == Clock{0, 0, 2});
    // Rank 1 holds B while rank 2 takes A: granted side by side.
    const auto lb1 = sim.lock(1, 0, kRes2, false, true);
    sim.drain();
    const auto la2 = sim.lock(2, 0, kRes, false, true);
    sim.drain();
    CHECK(sim.engine(2).idle());
    CHECK(clock_of(sim, 1, lb1) == Clock{0, 4, 2});
    CHECK(clock_of(sim, 2, la2) == Clock{0, 3, 3});
    // The same resource id at another deposition is another lock.
    const auto other = sim.lock(1, 1, kRes, false, true);
    sim.drain();
    CHECK(sim.engine(1).idle());
    CHECK(clock_of(sim, 1, other) == Clock{0, 5, 2});
    sim.unlock(1, 1, kRes);
    sim.unlock(1, 0, kRes2);
    sim.unlock(2, 0, kRes);
    sim.drain();
    REQUIRE(sim.check_finished() == "");
  }
}

// ---------------------------------------------------------------------------
// lock_all: one call, every member's lock

namespace {

Prog lock_all(std::uint32_t n, std::uint64_t resource) {
  Prog p = Prog::clocked_call(52);
  for (std::uint32_t t = 0; t < n; ++t) p.acquire(Rank{t}, resource, true);
  return p;
}
Prog unlock_all(std::uint32_t n, std::uint64_t resource) {
  Prog p = Prog::clocked_call(53);
  for (std::uint32_t t = 0; t < n; ++t) p.release(Rank{t}, resource, true);
  return p;
}

}  // namespace

TEST_CASE("engine locks: lock_all waits for every member's lock; unlock_all releases them all",
          "[engine][lock]") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(4, seed);
    // Rank 2 writes at rank 1.
    sim.lock(2, 1, kRes);
    sim.local(2);
    sim.drain();
    const auto all = sim.submit(0, lock_all(4, kRes), true);
    sim.drain();
    CHECK_FALSE(sim.engine(0).idle());
    CHECK_THAT(sim.engine(0).blocked_on(), Contains("a lock held at rank 1"));
    CHECK(sim.host(0).replies.empty());
    const auto u2 = sim.unlock(2, 1, kRes);
    sim.drain();
    REQUIRE(sim.engine(0).idle());
    CHECK(clock_of(sim, 2, u2) == Clock{0, 0, 3, 0});
    // One tick, and rank 2's release merged on the way.
    CHECK(clock_of(sim, 0, all) == Clock{1, 0, 3, 0});
    CHECK(sim.calls(0).at(0).peers == ranks({0, 1, 2, 3}));
    // A second reader at once, beside the first everywhere.
    const auto all3 = sim.submit(3, lock_all(4, kRes), true);
    sim.drain();
    REQUIRE(sim.engine(3).idle());
    CHECK(clock_of(sim, 3, all3) == Clock{0, 0, 3, 1});
    const auto un0 = sim.submit(0, unlock_all(4, kRes));
    sim.submit(3, unlock_all(4, kRes));
    sim.drain();
    CHECK(clock_of(sim, 0, un0) == Clock{2, 0, 3, 0});
    // A writer at rank 2 afterwards merges both readers' releases there.
    const auto w1 = sim.lock(1, 2, kRes);
    sim.unlock(1, 2, kRes);
    sim.drain();
    CHECK(clock_of(sim, 1, w1) == Clock{2, 1, 3, 2});
    REQUIRE(sim.check_finished() == "");
  }
}

TEST_CASE("engine locks: lock_all programs among single locks at random match the reference",
          "[engine][lock]") {
  constexpr std::uint32_t n = 4;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(n, seed);
    std::mt19937_64 rng(seed);
    for (std::uint32_t r = 0; r < n; ++r)
      for (int epoch = 0; epoch < 3; ++epoch) {
        if (rng() % 2) {
          sim.submit(r, lock_all(n, kRes), true);
          if (rng() % 2) sim.local(r);
          sim.submit(r, unlock_all(n, kRes));
        } else {
          const auto t = static_cast<std::uint32_t>(rng() % n);
          const bool shared = rng() % 3 == 0;
          sim.lock(r, t, kRes, shared, true);
          if (rng() % 2) sim.local(r);
          sim.unlock(r, t, kRes, shared);
        }
      }
    sim.drain();
    REQUIRE(sim.check_finished() == "");
  }
}

// ---------------------------------------------------------------------------
// What is left behind, and what is refused

TEST_CASE("engine locks: afterwards only the depositions' release clocks remain",
          "[engine][lock]") {
  EngineSim sim(3, 5);
  // A at rank 0: exclusive, then shared: it keeps two clocks.
  sim.lock(1, 0, kRes);
  sim.unlock(1, 0, kRes);
  sim.drain();
  sim.lock(2, 0, kRes, true);
  sim.unlock(2, 0, kRes, true);
  // B at rank 0: shared only: one clock.
  sim.lock(1, 0, kRes2, true);
  sim.unlock(1, 0, kRes2, true);
  // A at rank 1: shared, then exclusive: the exclusive release alone.
  sim.lock(0, 1, kRes, true);
  sim.unlock(0, 1, kRes, true);
  sim.drain();
  sim.lock(2, 1, kRes);
  sim.unlock(2, 1, kRes);
  sim.drain();
  REQUIRE(sim.check_finished() == "");
  CHECK(pooled(sim, 0) == 3);
  CHECK(pooled(sim, 1) == 1);
  CHECK(pooled(sim, 2) == 0);
  for (std::uint32_t r = 0; r < 3; ++r) CHECK(pending_grants(sim, r) == 0);
}

TEST_CASE("engine locks: releasing a lock not held is fatal at the deposition", "[engine][lock]") {
  {
    EngineSim sim(2, 1);
    sim.unlock(1, 0, kRes);
    CHECK_THROWS_AS(sim.drain(), SimFatal);
  }
  {
    // Held shared, released exclusively.
    EngineSim sim(2, 1);
    sim.lock(1, 0, kRes, true);
    sim.unlock(1, 0, kRes, false);
    CHECK_THROWS_AS(sim.drain(), SimFatal);
  }
  {
    // Held exclusively, released shared.
    EngineSim sim(2, 1);
    sim.lock(1, 0, kRes, false);
    sim.unlock(1, 0, kRes, true);
    CHECK_THROWS_AS(sim.drain(), SimFatal);
  }
}
