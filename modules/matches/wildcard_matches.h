// Alternative matches of one rank's wildcard receives (docs/analyses.md,
// "Wildcard matches"), from the translator's receive notes and the signals
// that reach the rank's tool.
//
// For a wildcard receive R that matched a message of rank s0, another rank s
// is an alternative source when its first message R could take (same
// communicator, a tag R accepts) that no receive matched before R took is
// not causally after R's match: that send's clock has this rank's entry
// below k(R), the tick of the first call of this rank known to follow R's
// match — R's completion, or the completion of a later receive that R had
// to match before (MPI's non-overtaking rule for receives). A completing
// call that also sends (MPI_Sendrecv) sends with its own tick, but MPI may
// match that send before the call's receive: its messages do not follow the
// match, only what comes after the call does.
//
// Receives that matched before R: those known to have matched when R was
// posted (completed, or ordered before a completed one), and those R was
// ordered after (ReceiveOrdered notes), transitively.
//
// A wildcard receive a replay forced to one source (ReceivePostedNote::
// forced) keeps its index, wants that source only and has no alternative.
//
// A receive is decided once everything that can change its answer is known;
// the messages and receives no undecided receive can need are dropped, so
// memory follows what is undecided, not the length of the run.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "vcx/analysis.h"
#include "vcx/types.h"
#include "vcx/vector_clock.h"

namespace vcx::matches {

// One decided wildcard receive.
struct WildcardResult {
  std::uint64_t index = 0;  // ordinal of the rank's wildcard receive postings, from 0
  std::uint16_t call = 0;   // the posting call
  std::uint64_t pc = 0;     // its return address, 0 if unknown
  std::uint32_t matched_source = 0;
  std::vector<std::uint32_t> alternatives;  // world ranks, ascending
  std::uint64_t completed_seq = 0;          // the completing call's clocked-call number
  std::uint16_t completed_call = 0;
  ClockValue known_tick = 0;  // k: the tick of this rank's first call known to follow the match
};

class WildcardMatches {
 public:
  WildcardMatches(Rank self, std::uint32_t world);

  // Notes, in program order. `tick` and `seq`: the completing call's own
  // clock entry and clocked-call number; `sent`: that call also sent.
  void posted(const ReceivePostedNote& n);
  void bound(const ReceiveBoundNote& n);
  void ordered(std::uint64_t later, std::uint64_t earlier);
  void completed(std::uint64_t token, ClockValue tick, bool sent, std::uint64_t seq,
                 std::uint16_t call);
  void dropped(std::uint64_t token);
  // A signal from `source`, with the sender's clock entry for this rank.
  // Signals of one sender arrive in its sending order.
  void signal(Rank source, QueueId queue, std::uint64_t position, ClockValue entry);
  // This rank sent a signal to itself (its tool ran the send); until it
  // arrives, a later message to itself may still be a candidate.
  void sent_to_self() { ++to_self_in_flight_; }

  // Decides what can be decided. `final`: no more notes or signals will
  // come; everything is decided with what is known.
  void decide(bool final);
  std::vector<WildcardResult>& results() { return results_; }

  std::size_t undecided() const { return undecided_.size(); }
  // Wildcard receives left without a result: never completed (freed), or
  // their match never known.
  std::size_t unreported() const { return unreported_; }
  std::size_t receives_kept() const { return receives_.size(); }
  std::size_t messages_kept() const { return messages_; }
  std::size_t peak_messages() const { return peak_messages_; }

 private:
  static constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();
  struct Receive {
    std::uint64_t space = 0;
    std::int32_t want_source = kNoteAnySource;
    std::int32_t want_tag = kNoteAnyTag;
    std::uint64_t post_no = 0;  // posting order
    std::int64_t index = -1;    // wildcard ordinal, -1 for other receives
    std::uint64_t pc = 0;
    std::uint16_t call = 0;
    bool forced = false;  // a wildcard receive a replay forced to want_source
    bool bound = false;
    bool completed = false;
    bool dropped = false;
    std::uint32_t source = 0;
    QueueId queue{};
    std::uint64_t position = 0;
    // Known to have matched by the posting numbered known_at (receives
    // posted from then on follow it), and the tick of the first call known
    // to follow its match.
    std::uint64_t known_at = kNever;
    ClockValue k = kNever;
    bool k_sent = false;  // the call with tick k sent too: its messages do not know
    // The smallest clock entry for this rank of a message that knows the match.
    ClockValue known_from() const { return k == kNever ? kNever : k + (k_sent ? 1 : 0); }
    std::uint64_t completed_seq = 0;
    std::uint16_t completed_call = 0;
    std::vector<std::uint64_t> follows;  // receives it matched after
  };
  struct Message {
    QueueId queue{};
    std::uint64_t position = 0;
    ClockValue entry = 0;
    bool gone = false;
  };
  struct QueueKey {
    std::uint32_t source;
    QueueId queue;
    bool operator==(const QueueKey&) const = default;
  };
  struct QueueKeyHash {
    std::size_t operator()(const QueueKey& k) const noexcept {
      return std::hash<std::uint64_t>{}(k.queue.a * 0x9e3779b97f4a7c15ULL ^ k.queue.b ^
                                        (std::uint64_t{k.source} << 40));
    }
  };
  struct Binds {
    std::uint64_t next = 1;
    std::map<std::uint64_t, std::uint64_t> tokens;  // position -> receive
  };

  // R and every receive ordered before it, transitively, are known to have
  // matched by posting `at`, and to precede the call with tick `tick`.
  void mark_known(std::uint64_t token, ClockValue tick, bool sent, std::uint64_t at);
  std::uint64_t receiver(std::uint32_t source, QueueId queue, std::uint64_t position) const;
  // Whether receive `x` matched before R in every execution like this one.
  bool matched_before(std::uint64_t x, std::uint64_t r_token, const Receive& r);
  bool try_decide(std::uint64_t token, Receive& r, bool final);
  // Whether R could take a message on a queue with this queue.b (its tag).
  static bool accepts(const Receive& r, std::uint64_t tag);
  void drop_unneeded();

  Rank self_;
  std::uint32_t world_;
  std::uint64_t next_post_ = 1;
  std::uint64_t wildcards_ = 0;
  std::unordered_map<std::uint64_t, Receive> receives_;
  std::unordered_map<QueueKey, Binds, QueueKeyHash> binds_;
  std::vector<std::deque<Message>> from_;  // per sender, in its sending order
  std::vector<ClockValue> last_entry_;     // per sender: its latest signal's entry for us
  std::uint64_t to_self_in_flight_ = 0;
  std::size_t messages_ = 0;
  std::size_t peak_messages_ = 0;
  std::size_t unreported_ = 0;
  std::deque<std::uint64_t> undecided_;  // wildcard receives, in posting order
  std::unordered_set<std::uint64_t> unbound_known_;  // known to have matched, message unknown
  std::unordered_set<std::uint64_t> closure_;        // scratch: receives R follows
  std::vector<std::uint64_t> stack_;                 // scratch
  std::vector<WildcardResult> results_;
};

}  // namespace vcx::matches
