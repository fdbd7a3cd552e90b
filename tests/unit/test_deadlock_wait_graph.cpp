// The deadlock decision (modules/deadlock/wait_graph.h) on hand-made runs:
// each case says from MPI's semantics which ranks can never return.
#include <catch2/catch.hpp>

#include "../../modules/deadlock/state_file.h"
#include "../../modules/deadlock/wait_graph.h"
#include "vcx/channel/blocked_call.h"

using namespace vcx;
using namespace vcx::deadlock;

namespace {

constexpr std::uint64_t kWorld = 77;
constexpr std::uint16_t kBarrier = 10, kAllreduce = 11;

RankView running() { return RankView{}; }

RankView finished() {
  RankView v;
  v.status = RankWait::Status::Finished;
  return v;
}

WaitCondition message(std::vector<std::uint32_t> from, std::int32_t tag = 0) {
  WaitCondition c;
  c.need = WaitNeed::Message;
  for (auto r : from) c.ranks.push_back(Rank{r});
  c.comm = kWorld;
  c.tag = tag;
  return c;
}

WaitCondition receiver(std::uint32_t to, std::int32_t tag = 0) {
  WaitCondition c;
  c.need = WaitNeed::Receiver;
  c.ranks.push_back(Rank{to});
  c.comm = kWorld;
  c.tag = tag;
  return c;
}

WaitCondition collective(std::uint64_t instance, std::uint16_t call, std::uint32_t members) {
  WaitCondition c;
  c.need = WaitNeed::Collective;
  for (std::uint32_t r = 0; r < members; ++r) c.ranks.push_back(Rank{r});
  c.comm = kWorld;
  c.instance = instance;
  c.call = call;
  return c;
}

RankView blocked(std::vector<WaitCondition> conditions, bool all_of = true) {
  RankView v;
  v.status = RankWait::Status::Blocked;
  v.wait.call = "call";
  v.wait.all_of = all_of;
  v.wait.conditions = std::move(conditions);
  return v;
}

void sent(RankView& v, std::uint32_t to, std::int32_t tag, std::uint64_t n = 1) {
  v.facts.sent.push_back(MessageCount{Rank{to}, kWorld, tag, n});
}
void received(RankView& v, std::uint32_t from, std::int32_t tag, std::uint64_t n = 1) {
  v.facts.received.push_back(MessageCount{Rank{from}, kWorld, tag, n});
}
void started(RankView& v, std::uint64_t instances,
             std::vector<WaitFacts::Operation> recent = {}) {
  v.facts.collectives.push_back(WaitFacts::Instances{kWorld, instances, std::move(recent)});
}

std::vector<std::uint32_t> stuck(const std::vector<RankView>& ranks) {
  std::vector<std::uint32_t> out;
  if (auto d = find_deadlock(ranks))
    for (const StuckRank& s : d->ranks) out.push_back(s.rank.value);
  return out;
}

}  // namespace

TEST_CASE("two ranks receiving from each other first are deadlocked", "[deadlock]") {
  const std::vector<RankView> ranks{blocked({message({1})}), blocked({message({0})})};
  const auto d = find_deadlock(ranks);
  REQUIRE(d);
  REQUIRE(d->ranks.size() == 2);
  CHECK(d->ranks[0].waits_for == std::vector<Rank>{Rank{1}});
  CHECK(d->ranks[1].waits_for == std::vector<Rank>{Rank{0}});
}

TEST_CASE("a message sent and not yet received releases its receiver", "[deadlock]") {
  std::vector<RankView> ranks{blocked({message({1})}), blocked({message({0})})};
  sent(ranks[1], 0, 0);
  CHECK(stuck(ranks).empty());  // 0 takes it, then sends what 1 waits for
  received(ranks[0], 1, 0);     // ... unless 0 received it already
  CHECK(stuck(ranks) == std::vector<std::uint32_t>{0, 1});
}

TEST_CASE("the send of a call blocked in MPI_Sendrecv may be on its way", "[deadlock]") {
  // 0 waits for 1; 1 is in MPI_Sendrecv, sending to 0 and waiting for 2,
  // which waits for 1: 0 gets its message, 1 and 2 never go on.
  std::vector<RankView> ranks{blocked({message({1})}), blocked({message({2})}),
                              blocked({message({1})})};
  ranks[1].wait.sending.push_back(MessageCount{Rank{0}, kWorld, 0, 1});
  CHECK(stuck(ranks) == std::vector<std::uint32_t>{1, 2});
  ranks[1].wait.sending.clear();
  CHECK(stuck(ranks) == std::vector<std::uint32_t>{0, 1, 2});
}

