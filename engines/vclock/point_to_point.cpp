#include "point_to_point.h"

#include <algorithm>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>

namespace vcx::vclock {

PointToPoint::Slot& PointToPoint::InQueue::at(std::uint64_t pos) {
  while (base + slots.size() <= pos) slots.emplace_back();
  return slots[pos - base];
}

SendToken PointToPoint::reserve_send(Rank dst, QueueId queue) {
  const PeerQueue key{dst, queue};
  SendSeqSlot& slot = send_seq_slots_[(dst.value + queue.a + queue.b) % send_seq_slots_.size()];
  if (!slot.next || !(slot.key == key)) slot = SendSeqSlot{key, &send_seq_[key]};
  return SendToken{dst, queue, ++*slot.next};
}

ReceiveToken PointToPoint::new_receive(bool answers_synchronous, ReceivePosting posted) {
  const std::uint64_t t = receives_.create();
  receives_.get(t)->posted = posted;
  // Without an answer to give, the receive needs no snapshot.
  if (!answers_synchronous) receives_.get(t)->snapshot_taken = true;
  return ReceiveToken{t};
}

void PointToPoint::bind_receive(ReceiveToken t, Rank src, QueueId queue) {
  Receive* r = receives_.get(t.value);
  if (!r || r->bound) return;
  r->bound = true;
  r->key = PeerQueue{src, queue};
  InQueue& q = queue_of(r->key);
  r->pos = q.next_bind++;
  Slot& s = q.at(r->pos);
  s.receive = t.value;
  if (s.ack_wanted && !s.answered) {
    --wanted_unbound_;
    if (s.deferred) --deferred_unbound_;
  }
  try_answer(*r, t.value);
  if (r->abandoned) {
    s.discard = true;
    if (s.arrived) {
      retain_matched(*r, s);
      discard_slot(q, s);
    }
    r->merged = true;
  }
  release_followers(t.value);
  maybe_release_receive(t.value);
}

void PointToPoint::abandon_receive(ReceiveToken t) {
  Receive* r = receives_.get(t.value);
  if (!r || r->merged) return;
  r->abandoned = true;
  if (!r->bound) return;  // handled when it is bound
  InQueue& q = queue_of(r->key);
  if (r->pos >= q.base) {
    Slot& s = q.at(r->pos);
    s.discard = true;
    if (s.arrived) {
      retain_matched(*r, s);
      discard_slot(q, s);
    }
  }
  r->merged = true;
  maybe_release_receive(t.value);
}

void PointToPoint::discard_slot(InQueue& q, Slot& s) {
  s.clock.reset();
  s.merged = true;
  trim(q);
}

void PointToPoint::discard_answer(const SendToken& t) {
  const QueuePosition key{PeerQueue{t.dst, t.queue}, t.seq};
  auto it = acks_.find(key);
  if (it != acks_.end()) {
    acks_.erase(it);
    return;
  }
  discarded_acks_.insert(key);
}

void PointToPoint::drop_receive(ReceiveToken t) {
  Receive* r = receives_.get(t.value);
  if (!r) return;
  if (r->bound) {
    InQueue& q = queue_of(r->key);
    // Its hold goes with it; the receives behind it move up before any of
    // them may contribute to what follows them.
    if (r->held) {
      r->held = false;
      q.held.erase(std::find(q.held.begin(), q.held.end(), r->pos));
    }
    unbind(q, r->pos);
  }
  // Taken as the last thing before the receive goes, as unbinding may still
  // hand its contribution on.
  r = receives_.get(t.value);
  const Followers waiting = r ? std::exchange(r->followers, Followers{}) : Followers{};
  if (!waiting.empty()) --receives_followed_;
  receives_.destroy(t.value);
  drop_followers(waiting);
  recheck_followers();
}

void PointToPoint::hold_receive(ReceiveToken t) {
  Receive* r = receives_.get(t.value);
  if (!r || !r->bound || r->held || r->merged) return;
  r->held = true;
  queue_of(r->key).held.push_back(r->pos);
}

void PointToPoint::release_hold(ReceiveToken t) {
  Receive* r = receives_.get(t.value);
  if (!r || !r->held) return;
  r->held = false;
  auto& h = queue_of(r->key).held;
  h.erase(std::find(h.begin(), h.end(), r->pos));
  recheck_followers();
}

bool PointToPoint::held_before(const InQueue& q, std::uint64_t pos) const {
  for (const std::uint64_t h : q.held)
    if (h < pos) return true;
  return false;
}

void PointToPoint::unbind(InQueue& q, std::uint64_t pos) {
  // Every receive bound after `pos` takes the position before its own. The
  // signals stay where they are: they belong to the messages.
  for (std::uint64_t p = pos; p + 1 < q.next_bind; ++p) {
    Slot& to = q.at(p);
    Slot& from = q.at(p + 1);
    if (from.answered && from.synchronous && from.receive)
      spdlog::warn(
          "a receive was cancelled after a later receive on its queue had answered a "
          "synchronous sender; that answer came from the wrong receive");
    to.receive = from.receive;
    if (Receive* moved = receives_.get(to.receive)) {
      moved->pos = p;
      for (auto& h : q.held)
        if (h == p + 1) h = p;
    }
  }
  if (q.next_bind > pos) {
    Slot& freed = q.at(q.next_bind - 1);
    freed.receive = 0;
    --q.next_bind;
    // A synchronous sender waiting on that message waits for an unbound slot again.
    if (freed.ack_wanted && !freed.answered) {
      ++wanted_unbound_;
      if (freed.deferred) ++deferred_unbound_;
    }
  }
  // Moved receives may now answer the messages they really got.
  for (std::uint64_t p = pos; p < q.next_bind; ++p) {
    Slot& s = q.at(p);
    if (Receive* r = receives_.get(s.receive)) try_answer(*r, s.receive);
  }
}

void PointToPoint::try_answer(Receive& r, std::uint64_t token) {
  if (!r.bound || !r.snapshot_taken) return;
  InQueue& q = queue_of(r.key);
  if (r.pos < q.base) return;
  Slot& s = q.slots[r.pos - q.base];
  if (!s.arrived || s.answered) {
    if (s.arrived && s.answered) r.snapshot.reset();
    return;
  }
  if (s.synchronous) {
    if (r.follows_pending > 0) {
      // Earlier receives' matches are still to come; the answer waits for
      // them, and the sender's application must not wait for it meanwhile.
      if (!s.order_deferred) {
        s.order_deferred = true;
        out_.send_p2p(r.key.peer, MsgType::Deferred, 0, r.key.queue, r.pos, nullptr);
      }
      return;
    }
    const ClockValue* answer = r.snapshot.data();
    if (r.carry) {
      if (r.snapshot) r.snapshot.merge(r.carry.view());
      else answer = r.carry.data();
    }
    out_.send_p2p(r.key.peer, MsgType::Ack, 0, r.key.queue, r.pos, answer);
  }
  s.answered = true;
  r.snapshot.reset();
  (void)token;
  trim(q);
}

void PointToPoint::maybe_release_receive(std::uint64_t token) {
  Receive* r = receives_.get(token);
  if (!r || !r->merged || !r->snapshot_taken || r->snapshot || r->kept) return;
  if (!r->followers.empty()) return;
  receives_.destroy(token);
}

void PointToPoint::trim(InQueue& q) {
  while (!q.slots.empty() && q.slots.front().merged && q.slots.front().answered) {
    q.slots.pop_front();
    ++q.base;
  }
}

bool PointToPoint::wait(std::uint64_t token, VectorClock& clock, Matched& matched) {
  Receive* r = receives_.get(token);
  if (!r || r->merged) return true;
  if (!r->bound) return false;  // its queue position is not known yet
  InQueue& q = queue_of(r->key);
  if (held_before(q, r->pos)) return false;  // an earlier receive may still vanish
  Slot& s = q.at(r->pos);
  if (!s.arrived) return false;
  clock.merge(s.clock.view());
  retain_matched(*r, s);
  s.clock.reset();
  s.merged = true;
  r->merged = true;
  matched = Matched{true, r->key.peer, r->key.queue, r->pos, r->posted};
  trim(q);
  maybe_release_receive(token);
  return true;
}

bool PointToPoint::wait_ack(Rank peer, QueueId queue, std::uint64_t seq, bool& asked,
                            VectorClock& clock) {
  const QueuePosition key{PeerQueue{peer, queue}, seq};
  auto it = acks_.find(key);
  if (it == acks_.end()) {
    if (!asked) {
      out_.send_p2p(peer, MsgType::NeedAck, 0, queue, seq, nullptr);
      asked = true;
    }
    return false;
  }
  clock.merge(it->second.view());
  acks_.erase(it);
  deferred_acks_.erase(key);
  return true;
}

void PointToPoint::on_signal(Rank src, const P2PHeader& h, PooledClock clock) {
  const PeerQueue key{src, QueueId{h.queue_a, h.queue_b}};
  InQueue& q = queue_of(key);
  if (h.seq < q.base) out_.fatal("vclock: duplicate signal");
  Slot& s = q.at(h.seq);
  s.arrived = true;
  s.synchronous = (h.flags & kSignalSynchronous) != 0;
  s.answered = !s.synchronous;
  s.clock = std::move(clock);
  if (s.discard) {
    const std::uint64_t token = s.receive;  // the slot may be trimmed below
    if (Receive* r = receives_.get(token)) {
      try_answer(*r, token);
      retain_matched(*r, q.at(h.seq));
    }
    discard_slot(q, q.at(h.seq));
    release_followers(token);
    maybe_release_receive(token);
    return;
  }
  if (s.receive) {
    if (Receive* r = receives_.get(s.receive)) {
      const std::uint64_t token = s.receive;
      try_answer(*r, token);
      release_followers(token);
      maybe_release_receive(token);
    }
  }
}

void PointToPoint::on_ack(Rank src, const P2PHeader& h, PooledClock clock) {
  const QueuePosition key{PeerQueue{src, QueueId{h.queue_a, h.queue_b}}, h.seq};
  if (discarded_acks_.erase(key) != 0) return;  // nobody waits for it
  acks_[key] = std::move(clock);
}

void PointToPoint::on_need_ack(Rank src, const P2PHeader& h) {
  const PeerQueue key{src, QueueId{h.queue_a, h.queue_b}};
  InQueue& q = queue_of(key);
  if (h.seq < q.base) return;  // answered already
  Slot& s = q.at(h.seq);
  if (s.answered || s.ack_wanted) return;
  s.ack_wanted = true;
  if (!s.receive) {
    ++wanted_unbound_;
    maybe_defer(key, h.seq, s);
  }
}

void PointToPoint::on_deferred(Rank src, const P2PHeader& h) {
  deferred_acks_.insert(QueuePosition{PeerQueue{src, QueueId{h.queue_a, h.queue_b}}, h.seq});
}

bool PointToPoint::could_bind_later(const PeerQueue& key) const {
  for (const PendingReceives* p : pending_)
    if (p->could_bind_later(key.peer, key.queue)) return true;
  return false;
}

// A synchronous sender waits for an answer that only a receive still unbound
// here can give, and that receive's position depends on what this rank's
// application does next. Tell the sender, so that neither application is
// held: each would wait for the other.
void PointToPoint::maybe_defer(const PeerQueue& key, std::uint64_t seq, Slot& s) {
  if (s.deferred || !could_bind_later(key)) return;
  s.deferred = true;
  ++deferred_unbound_;
  out_.send_p2p(key.peer, MsgType::Deferred, 0, key.queue, seq, nullptr);
}

void PointToPoint::recheck_deferrals() {
  if (wanted_unbound_ == deferred_unbound_) return;
  for (auto& [key, q] : in_) {
    for (std::size_t i = 0; i < q.slots.size(); ++i) {
      Slot& s = q.slots[i];
      if (s.ack_wanted && !s.answered && !s.receive && !s.deferred) maybe_defer(key, q.base + i, s);
    }
  }
}

void PointToPoint::snapshot(std::uint64_t token, ClockSpan clock) {
  Receive* r = receives_.get(token);
  if (!r || r->snapshot_taken) return;
  r->snapshot_taken = true;
  bool needed = true;
  if (r->bound) {
    const InQueue& q = queue_of(r->key);
    if (r->pos < q.base) {
      needed = false;  // already answered and trimmed
    } else {
      const Slot& s = q.slots[r->pos - q.base];
      needed = !(s.arrived && !s.synchronous) && !s.answered;
    }
  }
  if (needed) {
    r->snapshot = pool_.take_copy(clock);
    try_answer(*r, token);
  }
  maybe_release_receive(token);
}

std::string PointToPoint::describe_wait(std::uint64_t token) const {
  const Receive* r = receives_.get(token);
  if (!r) return "";
  if (!r->bound) return ": a receive whose match is not known yet";
  return ": signal " + std::to_string(r->pos) + " from rank " + std::to_string(r->key.peer.value);
}

}  // namespace vcx::vclock
