// What a rank blocked in a call waits for, in terms every tool shares
// (world ranks, run-wide communicator ids, collective instances): the
// translator's reading of the blocked-call slot (vcx/channel/blocked_call.h)
// against everything the rank did before, for the deadlock analysis.
//
// A call waits for all of its conditions (MPI_Recv, MPI_Waitall) or for any
// of them (MPI_Waitany). A condition names the ranks that can still satisfy
// it; the facts say what is already there (messages sent and not yet
// received), so the analysis can tell a rank that waits for nobody but
// itself from one whose message is on its way.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vcx/types.h"

namespace vcx {

enum class WaitNeed : std::uint8_t {
  // A message: from one of `ranks`, on communicator `comm`, with `tag`
  // (kAnyTag: any).
  Message = 0,
  // A matching receive at `ranks` (one rank): a send that MPI did not
  // buffer completes once its receiver takes it.
  Receiver = 1,
  // Every member of `ranks` in collective `instance` on `comm`.
  Collective = 2,
  // Something the translator cannot name (a request of a kind it does not
  // follow): assumed satisfiable, so it never makes a deadlock.
  Unknown = 3,
  // A write into the rank's memory by one of `ranks` (an OpenSHMEM
  // wait_until on a variable): one of them must still be able to write.
  // What the rank reads there does not satisfy it yet, and a write made
  // before its writer blocked has landed by the time a deadlock is
  // confirmed (the rank still in the same call, looked at again): only the
  // writers' ability to go on counts.
  Write = 4,
  // The lock `resource`, which another rank may hold (an OpenSHMEM
  // shmem_set_lock, an MPI_Win_lock): it waits for the holders, found by
  // the ranks' facts (WaitFacts::locks_held, locks_held_shared; a shared
  // acquisition waits for exclusive holders only); `ranks` are those that
  // may hold it.
  Lock = 5,
};

struct WaitCondition {
  static constexpr std::int32_t kAnyTag = -1;
  WaitNeed need = WaitNeed::Unknown;
  std::vector<Rank> ranks;
  std::uint64_t comm = 0;  // run-wide communicator id
  std::int32_t tag = 0;    // Message, Receiver: the tag (Message: kAnyTag for any)
  std::uint64_t instance = 0;  // Collective: per-communicator number, from 1
  std::uint16_t call = 0;      // Collective: which one (the model's call id)
  std::int32_t root = -1;      // Collective: world rank of the root, -1 without one
  std::uint64_t resource = 0;  // Lock: the run-wide id of the lock
  bool shared = false;         // Lock: a shared acquisition
};

// Point-to-point messages per peer, communicator and tag.
struct MessageCount {
  Rank peer{};
  std::uint64_t comm = 0;
  std::int32_t tag = 0;
  std::uint64_t count = 0;
};

struct WaitState {
  std::string call;  // with the arguments that matter: "MPI_Recv(source 1, tag 0, MPI_COMM_WORLD)"
  std::uint64_t pc = 0;  // the application's call site, 0 if unknown
  bool all_of = true;    // waits for every condition (false: for any)
  std::vector<WaitCondition> conditions;
  // Messages the call itself sends that no event has told yet (the send of
  // an MPI_Sendrecv, whose event comes after it): they may be on their way.
  std::vector<MessageCount> sending;
};

// What the rank has done, as far as waits of any rank depend on it.
struct WaitFacts {
  std::vector<MessageCount> sent;      // messages it sent (to peer)
  std::vector<MessageCount> received;  // messages it received (from peer; by the status)
  // Receives it posted that are not complete (they may take a message first).
  std::uint64_t pending_receives = 0;
  struct Operation {
    std::uint64_t instance = 0;
    std::uint16_t call = 0;  // as WaitCondition::call
    std::int32_t root = -1;
  };
  struct Instances {
    std::uint64_t comm = 0;
    std::uint64_t started = 0;  // collective instances it started on comm
    // The operations of its latest instances (those before are not known).
    std::vector<Operation> recent;
  };
  std::vector<Instances> collectives;
  // Locks it holds (run-wide ids, as WaitCondition::resource): exclusively,
  // and shared. Not the one it is blocked acquiring.
  std::vector<std::uint64_t> locks_held;
  std::vector<std::uint64_t> locks_held_shared;
};

// Where a rank is, as its tool tells the modules that want it
// (ClockedCallObserver::on_wait_state): blocked in a call (and since which
// entry of the slot, the same number as long as it stays in that call),
// running again, or finished (it will call nothing any more).
struct RankWait {
  enum class Status : std::uint8_t { Running = 0, Blocked = 1, Finished = 2 };
  Status status = Status::Running;
  std::uint64_t entered = 0;          // Blocked
  const WaitState* wait = nullptr;    // Blocked
  const WaitFacts* facts = nullptr;   // Blocked, Finished
};

}  // namespace vcx