TEST_CASE("a message of another tag releases only a receive of any tag", "[deadlock]") {
  std::vector<RankView> ranks{blocked({message({1}, 7)}), blocked({message({0})})};
  sent(ranks[1], 0, 5);
  CHECK(stuck(ranks) == std::vector<std::uint32_t>{0, 1});
  ranks[0].wait.conditions[0].tag = WaitCondition::kAnyTag;
  CHECK(stuck(ranks).empty());
}

TEST_CASE("a running rank may still send: no deadlock", "[deadlock]") {
  CHECK(stuck({blocked({message({1})}), running()}).empty());
  // Also through a chain: 0 waits for 1, which waits for the running 2.
  CHECK(stuck({blocked({message({1})}), blocked({message({2})}), running()}).empty());
}

TEST_CASE("a finished rank sends nothing any more", "[deadlock]") {
  const auto d = find_deadlock({blocked({message({1})}), finished()});
  REQUIRE(d);
  REQUIRE(d->ranks.size() == 1);
  CHECK(d->ranks[0].rank == Rank{0});
  CHECK(d->ranks[0].waits_for == std::vector<Rank>{Rank{1}});
}

TEST_CASE("any source: released by any sender that can go on", "[deadlock]") {
  CHECK(stuck({blocked({message({1, 2})}), blocked({message({0})}), running()}).empty());
  CHECK(stuck({blocked({message({1, 2})}), blocked({message({0})}), blocked({message({0})})}) ==
        std::vector<std::uint32_t>{0, 1, 2});
}

TEST_CASE("all of a wait's requests, or any of them", "[deadlock]") {
  // Rank 0 waits for messages of 1 and 2; 1 waits for 0; 2 has finished.
  std::vector<RankView> ranks{blocked({message({1}), message({2})}), blocked({message({0})}),
                              finished()};
  CHECK(stuck(ranks) == std::vector<std::uint32_t>{0, 1});
  ranks[2] = running();
  CHECK(stuck(ranks) == std::vector<std::uint32_t>{0, 1});  // all of: 1 still never sends
  ranks[0].wait.all_of = false;
  CHECK(stuck(ranks).empty());  // any of: 2 may send
}

TEST_CASE("sends MPI did not buffer wait for their receivers", "[deadlock]") {
  std::vector<RankView> ranks{blocked({receiver(1)}), blocked({receiver(0)})};
  sent(ranks[0], 1, 0);
  sent(ranks[1], 0, 0);
  CHECK(stuck(ranks) == std::vector<std::uint32_t>{0, 1});
  // A receiver that waits in a matching receive takes it.
  ranks[1] = blocked({message({0})});
  CHECK(stuck(ranks).empty());
  // So may one with receives pending.
  ranks[1] = blocked({receiver(0)});
  ranks[1].facts.pending_receives = 1;
  CHECK(stuck(ranks).empty());
}

TEST_CASE("collectives: members that arrived, that never do, that called another",
          "[deadlock]") {
  // All three in instance 1 of the same operation: it completes.
  std::vector<RankView> ranks{blocked({collective(1, kBarrier, 3)}),
                              blocked({collective(1, kBarrier, 3)}),
                              blocked({collective(1, kBarrier, 3)})};
  for (auto& r : ranks) started(r, 1);
  CHECK(stuck(ranks).empty());
  // Rank 2 never gets there: it waits for a message of rank 0.
  ranks[2] = blocked({message({0})});
  CHECK(stuck(ranks) == std::vector<std::uint32_t>{0, 1, 2});
  // Rank 2 started the instance before (a non-blocking collective): done.
  started(ranks[2], 1);
  CHECK(stuck(ranks).empty());
  // Rank 2 is in instance 1 with another operation: never completes.
  ranks[2] = blocked({collective(1, kAllreduce, 3)});
  started(ranks[2], 1);
  const auto d = find_deadlock(ranks);
  REQUIRE(d);
  CHECK(d->ranks[0].mismatched == std::vector<Rank>{Rank{2}});
  // Rank 1 and 2 passed instance 1 with another operation and wait in 2.
  ranks[1] = blocked({collective(2, kBarrier, 3)});
  ranks[2] = blocked({collective(2, kBarrier, 3)});
  for (std::size_t r = 1; r < 3; ++r)
    started(ranks[r], 2, {{1, kAllreduce, -1}, {2, kBarrier, -1}});
  CHECK(stuck(ranks) == std::vector<std::uint32_t>{0, 1, 2});
  // Without a record of instance 1 they count as having called the same.
  for (std::size_t r = 1; r < 3; ++r) ranks[r].facts.collectives[0].recent.clear();
  CHECK(stuck(ranks).empty());
}

