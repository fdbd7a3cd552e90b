// LockDeposition (engines/vclock/lock_deposition.h), alone, its messages
// recorded: the order of the holdings (exclusive requests first come first
// served, shared ones whenever no exclusive holder exists), the clock each
// grant merges (an exclusive grant: the last exclusive release and the
// shared releases since; a shared grant: the last exclusive release), sent
// only once the release clocks it needs are in; deposits and fetches;
// leases and their recall; protocol errors; retiring a resource.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "clock_pool.h"
#include "lock_deposition.h"
#include "messages.h"
#include "outbox.h"
#include "support/recording_outbox.h"
#include "vcx/call_program.h"

using namespace vcx;
using namespace vcx::vclock;

namespace {

constexpr std::size_t kWidth = 4;
constexpr std::uint64_t kRes = 0x51;
constexpr std::uint64_t kRes2 = 0x52;

using Values = std::vector<ClockValue>;

using Sent = vcx::test::SentMessage;
using ProtocolError = vcx::test::PartFatal;

const std::uint16_t kExclusive = 0;
const std::uint16_t kShared = kResourceShared;
const std::uint16_t kDeposit = kResourceDeposit;
const std::uint16_t kFetch = kResourceFetch | kResourceShared;

struct Fixture {
  ClockPool pool{kWidth};
  vcx::test::RecordingOutbox out{kWidth};
  LockDeposition dep{pool, out};

  static P2PHeader header(std::uint64_t resource, std::uint64_t seq, std::uint16_t flags) {
    P2PHeader h{};
    h.queue_a = resource;
    h.seq = seq;
    h.flags = flags;
    return h;
  }
  void acquire(std::uint32_t r, std::uint64_t seq, std::uint16_t flags, std::uint64_t res = kRes) {
    dep.on_acquire(Rank{r}, header(res, seq, flags));
  }
  void release(std::uint32_t r, std::uint64_t seq, std::uint16_t flags, std::uint64_t res = kRes) {
    dep.on_release(Rank{r}, header(res, seq, flags));
  }
  void release_clock(std::uint32_t r, std::uint64_t seq, std::uint16_t flags, const Values& c,
                     std::uint64_t res = kRes) {
    dep.on_release_clock(Rank{r}, header(res, seq, flags), pool.take_copy(c));
  }
  // The messages sent since the last call.
  std::vector<Sent> take() { return std::exchange(out.sent, {}); }
  // Retires what is left; then nothing may be held, and no clock out of the pool.
  void finish(std::initializer_list<std::uint64_t> resources = {kRes}) {
    for (auto r : resources) dep.retire(r);
    CHECK(dep.resources() == 0);
    CHECK(pool.in_use() == 0);
  }
};

// The Grant messages among `sent`, as "rank/seq".
std::vector<std::string> grants(const std::vector<Sent>& sent, MsgType type = MsgType::Grant) {
  std::vector<std::string> out;
  for (const Sent& s : sent)
    if (s.type == type) out.push_back(std::to_string(s.dst.value) + "/" + std::to_string(s.seq));
  return out;
}
const Sent* find(const std::vector<Sent>& sent, MsgType type, std::uint32_t rank,
                 std::uint64_t seq) {
  for (const Sent& s : sent)
    if (s.type == type && s.dst == Rank{rank} && s.seq == seq) return &s;
  return nullptr;
}
// The clock of the GrantClock to rank/seq among `sent`; fails the test without one.
Values grant_clock(const std::vector<Sent>& sent, std::uint32_t rank, std::uint64_t seq) {
  const Sent* s = find(sent, MsgType::GrantClock, rank, seq);
  INFO("GrantClock to " << rank << "/" << seq);
  REQUIRE(s != nullptr);
  REQUIRE(s->clock.has_value());
  return *s->clock;
}
Values max_of(std::initializer_list<Values> cs) {
  Values out(kWidth, 0);
  for (const Values& c : cs)
    for (std::size_t i = 0; i < kWidth; ++i) out[i] = std::max(out[i], c[i]);
  return out;
}
const Values kZero(kWidth, 0);

}  // namespace

// ---------------------------------------------------------------------------
// Order

