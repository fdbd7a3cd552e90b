// Point-to-point signals and waits: the queues this process receives on, its
// receives bound to their positions, and the answers to synchronous sends.
//
// A signal carries the sender's clock and its position on its queue (the
// sender numbers its sends per queue, reserve_send); it is kept in the slot
// of that position until the receive bound to it waits for it. Receives are
// bound to positions in the order the translator binds them; a receive that
// matched nothing (cancelled, dropped) gives its position up and the later
// ones move up. A synchronous send is answered, once its signal is in, with
// the receive's snapshot (its clock when the receive was posted) joined with
// what the receives it must follow (MPI's non-overtaking rule,
// receive_order.cpp) bring. When the answer depends on what this process's
// application does next (the receive is not bound yet, or earlier receives'
// matches are not in), the sender is told so (Deferred), so that neither
// application waits for the other.
//
// Invariants: a slot is trimmed once its clock was merged (or discarded) and
// its answer given, so each queue holds only positions still in use; a
// receive lives until it merged, answered and no later receive waits for its
// contribution; every clock held is a PooledClock, released with its holder.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "clock_pool.h"
#include "messages.h"
#include "outbox.h"
#include "peer_queue.h"
#include "slab.h"
#include "vcx/exchange.h"
#include "vcx/vector_clock.h"

namespace vcx::vclock {

// Where the rank posted a receive: MessageEnd::posted_after, posted_after_waits.
struct ReceivePosting {
  std::uint64_t after = 0;
  std::uint32_t waits = 0;
};

class PointToPoint {
 public:
  PointToPoint(ClockPool& pool, Outbox& out) : pool_(pool), out_(out) {}

  // ---- the translator's calls (ExchangeControl) ----
  SendToken reserve_send(Rank dst, QueueId queue);
  ReceiveToken new_receive(bool answers_synchronous, ReceivePosting posted = ReceivePosting{});
  void bind_receive(ReceiveToken t, Rank src, QueueId queue);
  void drop_receive(ReceiveToken t);
  void hold_receive(ReceiveToken t);
  void release_hold(ReceiveToken t);
  void abandon_receive(ReceiveToken t);
  void discard_answer(const SendToken& t);
  void order_receive_after(ReceiveToken later, ReceiveToken earlier);
  void keep_receive_order(ReceiveToken t);
  void end_receive_order(ReceiveToken t);
  void add_pending_receives(const PendingReceives* p) { pending_.push_back(p); }

  // ---- the ops ----
  // Snapshot: the receive's answer to a synchronous sender is `clock`.
  void snapshot(std::uint64_t token, ClockSpan clock);
  // Wait: merges the message the receive matched into `clock`.
  struct Matched {
    bool message = false;  // false: the receive matched nothing to merge
    Rank peer{};
    QueueId queue{};
    std::uint64_t pos = 0;
    ReceivePosting posted{};
  };
  // False while its match or its message is not known yet.
  bool wait(std::uint64_t token, VectorClock& clock, Matched& matched);
  // WaitAck: merges the answer to the send (peer, queue, seq) into `clock`;
  // false while it is not in (asks the receiver once per call: NeedAck).
  bool wait_ack(Rank peer, QueueId queue, std::uint64_t seq, bool& asked, VectorClock& clock);

  // ---- the peers' messages ----
  // Signal (the clock is kept until waited for), Ack, NeedAck, Deferred.
  void on_signal(Rank src, const P2PHeader& h, PooledClock clock);
  void on_ack(Rank src, const P2PHeader& h, PooledClock clock);
  void on_need_ack(Rank src, const P2PHeader& h);
  void on_deferred(Rank src, const P2PHeader& h);
  // Senders waiting for answers of receives still unbound: tells those whose
  // receives now depend on the application (PendingReceives).
  void recheck_deferrals();

  // ---- stalls and diagnostics ----
  // Some synchronous sender was told to wait for this application.
  bool defers_answers() const { return deferred_unbound_ > 0; }
  // A Wait on `token` cannot finish before the application reports more (its
  // match, or whether an earlier receive was cancelled), or it waits for a
  // message from a peer for which peer_dependent(peer) holds.
  template <class PeerDependent>
  bool wait_needs_application(std::uint64_t token, PeerDependent&& peer_dependent) const;
  // The receiver said the answer to (peer, queue, seq) waits for its application.
  bool answer_deferred(Rank peer, QueueId queue, std::uint64_t seq) const {
    return deferred_acks_.count(QueuePosition{PeerQueue{peer, queue}, seq}) != 0;
  }
  std::string describe_wait(std::uint64_t token) const;
  std::size_t live_receives() const { return receives_.live(); }