TEST_CASE("an unknown condition never makes a deadlock", "[deadlock]") {
  CHECK(stuck({blocked({WaitCondition{}}), finished()}).empty());
  CHECK(stuck({blocked({message({1}), WaitCondition{}}, false), finished()}).empty());
}

namespace {

constexpr std::uint64_t kLock = 0xabcdef0123456789ULL;

// An OpenSHMEM wait_until at `self` in a world of `n`: any other PE may write.
WaitCondition write_by_others(std::uint32_t self, std::uint32_t n) {
  WaitCondition c;
  c.need = WaitNeed::Write;
  for (std::uint32_t r = 0; r < n; ++r)
    if (r != self) c.ranks.push_back(Rank{r});
  return c;
}

WaitCondition lock_of_world(std::uint32_t n) {
  WaitCondition c;
  c.need = WaitNeed::Lock;
  c.resource = kLock;
  for (std::uint32_t r = 0; r < n; ++r) c.ranks.push_back(Rank{r});
  return c;
}

}  // namespace

TEST_CASE("a wait for a write: released by any writer that can go on", "[deadlock]") {
  // Every PE waits on its own flag: nobody is left to write.
  CHECK(stuck({blocked({write_by_others(0, 3)}), blocked({write_by_others(1, 3)}),
               blocked({write_by_others(2, 3)})}) == std::vector<std::uint32_t>{0, 1, 2});
  // One PE still computes: it may write any of them.
  CHECK(stuck({blocked({write_by_others(0, 3)}), running(), blocked({write_by_others(2, 3)})})
            .empty());
  // Its only writer finished.
  CHECK(stuck({blocked({write_by_others(0, 2)}), finished()}) == std::vector<std::uint32_t>{0});
  // A writer in a barrier the waiter is not in: both stay.
  CHECK(stuck({blocked({write_by_others(0, 2)}), blocked({collective(1, kBarrier, 2)})}) ==
        std::vector<std::uint32_t>{0, 1});
  // A writer released by the others' barrier, which the waiter is not in.
  RankView in_barrier = blocked({collective(1, kBarrier, 2)});
  RankView arrived = blocked({write_by_others(1, 3)});
  started(arrived, 1);
  CHECK(stuck({in_barrier, arrived, running()}).empty());
}

TEST_CASE("a member blocked in the instance itself has entered it", "[deadlock]") {
  // OpenSHMEM: the call's event comes after it, so the facts of members
  // waiting in the barrier do not count it yet. All members there: none is
  // kept from it.
  CHECK(stuck({blocked({collective(1, kBarrier, 2)}), blocked({collective(1, kBarrier, 2)})})
            .empty());
  // Two in the barrier, the third waits for a write nobody can make: the
  // two wait for the third only.
  const auto d = find_deadlock({blocked({collective(1, kBarrier, 3)}),
                                blocked({collective(1, kBarrier, 3)}),
                                blocked({write_by_others(2, 3)})});
  REQUIRE(d);
  REQUIRE(d->ranks.size() == 3);
  CHECK(d->ranks[0].waits_for == std::vector<Rank>{Rank{2}});
  CHECK(d->ranks[1].waits_for == std::vector<Rank>{Rank{2}});
  CHECK(d->ranks[2].waits_for == std::vector<Rank>{Rank{0}, Rank{1}});
}

TEST_CASE("a wait for a lock: only a holder that cannot go on keeps it", "[deadlock]") {
  // Rank 0 holds it in a barrier rank 1 cannot reach.
  RankView holder = blocked({collective(1, kBarrier, 2)});
  holder.facts.locks_held.push_back(kLock);
  CHECK(stuck({holder, blocked({lock_of_world(2)})}) == std::vector<std::uint32_t>{0, 1});
  // The holder finished without releasing it.
  RankView gone = finished();
  gone.facts.locks_held.push_back(kLock);
  CHECK(stuck({gone, blocked({lock_of_world(2)})}) == std::vector<std::uint32_t>{1});
  // Another lock held, or no holder this view knows of (free, or held by a
  // rank that runs): it can be had.
  RankView other = finished();
  other.facts.locks_held.push_back(kLock + 1);
  CHECK(stuck({other, blocked({lock_of_world(2)})}).empty());
  CHECK(stuck({running(), blocked({lock_of_world(2)})}).empty());
  // Shared: a shared holder keeps out an exclusive acquisition, not a
  // shared one; an exclusive holder keeps out both.
  RankView reader = blocked({collective(1, kBarrier, 2)});
  reader.facts.locks_held_shared.push_back(kLock);
  CHECK(stuck({reader, blocked({lock_of_world(2)})}) == std::vector<std::uint32_t>{0, 1});
  WaitCondition shared_lock = lock_of_world(2);
  shared_lock.shared = true;
  CHECK(stuck({reader, blocked({shared_lock})}).empty());
  CHECK(stuck({holder, blocked({shared_lock})}) == std::vector<std::uint32_t>{0, 1});
  // Held by itself (not recursive): it waits for itself.
  RankView self = blocked({lock_of_world(1)});
  self.facts.locks_held.push_back(kLock);
  CHECK(stuck({self}) == std::vector<std::uint32_t>{0});
}

