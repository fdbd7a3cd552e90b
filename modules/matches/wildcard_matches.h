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
// A synchronous send completes only once its message was matched: every
// later event of its sender follows the match of the receive X that took
// it, and so of every receive X had to match after. So when R or a receive
// ordered after R took a synchronous message of rank q, whose send
// completed at q's tick t (t + 1 if that call sent too), a message whose
// sender's clock has entry [q] >= t knows R's match as well. Each tool
// tells the receiver's tool where its synchronous sends completed
// (sync_completed). R waits for what could still add such knowledge — a
// receive ordered after it, or posted while it was pending, not bound yet,
// or a synchronous message's completion not reported yet — but only while
// it has an alternative such knowledge could remove.
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
  // A signal from `source`, with the sender's clock (valid during the call).
  // Signals of one sender arrive in its sending order.
  void signal(Rank source, QueueId queue, std::uint64_t position, bool synchronous,
              ClockSpan clock);
  // The synchronous send of `source`'s signal (queue, position) to this
  // rank completed: every event of `source` whose clock has entry
  // [source] >= from follows its match. Comes after the signal.
  void sync_completed(Rank source, QueueId queue, std::uint64_t position, ClockValue from);
  // Whether completions of other ranks' synchronous sends are reported
  // (a tool without a link to the others hears only its own).
  void expect_sync_reports(bool on) { sync_reports_ = on; }
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
    std::uint64_t completed_post = kNever;  // the last posting before its completion
    std::vector<std::uint64_t> follows;      // receives it matched after
    std::vector<std::uint64_t> followed_by;  // receives that matched after it
  };
  struct Message {
    QueueId queue{};
    std::uint64_t position = 0;
    ClockValue entry = 0;  // the sender's clock entry for this rank
    bool gone = false;
    bool synchronous = false;
    ClockValue answered_from = kNever;  // sync_completed's `from`, kNever: not yet
    std::uint32_t clock_slot = 0;       // the sender's clock in clocks_
  };
  struct Knower {
    std::uint32_t rank;
    ClockValue from;
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
  // Fills knowers_ from R and the receives ordered after it; false when
  // what a synchronous send could tell is not known yet.
  bool collect_knowers(std::uint64_t token);
  // A receive not bound yet that may still be ordered after R.
  bool may_follow_unbound(std::uint64_t token, const Receive& r) const;
  bool unknown_to_knowers(const Message& m) const;
  Message* find_message(std::uint32_t source, QueueId queue, std::uint64_t position);
  ClockValue clock_entry(const Message& m, std::uint32_t rank) const {
    return clocks_[static_cast<std::size_t>(m.clock_slot) * world_ + rank];
  }
  void release(Message& m);
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
  bool sync_reports_ = true;
  // The kept messages' sender clocks, world_ entries per slot.
  std::vector<ClockValue> clocks_;
  std::vector<std::uint32_t> free_slots_;
  std::vector<Knower> knowers_;  // scratch
  std::size_t messages_ = 0;
  std::size_t peak_messages_ = 0;
  std::size_t unreported_ = 0;
  std::deque<std::uint64_t> undecided_;  // wildcard receives, in posting order
  std::unordered_set<std::uint64_t> unbound_known_;  // known to have matched, message unknown
  std::unordered_set<std::uint64_t> closure_;        // scratch: receives R follows
  std::unordered_set<std::uint64_t> followers_;      // scratch: R and receives that follow it
  std::vector<std::uint64_t> stack_;                 // scratch
  std::vector<WildcardResult> results_;
};

}  // namespace vcx::matches