TEST_CASE("lock deposition: exclusive requests are granted first come first served, one at a time",
          "[vclock-parts][lock-deposition]") {
  Fixture f;
  f.acquire(1, 1, kExclusive);
  auto s = f.take();
  CHECK(grants(s) == std::vector<std::string>{"1/1"});
  const Sent* g = find(s, MsgType::Grant, 1, 1);
  REQUIRE(g);
  CHECK(g->queue.a == kRes);
  CHECK_FALSE(g->clock.has_value());  // the order carries no clock
  CHECK(g->flags == 0);
  // Nothing released before: the grant merges nothing.
  CHECK(grant_clock(s, 1, 1) == kZero);

  f.acquire(2, 1, kExclusive);
  f.acquire(3, 1, kExclusive);
  f.acquire(4, 7, kExclusive);
  CHECK(f.take().empty());

  f.release(1, 1, kExclusive);
  CHECK(grants(f.take()) == std::vector<std::string>{"2/1"});
  f.release_clock(1, 1, kExclusive, {1, 0, 0, 0});
  f.release(2, 1, kExclusive);
  CHECK(grants(f.take()) == std::vector<std::string>{"3/1"});
  f.release_clock(2, 1, kExclusive, {0, 1, 0, 0});
  f.release(3, 1, kExclusive);
  CHECK(grants(f.take()) == std::vector<std::string>{"4/7"});
  f.release_clock(3, 1, kExclusive, {0, 0, 1, 0});
  f.release(4, 7, kExclusive);
  f.release_clock(4, 7, kExclusive, {0, 0, 0, 1});
  CHECK(grants(f.take()).empty());
  f.finish();
}

TEST_CASE("lock deposition: shared requests are granted whenever no exclusive holder exists",
          "[vclock-parts][lock-deposition]") {
  Fixture f;
  f.acquire(1, 1, kShared);
  f.acquire(2, 1, kShared);
  auto s = f.take();
  CHECK(grants(s) == std::vector<std::string>{"1/1", "2/1"});
  CHECK(find(s, MsgType::Grant, 1, 1)->flags == kResourceShared);
  CHECK((find(s, MsgType::GrantClock, 1, 1)->flags & kResourceShared) != 0);

  // An exclusive request waits for the shared holders ...
  f.acquire(3, 1, kExclusive);
  CHECK(grants(f.take()).empty());
  // ... and a later shared one goes past it: no exclusive holder exists.
  f.acquire(4, 1, kShared);
  CHECK(grants(f.take()) == std::vector<std::string>{"4/1"});

  f.release(1, 1, kShared);
  f.release(2, 1, kShared);
  CHECK(grants(f.take()).empty());  // 4 still holds it
  f.release(4, 1, kShared);
  CHECK(grants(f.take()) == std::vector<std::string>{"3/1"});

  // With an exclusive holder, shared requests wait too.
  f.acquire(5, 1, kShared);
  f.acquire(6, 1, kShared);
  f.acquire(7, 1, kExclusive);
  CHECK(grants(f.take()).empty());
  // Released: the shared ones, first in line, are granted together; the
  // exclusive one waits for them.
  f.release(3, 1, kExclusive);
  CHECK(grants(f.take()) == std::vector<std::string>{"5/1", "6/1"});
  f.release(5, 1, kShared);
  CHECK(grants(f.take()).empty());
  f.release(6, 1, kShared);
  CHECK(grants(f.take()) == std::vector<std::string>{"7/1"});
  f.release(7, 1, kExclusive);

  for (std::uint32_t r : {1, 2, 4, 5, 6}) f.release_clock(r, 1, kShared, kZero);
  for (std::uint32_t r : {3, 7}) f.release_clock(r, 1, kExclusive, kZero);
  f.finish();
}

TEST_CASE("lock deposition: after an exclusive release the next exclusive waiter goes first, "
          "then the shared waiters",
          "[vclock-parts][lock-deposition]") {
  Fixture f;
  f.acquire(1, 1, kExclusive);
  f.acquire(2, 1, kExclusive);
  f.acquire(3, 1, kShared);
  f.acquire(4, 1, kShared);
  f.acquire(5, 1, kExclusive);
  CHECK(grants(f.take()) == std::vector<std::string>{"1/1"});
  f.release(1, 1, kExclusive);
  CHECK(grants(f.take()) == std::vector<std::string>{"2/1"});
  f.release(2, 1, kExclusive);
  // Both shared ones at once; the exclusive one that came after them waits.
  CHECK(grants(f.take()) == std::vector<std::string>{"3/1", "4/1"});
  f.release(4, 1, kShared);
  f.release(3, 1, kShared);
  CHECK(grants(f.take()) == std::vector<std::string>{"5/1"});
  f.release(5, 1, kExclusive);
  for (std::uint32_t r : {1, 2, 5}) f.release_clock(r, 1, kExclusive, kZero);
  for (std::uint32_t r : {3, 4}) f.release_clock(r, 1, kShared, kZero);
  f.finish();
}

