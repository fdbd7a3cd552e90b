// MPI's non-overtaking rule for receives, as the exchange needs it: when a
// receive B matched a message, every receive of this process posted before B
// on the same communicator, still pending when B was posted, and able to take
// that message (its source and tag) had matched before B. The engine is told
// those pairs (ExchangeControl::order_receive_after) so that B's answer to a
// synchronous sender carries their messages' clocks (docs/clock-rules.md,
// "Synchronous sends").
//
// One ReceiveOrder per communicator keeps the receives a later one could
// still follow, in posting order. A pair is only named when no other named
// one already implies it: a receive's answer carries what its predecessors'
// answers carry, so a fan-in of n wildcard receives names n-1 pairs, not
// n(n-1)/2.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <limits>
#include <vector>

#include "vcx/exchange.h"
#include "vcx/types.h"

namespace vcx::mpi {

class ReceiveOrder {
 public:
  // A receive was posted (want_source: world rank or kRankAny; want_tag: a
  // tag or kTagAny). Receives still pending may now be followed by it.
  void posted(ReceiveToken t, std::int32_t want_source, std::int32_t want_tag,
              ExchangeControl& ctl);
  // Its match is known: name the receives it follows. Before it is bound.
  void matched(ReceiveToken t, Rank source, std::int32_t tag, ExchangeControl& ctl);
  // The program completed it, or freed its request: receives posted from
  // now on do not follow it.
  void completed(ReceiveToken t, ExchangeControl& ctl);
  // It matched nothing (cancelled), or what it matched cannot be known: the
  // receives that follow it follow its own predecessors instead.
  void unmatched(ReceiveToken t, ExchangeControl& ctl);

  std::size_t tracked() const { return entries_.size(); }
  // No receive is tracked: one posted and completed at once (MPI_Recv)
  // needs no entry then, having no predecessor and no follower.
  bool idle() const { return entries_.empty(); }

 private:
  static constexpr std::uint64_t kPending = std::numeric_limits<std::uint64_t>::max();
  struct Entry {
    std::uint64_t seq = 0;  // posting order on this communicator
    ReceiveToken token{};
    std::int32_t want_source = 0;
    std::int32_t want_tag = 0;
    std::uint64_t completed_at = kPending;  // next_seq_ when it completed
    std::uint64_t covered = 0;  // stamp of the last matched() that reached it
    bool matched = false;
    Rank matched_source{};      // its message's, once matched
    std::int32_t matched_tag = 0;
    bool unmatched = false;
    bool kept = false;  // the engine keeps its contribution
    bool retiring = false;  // set and read by retire()
    std::vector<std::uint64_t> follows;  // seq of the receives it was ordered after
  };
  Entry* find(ReceiveToken t);
  Entry* at_seq(std::uint64_t seq);
  // Drops the entries no receive can still be ordered after. Completions
  // only ask for it (retire_wanted_); it runs once nothing is pending, or
  // before the next posting, match or cancel reads the entries: one pass
  // per window of receives rather than one per completion.
  void retire(ExchangeControl& ctl);
  std::size_t index_of(std::uint64_t seq) const;  // first entry with seq >= this
  // The entry with this seq among those before index i, or null.
  Entry* at_seq_before(std::size_t i, std::uint64_t seq);

  // By seq, ascending: pending or recently completed. A vector: walked on
  // every match, which a tree makes slow.
  std::vector<Entry> entries_;
  std::unordered_map<std::uint64_t, std::uint64_t> seq_of_;  // token -> seq
  std::size_t pending_ = 0;  // entries not completed
  std::vector<std::uint64_t> named_;  // retire(): seqs the pending entries follow
  std::uint64_t next_seq_ = 1;
  std::uint64_t keep_from_ = 1;  // entries below were asked to be kept if pending then
  std::uint64_t stamp_ = 0;
  bool retire_wanted_ = false;
};

}  // namespace vcx::mpi