 private:
  struct Slot {  // one position of an incoming queue
    PooledClock clock;            // the deposited clock, once arrived
    std::uint64_t receive = 0;    // bound receive token, 0 if none yet
    bool arrived = false;
    bool synchronous = false;
    bool merged = false;          // the bound receive merged it
    bool answered = false;        // acknowledgement sent (or not needed)
    bool ack_wanted = false;      // the sender waits for the answer
    bool deferred = false;        // the sender was told the answer is deferred
    bool order_deferred = false;  // ... because earlier receives' matches are not in yet
    bool discard = false;         // nobody will wait for it: drop on arrival
  };
  struct InQueue {
    std::uint64_t base = 1;  // position of slots.front()
    std::uint64_t next_bind = 1;
    std::deque<Slot> slots;
    std::vector<std::uint64_t> held;  // positions of receives with a cancel pending
    Slot& at(std::uint64_t pos);
  };
  // Receives waiting for the contribution of an earlier one, by their tokens:
  // as a rule one (a chain of receives), kept without an allocation.
  struct Followers {
    std::uint64_t first = 0;
    bool has_first = false;
    std::vector<std::uint64_t> more;
    bool empty() const { return !has_first; }
    void add(std::uint64_t t) {
      if (!has_first) {
        first = t;
        has_first = true;
      } else {
        more.push_back(t);
      }
    }
    template <class F>
    void each(F&& f) const {
      if (has_first) f(first);
      for (const std::uint64_t t : more) f(t);
    }
  };
  struct Receive {
    bool bound = false;
    PeerQueue key{};
    std::uint64_t pos = 0;
    PooledClock snapshot;
    bool snapshot_taken = false;
    bool merged = false;
    bool abandoned = false;  // its completion will never be waited for
    bool held = false;       // a cancel is pending on it
    ReceivePosting posted{};
    // Receive order (receive_order.cpp): what the matches of the earlier
    // receives it follows bring to its answer, how many of those are still
    // to come, and its own message's clock kept past its merge while later
    // receives may still follow it.
    PooledClock carry;
    PooledClock matched;
    std::uint32_t follows_pending = 0;
    bool kept = false;
    Followers followers;  // the later receives waiting for this one's contribution
  };

  void try_answer(Receive& r, std::uint64_t token);
  void maybe_defer(const PeerQueue& key, std::uint64_t seq, Slot& s);
  bool could_bind_later(const PeerQueue& key) const;
  // Receive order (receive_order.cpp).
  const ClockValue* matched_clock(const Receive& r);
  bool order_ready(const Receive& r);
  bool needs_matched(const Receive& r) const;
  // The slot's clock is about to go: keep it for receives that follow `r`.
  void retain_matched(Receive& r, Slot& s);
  void add_contribution(Receive& to, const Receive& from);
  // `token` may have become ready (bound, its message in, nothing pending):
  // hand its contribution to the receives waiting for it, and on down.
  void release_followers(std::uint64_t token);
  // The receive they waited for matched nothing: they stop waiting for it.
  void drop_followers(const Followers& waiting);
  // A hold was lifted or a receive moved: receives may have become ready.
  void recheck_followers();
  void maybe_release_receive(std::uint64_t token);
  void trim(InQueue& q);
  // The bound receive at `pos` matched nothing: later receives move up.
  void unbind(InQueue& q, std::uint64_t pos);
  bool held_before(const InQueue& q, std::uint64_t pos) const;
  // An abandoned receive's slot: its clock is not needed.
  void discard_slot(InQueue& q, Slot& s);

  // in_[key], remembering the last queue asked for: a rank's receives and
  // signals come mostly from one peer's queue in a row. Entries of in_ are
  // never erased, and an unordered_map keeps its elements in place.
  InQueue& queue_of(const PeerQueue& key) {
    if (!last_queue_ || !(last_queue_key_ == key)) {
      last_queue_ = &in_[key];
      last_queue_key_ = key;
    }
    return *last_queue_;
  }

  ClockPool& pool_;
  Outbox& out_;

  std::unordered_map<PeerQueue, std::uint64_t, PeerQueueHash> send_seq_;
  // The queues sent to last and their counters in send_seq_ (whose elements
  // never move): programs send to a few queues over and over, and hashing
  // every signal's queue was a quarter of the engine's time per event.
  struct SendSeqSlot {
    PeerQueue key{};
    std::uint64_t* next = nullptr;
  };
  std::array<SendSeqSlot, 8> send_seq_slots_{};
  std::unordered_map<PeerQueue, InQueue, PeerQueueHash> in_;
  InQueue* last_queue_ = nullptr;
  PeerQueue last_queue_key_{};
  Slab<Receive> receives_;
  std::unordered_map<QueuePosition, PooledClock, QueuePositionHash> acks_;
  std::size_t receives_followed_ = 0;  // receives with followers (none: nothing to recheck)
  std::size_t wanted_unbound_ = 0;     // answers wanted for slots without a receive
  std::size_t deferred_unbound_ = 0;   // of those, the ones told "deferred"
  std::vector<const PendingReceives*> pending_;
  // Answers the receivers said they cannot give before their application
  // goes on; a send waiting for one of them must not stall its application.
  std::unordered_set<QueuePosition, QueuePositionHash> deferred_acks_;
  // Answers nobody will wait for: released when (or if already) they arrive.
  std::unordered_set<QueuePosition, QueuePositionHash> discarded_acks_;
};

template <class PeerDependent>
bool PointToPoint::wait_needs_application(std::uint64_t token,
                                          PeerDependent&& peer_dependent) const {
  const Receive* r = receives_.get(token);
  if (!r) return false;
  if (!r->bound) return true;
  // Whether an earlier receive was cancelled is known only at its completion.
  auto it = in_.find(r->key);
  if (it != in_.end() && held_before(it->second, r->pos)) return true;
  return peer_dependent(r->key.peer);
}

}  // namespace vcx::vclock
