// Replaying a run with other matches (vcx-run --force-match): this rank's
// wildcard receives, counted in program order as the matches analysis counts
// them (docs/analyses.md, "Definition"), take the source the replay names
// instead of MPI_ANY_SOURCE; everything else is left alone. The event then
// carries mpi::forced_source(rank), so that the tool still counts it among
// the wildcard receives.
//
// A persistent wildcard receive (MPI_Recv_init) whose start is forced is
// not started: a receive from the forced source into the same buffer
// (MPI_Irecv) stands in for it until it completes, and the Wait/Test
// family, MPI_Cancel and MPI_Request_free are handed the stand-in in its
// place (substitute/restore); the program keeps its request, inactive again
// once the stand-in completed, as after any completed start.
//
// A forced source that never sends leaves the receive waiting for ever; a
// watchdog ends the rank with a message naming the forced receives when,
// with a forced receive still unmatched (its blocking call not returned,
// its request not complete), the rank reported no MPI call for
// VCX_FORCE_MATCH_TIMEOUT seconds (default 60). Single-threaded programs
// only (up to MPI_THREAD_SERIALIZED): the count of postings follows the
// program's order.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace vcx::mpi_intercept {

class ForcedMatches {
 public:
  // Reads VCX_FORCE_MATCH ("R:I=S,...", world ranks) for this world rank.
  void load(int world_rank, MPI_Group world_group, int thread_level);
  // MPI_Finalize: nothing is forced or watched any more.
  void stop() { active_ = false; outstanding_.store(0, std::memory_order_relaxed); }
  bool active() const { return active_; }

  // The source a receive posted with `source` on `comm` is called with:
  // `source` itself, unless it is MPI_ANY_SOURCE and this wildcard posting
  // (the next one) is forced. Does not count the posting.
  int source_for(MPI_Comm comm, int source);
  // The source the event reports for a receive the program posted with
  // `source` and MPI was called with `used`.
  static std::int32_t event_source(int source, int used);
  // A receive was posted with `source` (as the program gave it): counts
  // it among the wildcard receives when that is MPI_ANY_SOURCE. `request`:
  // the request of a non-blocking one, which stays watched until complete.
  void posted(int source, const MPI_Request* request = nullptr);
  // MPI_Improbe found nothing: the posting it was forced for is still to come.
  void not_posted(int source);
  // A request completed (or was freed).
  void request_done(MPI_Request r) {
    if (active_ && !forced_requests_.empty() && forced_requests_.erase(r) != 0)
      outstanding_.fetch_sub(1, std::memory_order_relaxed);
  }
  // Persistent receives: MPI_Recv_init with MPI_ANY_SOURCE, and their starts.
  struct PersistentReceive {
    void* buf = nullptr;
    MPI_Count count = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    int tag = 0;
    MPI_Comm comm = MPI_COMM_NULL;
    bool large = false;     // MPI_Recv_init_c
    bool own_type = false;  // `type` is this object's duplicate
  };
  // Keeps its own duplicate of the datatype: the program may free its
  // handle as soon as the request holds it.
  void persistent_wildcard(MPI_Request r, const PersistentReceive& p);
  // MPI_Request_free of `r`: a stand-in still pending is freed too.
  void persistent_freed(MPI_Request r);
  // MPI_Start or MPI_Startall is about to start `r`: counts the posting when
  // `r` is a persistent wildcard receive, and when the replay forces it,
  // returns the forced source as a rank of its communicator (the caller
  // reports it, then calls start_forced instead of starting `r`).
  std::optional<int> starting(MPI_Request r);
  void start_forced(MPI_Request r, int source);
  // The requests to hand MPI for the program's `user` (n of them): `user`
  // itself unless some have stand-ins, else a copy with the stand-ins.
  MPI_Request* substitute(MPI_Request* user, int n) {
    return shadows_.empty() ? user : substitute_slow(user, n);
  }
  // After the call: MPI's changes to `used` go back to `user`, except that
  // a forced persistent receive stays the program's request (its stand-in,
  // once complete, is forgotten).
  void restore(MPI_Request* user, const MPI_Request* used, int n) {
    if (used != user) restore_slow(user, used, n);
  }
  // The rank made an MPI call (for the watchdog).
  void progress() { calls_.fetch_add(1, std::memory_order_relaxed); }

 private:
  void watch();
  // The forced world rank as a rank of the group `comm` receives from.
  int comm_rank_of(MPI_Comm comm, int world_rank) const;
  void note_applied(int source);
  MPI_Request* substitute_slow(MPI_Request* user, int n);
  void restore_slow(MPI_Request* user, const MPI_Request* used, int n);

  bool active_ = false;
  int rank_ = -1;
  MPI_Group world_group_ = MPI_GROUP_NULL;
  std::uint64_t postings_ = 0;  // wildcard receive postings so far
  std::uint64_t applied_index_ = ~std::uint64_t{0};  // the last forced posting noted
  bool forcing_ = false;  // the call in progress was forced (source_for to posted)
  std::unordered_set<MPI_Request> forced_requests_;  // non-blocking ones not complete
  std::atomic<std::uint64_t> outstanding_{0};        // forced receives not matched yet
  std::unordered_map<std::uint64_t, int> forced_;  // index -> world rank
  std::unordered_map<MPI_Request, PersistentReceive> persistent_;
  std::unordered_map<MPI_Request, MPI_Request> shadows_;  // forced start -> its stand-in
  std::string applied_;  // the forced postings made so far, for the watchdog's message
  std::atomic<std::uint64_t> calls_{0};

};

ForcedMatches& forced_matches();

}  // namespace vcx::mpi_intercept