// ---------------------------------------------------------------------------
// Clocks

TEST_CASE("lock deposition: an exclusive grant merges the last exclusive release and the shared "
          "releases since, a shared grant the last exclusive release",
          "[vclock-parts][lock-deposition]") {
  // Each release clock has an entry of its own, so that each grant shows
  // exactly which releases it merged.
  const Values a{1, 0, 0, 0}, b{0, 2, 0, 0}, c{0, 0, 3, 0}, d{0, 0, 0, 4}, e{5, 0, 0, 0},
      g{0, 6, 0, 0};
  Fixture f;
  f.acquire(1, 1, kExclusive);
  f.release(1, 1, kExclusive);
  f.release_clock(1, 1, kExclusive, a);
  f.take();

  f.acquire(2, 1, kShared);
  f.acquire(3, 1, kShared);
  auto s = f.take();
  CHECK(grant_clock(s, 2, 1) == a);
  CHECK(grant_clock(s, 3, 1) == a);
  f.release(2, 1, kShared);
  f.release_clock(2, 1, kShared, b);
  f.release(3, 1, kShared);
  f.release_clock(3, 1, kShared, c);

  // Shared: the exclusive release only, not the shared ones before it.
  f.acquire(1, 2, kShared);
  CHECK(grant_clock(f.take(), 1, 2) == a);
  // Exclusive: waits for that holder; merges a and every shared release since.
  f.acquire(2, 2, kExclusive);
  CHECK(f.take().empty());
  f.release(1, 2, kShared);
  f.release_clock(1, 2, kShared, d);
  s = f.take();
  CHECK(grants(s) == std::vector<std::string>{"2/2"});
  CHECK(grant_clock(s, 2, 2) == max_of({a, b, c, d}));
  CHECK((find(s, MsgType::GrantClock, 2, 2)->flags & kResourceShared) == 0);

  // Its release stands for all earlier ones now: later grants merge only it
  // (and the shared releases after it).
  f.release(2, 2, kExclusive);
  f.release_clock(2, 2, kExclusive, e);
  f.acquire(3, 2, kShared);
  CHECK(grant_clock(f.take(), 3, 2) == e);
  f.release(3, 2, kShared);
  f.release_clock(3, 2, kShared, g);
  f.acquire(1, 3, kExclusive);
  CHECK(grant_clock(f.take(), 1, 3) == max_of({e, g}));
  f.release(1, 3, kExclusive);
  f.release_clock(1, 3, kExclusive, kZero);
  f.finish();
}

