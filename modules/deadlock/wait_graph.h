// The deadlock decision: given where every rank is (running, blocked in a
// call and what that call waits for, finished), which ranks can never go
// on. An AND/OR wait-for graph reduced from the ranks that can go on:
//
// * a running rank can go on (it may still send anything, join anything);
// * a finished rank cannot, and will never send or receive again;
// * a blocked rank can go on when its call can return: every condition of
//   an all-of wait can be met, or one of an any-of wait;
// * a message condition can be met when one of its senders can go on, or
//   has sent a matching message the rank did not receive yet;
// * a receiver condition (a send MPI did not buffer) when the receiver can
//   go on, waits in a receive that matches, or has receives pending;
// * a collective condition when every member can go on or has started the
//   same instance of it, and none of them is in that instance with
//   another operation or root (a collective mismatch never completes);
// * a write condition (an OpenSHMEM wait_until) when one of the ranks that
//   may write the variable can go on;
// * a lock condition unless a rank that cannot go on holds the lock
//   (exclusively, or shared against an exclusive acquisition);
// * an unknown condition always.
//
// Repeated until nothing changes; the blocked ranks left are deadlocked.
// Every rule errs towards "can go on", so a rank is reported only when
// nothing the others can still do releases it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vcx/wait_state.h"

namespace vcx::deadlock {

struct RankView {
  RankWait::Status status = RankWait::Status::Running;
  std::uint64_t entered = 0;  // Blocked: the slot entry it is in
  WaitState wait;             // Blocked
  WaitFacts facts;            // Blocked, Finished
  std::int32_t pid = 0;       // the application process, 0 if unknown
};

// One deadlocked rank: whom it waits for among the ranks that cannot go on
// (deadlocked or finished), by its conditions that cannot be met.
struct StuckRank {
  Rank rank{};
  std::vector<Rank> waits_for;
  // A collective condition failed because members are in that instance
  // with another operation or root: those members.
  std::vector<Rank> mismatched;
};

struct Deadlock {
  std::vector<StuckRank> ranks;  // by rank
};

// `ranks[i]` is world rank i.
std::optional<Deadlock> find_deadlock(const std::vector<RankView>& ranks);

}  // namespace vcx::deadlock