TEST_CASE("a state file says what the tool saw", "[deadlock]") {
  RankView v = blocked({message({1, 2}, WaitCondition::kAnyTag), collective(4, kBarrier, 3)});
  v.entered = 9;
  v.wait.pc = 0x1234;
  v.wait.all_of = false;
  sent(v, 1, 3, 2);
  received(v, 2, 4, 5);
  started(v, 4, {{4, kBarrier, 1}});
  v.facts.pending_receives = 3;
  const std::optional<RankView> back = parse_state(state_text(v, 0));
  REQUIRE(back);
  CHECK(back->status == RankWait::Status::Blocked);
  CHECK(back->entered == 9);
  CHECK(back->wait.pc == 0x1234);
  CHECK_FALSE(back->wait.all_of);
  REQUIRE(back->wait.conditions.size() == 2);
  CHECK(back->wait.conditions[0].ranks == v.wait.conditions[0].ranks);
  CHECK(back->wait.conditions[0].tag == WaitCondition::kAnyTag);
  CHECK(back->wait.conditions[1].instance == 4);
  CHECK(back->facts.sent[0].count == 2);
  CHECK(back->facts.received[0].tag == 4);
  CHECK(back->facts.pending_receives == 3);
  REQUIRE(back->facts.collectives.size() == 1);
  CHECK(back->facts.collectives[0].recent[0].root == 1);
  CHECK_FALSE(parse_state("{\"status\":\"blocked\"}"));

  RankView shmem = blocked({write_by_others(0, 2), lock_of_world(2)});
  shmem.facts.locks_held = {kLock, 5};
  shmem.facts.locks_held_shared = {7};
  shmem.wait.conditions[1].shared = true;
  const std::optional<RankView> again = parse_state(state_text(shmem, 0));
  REQUIRE(again);
  REQUIRE(again->wait.conditions.size() == 2);
  CHECK(again->wait.conditions[0].need == WaitNeed::Write);
  CHECK(again->wait.conditions[0].ranks == std::vector<Rank>{Rank{1}});
  CHECK(again->wait.conditions[1].need == WaitNeed::Lock);
  CHECK(again->wait.conditions[1].resource == kLock);
  CHECK(again->facts.locks_held == std::vector<std::uint64_t>{kLock, 5});
  CHECK(again->facts.locks_held_shared == std::vector<std::uint64_t>{7});
  CHECK(again->wait.conditions[1].shared);
}

TEST_CASE("the blocked-call slot: inside between enter and leave, one entry each",
          "[deadlock]") {
  channel::BlockedCallSlot slot{};
  CHECK_FALSE(channel::read_blocked_call(slot));
  const std::uint64_t payload[3] = {1, 2, 3};
  channel::enter_blocked_call(slot, Model::Mpi, 42, 17, 0xabc, payload, sizeof payload);
  auto c = channel::read_blocked_call(slot);
  REQUIRE(c);
  CHECK(c->entered == 0);
  CHECK(c->model == Model::Mpi);
  CHECK(c->call == 42);
  CHECK(c->after_seq == 17);
  CHECK(c->call_site == 0xabc);
  CHECK(c->bytes == sizeof payload);
  CHECK(c->payload[2] == 3);
  channel::leave_blocked_call(slot);
  CHECK_FALSE(channel::read_blocked_call(slot));
  channel::enter_blocked_call(slot, Model::Mpi, 43, 18, 0, nullptr, 0);
  c = channel::read_blocked_call(slot);
  REQUIRE(c);
  CHECK(c->entered == 1);
  // Being written: no snapshot.
  slot.state.store(4 * 2 + 1);
  CHECK_FALSE(channel::read_blocked_call(slot));
}