TEST_CASE("lock deposition: a grant's clock goes out once every release clock it needs is in",
          "[vclock-parts][lock-deposition]") {
  const Values a{1, 0, 0, 0}, b{0, 2, 0, 0}, c{0, 0, 3, 0};
  // The release clocks of the exclusive holder 0 and the shared holders 1
  // and 2 arrive in every order; 3's exclusive grant needs all three, the
  // shared grants of 1 and 2 only 0's.
  struct Late {
    std::uint32_t rank;
    std::uint16_t flags;
    Values clock;
  };
  std::vector<Late> late{{0, kExclusive, a}, {1, kShared, b}, {2, kShared, c}};
  std::vector<int> order{0, 1, 2};
  int orders = 0;
  do {
    ++orders;
    INFO("arrival order " << order[0] << order[1] << order[2]);
    Fixture f;
    f.acquire(0, 1, kExclusive);
    f.release(0, 1, kExclusive);
    f.acquire(1, 1, kShared);
    f.acquire(2, 1, kShared);
    auto s = f.take();
    CHECK(grants(s) == std::vector<std::string>{"0/1", "1/1", "2/1"});
    CHECK(grants(s, MsgType::GrantClock) == std::vector<std::string>{"0/1"});
    f.release(1, 1, kShared);
    f.release(2, 1, kShared);
    f.acquire(3, 1, kExclusive);
    s = f.take();
    CHECK(grants(s) == std::vector<std::string>{"3/1"});
    CHECK(grants(s, MsgType::GrantClock).empty());

    bool exclusive_in = false;
    int arrived = 0;
    for (int i : order) {
      const Late& l = late[static_cast<std::size_t>(i)];
      f.release_clock(l.rank, 1, l.flags, l.clock);
      ++arrived;
      s = f.take();
      std::vector<std::string> expected;
      if (l.rank == 0) {
        exclusive_in = true;
        expected = {"1/1", "2/1"};
      }
      if (arrived == 3) expected.push_back("3/1");
      std::vector<std::string> got = grants(s, MsgType::GrantClock);
      std::sort(got.begin(), got.end());
      CHECK(got == expected);
      if (l.rank == 0) {
        CHECK(grant_clock(s, 1, 1) == a);
        CHECK(grant_clock(s, 2, 1) == a);
      }
      if (arrived == 3) CHECK(grant_clock(s, 3, 1) == max_of({a, b, c}));
    }
    CHECK(exclusive_in);

    // The next holder merges 3's release alone, sent at once when it is in.
    f.acquire(4, 1, kExclusive);
    f.release(3, 1, kExclusive);
    s = f.take();
    CHECK(grants(s) == std::vector<std::string>{"4/1"});
    CHECK(grants(s, MsgType::GrantClock).empty());
    f.release_clock(3, 1, kExclusive, {0, 0, 0, 9});
    CHECK(grant_clock(f.take(), 4, 1) == Values{0, 0, 0, 9});
    f.release(4, 1, kExclusive);
    f.release_clock(4, 1, kExclusive, kZero);
    f.finish();
  } while (std::next_permutation(order.begin(), order.end()));
  CHECK(orders == 6);
}

// ---------------------------------------------------------------------------
// Deposits and fetches

TEST_CASE("lock deposition: deposits are granted at once and merge nothing; fetches merge them all",
          "[vclock-parts][lock-deposition]") {
  const Values a{1, 0, 0, 0}, c1{0, 2, 0, 0}, c2{0, 0, 3, 0}, c4{0, 1, 0, 5};
  Fixture f;
  // An exclusive release before the deposits.
  f.acquire(0, 1, kExclusive);
  f.release(0, 1, kExclusive);
  f.release_clock(0, 1, kExclusive, a);
  f.take();

  f.acquire(1, 1, kDeposit);
  f.acquire(2, 1, kDeposit);
  auto s = f.take();
  CHECK(grants(s) == std::vector<std::string>{"1/1", "2/1"});
  CHECK((find(s, MsgType::Grant, 1, 1)->flags & kResourceDeposit) != 0);
  // Nothing merged, not even the exclusive release.
  CHECK(grant_clock(s, 1, 1) == kZero);
  CHECK(grant_clock(s, 2, 1) == kZero);

  // A fetch holds nothing and is granted, but its clock waits for the
  // deposits in progress.
  f.acquire(3, 1, kFetch);
  s = f.take();
  CHECK(grants(s) == std::vector<std::string>{"3/1"});
  CHECK((find(s, MsgType::Grant, 3, 1)->flags & kResourceFetch) != 0);
  CHECK(grants(s, MsgType::GrantClock).empty());
  f.release_clock(2, 1, kDeposit, c2);
  CHECK(f.take().empty());
  f.release_clock(1, 1, kDeposit, c1);
  CHECK(grant_clock(f.take(), 3, 1) == max_of({a, c1, c2}));

  // A later deposit still merges nothing; its clock adds to the others.
  f.acquire(1, 2, kDeposit);
  CHECK(grant_clock(f.take(), 1, 2) == kZero);
  f.release_clock(1, 2, kDeposit, c4);
  f.acquire(4, 1, kFetch);
  CHECK(grant_clock(f.take(), 4, 1) == max_of({a, c1, c2, c4}));

  // The fetches hold nothing: an exclusive request is granted at once, and
  // merges the deposits as the exclusive release they add to.
  f.acquire(5, 1, kExclusive);
  s = f.take();
  CHECK(grants(s) == std::vector<std::string>{"5/1"});
  CHECK(grant_clock(s, 5, 1) == max_of({a, c1, c2, c4}));
  // A deposit is granted at once even while an exclusive holder holds it.
  f.acquire(2, 2, kDeposit);
  s = f.take();
  CHECK(grants(s) == std::vector<std::string>{"2/2"});
  CHECK(grant_clock(s, 2, 2) == kZero);
  f.release(5, 1, kExclusive);
  f.release_clock(5, 1, kExclusive, {0, 0, 0, 7});
  f.release_clock(2, 2, kDeposit, {8, 0, 0, 0});
  f.acquire(6, 1, kFetch);
  CHECK(grant_clock(f.take(), 6, 1) == Values{8, 0, 0, 7});
  f.finish();
}

// ---------------------------------------------------------------------------
// Leases

TEST_CASE("lock deposition: a leasable grant when nobody waits is a lease, recalled once "
          "somebody waits",
          "[vclock-parts][lock-deposition]") {
  Fixture f;
  f.acquire(1, 1, kExclusive | kResourceLeasable);
  auto s = f.take();
  const Sent* g = find(s, MsgType::Grant, 1, 1);
  REQUIRE(g);
  CHECK((g->flags & kResourceLeasable) != 0);
  CHECK((g->flags & kResourceShared) == 0);

  // Somebody waits: the lease holder is asked to give it back, once.
  f.acquire(2, 1, kExclusive | kResourceLeasable);
  s = f.take();
  REQUIRE(s.size() == 1);
  CHECK(s[0].type == MsgType::Recall);
  CHECK(s[0].dst == Rank{1});
  CHECK(s[0].seq == 1);
  CHECK(s[0].queue.a == kRes);
  CHECK_FALSE(s[0].clock.has_value());
  f.acquire(3, 1, kShared);
  CHECK(f.take().empty());

  // Granted while another still waits: no lease.
  f.release(1, 1, kExclusive);
  s = f.take();
  CHECK(grants(s) == std::vector<std::string>{"2/1"});
  CHECK((find(s, MsgType::Grant, 2, 1)->flags & kResourceLeasable) == 0);
  // So nothing to recall when yet another request waits.
  f.acquire(4, 1, kExclusive);
  CHECK(grants(f.take(), MsgType::Recall).empty());
  f.release(2, 1, kExclusive);
  f.release(3, 1, kShared);
  f.release(4, 1, kExclusive);
  f.release_clock(1, 1, kExclusive, kZero);
  f.release_clock(2, 1, kExclusive, kZero);
  f.release_clock(3, 1, kShared, kZero);
  f.release_clock(4, 1, kExclusive, kZero);
  f.take();
  f.finish();
}

TEST_CASE("lock deposition: shared leases are all recalled; a lease given back is not",
          "[vclock-parts][lock-deposition]") {
  Fixture f;
  f.acquire(1, 1, kShared | kResourceLeasable);
  f.acquire(2, 1, kShared | kResourceLeasable);
  auto s = f.take();
  CHECK((find(s, MsgType::Grant, 1, 1)->flags & kResourceLeasable) != 0);
  CHECK((find(s, MsgType::Grant, 2, 1)->flags & kResourceLeasable) != 0);
  // Holder 2 gives its lease back unasked.
  f.release(2, 1, kShared);
  f.acquire(3, 1, kExclusive);
  s = f.take();
  CHECK(grants(s, MsgType::Recall) == std::vector<std::string>{"1/1"});
  f.release(1, 1, kShared);
  CHECK(grants(f.take()) == std::vector<std::string>{"3/1"});
  f.release(3, 1, kExclusive);

  // Released before anybody came: nothing to recall.
  f.acquire(4, 1, kExclusive | kResourceLeasable);
  f.release(4, 1, kExclusive);
  f.acquire(5, 1, kExclusive);
  s = f.take();
  CHECK(grants(s, MsgType::Recall).empty());
  CHECK(grants(s) == std::vector<std::string>{"4/1", "5/1"});
  f.release(5, 1, kExclusive);

  // Deposits and fetches hold nothing: never a lease.
  f.acquire(6, 1, kDeposit | kResourceLeasable);
  f.acquire(7, 1, kFetch | kResourceLeasable);
  s = f.take();
  CHECK((find(s, MsgType::Grant, 6, 1)->flags & kResourceLeasable) == 0);
  CHECK((find(s, MsgType::Grant, 7, 1)->flags & kResourceLeasable) == 0);

  for (std::uint32_t r : {1, 2}) f.release_clock(r, 1, kShared, kZero);
  for (std::uint32_t r : {3, 4, 5}) f.release_clock(r, 1, kExclusive, kZero);
  f.release_clock(6, 1, kDeposit, kZero);
  f.take();
  f.finish();
}

// ---------------------------------------------------------------------------
// Protocol errors and retiring

TEST_CASE("lock deposition: releases without a holder or of an unknown lock are fatal",
          "[vclock-parts][lock-deposition]") {
  Fixture f;
  REQUIRE_THROWS_AS(f.release(1, 1, kExclusive), ProtocolError);
  REQUIRE_THROWS_AS(f.release(1, 1, kShared), ProtocolError);
  REQUIRE_THROWS_AS(f.release_clock(1, 1, kExclusive, kZero), ProtocolError);
  CHECK(f.pool.in_use() == 0);  // the clock of the refused release went back

  f.acquire(1, 1, kShared);
  // Held shared: an exclusive release has no holder.
  REQUIRE_THROWS_AS(f.release(1, 1, kExclusive), ProtocolError);
  f.release(1, 1, kShared);
  // Released already.
  REQUIRE_THROWS_AS(f.release(1, 1, kShared), ProtocolError);
  f.acquire(2, 1, kExclusive);
  REQUIRE_THROWS_AS(f.release(2, 1, kShared), ProtocolError);
  f.release(2, 1, kExclusive);
  REQUIRE_THROWS_AS(f.release(2, 1, kExclusive), ProtocolError);
  // Another resource is another lock.
  REQUIRE_THROWS_AS(f.release(3, 1, kExclusive, kRes2), ProtocolError);
}

TEST_CASE("lock deposition: retiring while acquisitions wait is fatal",
          "[vclock-parts][lock-deposition]") {
  Fixture f;
  f.acquire(1, 1, kExclusive);
  f.acquire(2, 1, kExclusive);
  REQUIRE_THROWS_AS(f.dep.retire(kRes), ProtocolError);
}

TEST_CASE("lock deposition: a retired resource goes once its holders released and their clocks "
          "are in",
          "[vclock-parts][lock-deposition]") {
  Fixture f;
  // Unknown: nothing to do.
  f.dep.retire(0x999);
  CHECK(f.dep.resources() == 0);

  // Idle: goes at once, with the clocks it kept.
  f.acquire(1, 1, kExclusive);
  f.release(1, 1, kExclusive);
  f.release_clock(1, 1, kExclusive, {1, 1, 1, 1});
  f.acquire(2, 1, kExclusive, kRes2);
  CHECK(f.dep.resources() == 2);
  CHECK(f.pool.in_use() > 0);
  f.dep.retire(kRes);
  CHECK(f.dep.resources() == 1);

  // Held: stays through the release until its clock is in.
  f.dep.retire(kRes2);
  CHECK(f.dep.resources() == 1);
  f.release(2, 1, kExclusive, kRes2);
  CHECK(f.dep.resources() == 1);
  f.release_clock(2, 1, kExclusive, {2, 2, 2, 2}, kRes2);
  CHECK(f.dep.resources() == 0);
  CHECK(f.pool.in_use() == 0);

  // Shared holders: stays until the last clock.
  f.acquire(1, 2, kShared);
  f.acquire(2, 2, kShared);
  f.dep.retire(kRes);
  f.release(1, 2, kShared);
  f.release(2, 2, kShared);
  f.release_clock(2, 2, kShared, {0, 3, 0, 0});
  CHECK(f.dep.resources() == 1);
  f.release_clock(1, 2, kShared, {3, 0, 0, 0});
  CHECK(f.dep.resources() == 0);
  CHECK(f.pool.in_use() == 0);

  // A grant whose clock waits: stays until it went out.
  f.take();
  f.acquire(1, 3, kExclusive);
  f.release(1, 3, kExclusive);
  f.acquire(2, 3, kExclusive);
  f.release(2, 3, kExclusive);
  f.release_clock(2, 3, kExclusive, {0, 4, 0, 0});
  f.dep.retire(kRes);
  CHECK(f.dep.resources() == 1);
  f.release_clock(1, 3, kExclusive, {4, 0, 0, 0});
  CHECK(grant_clock(f.take(), 2, 3) == Values{4, 0, 0, 0});
  CHECK(f.dep.resources() == 0);

  // Deposits: stays until the deposit's clock is in.
  f.acquire(1, 4, kDeposit);
  f.dep.retire(kRes);
  CHECK(f.dep.resources() == 1);
  f.release_clock(1, 4, kDeposit, {5, 0, 0, 0});
  CHECK(f.dep.resources() == 0);
  f.finish({kRes, kRes2});
}
