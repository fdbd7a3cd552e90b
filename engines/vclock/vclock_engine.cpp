#include "vclock_engine.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <utility>

#include <spdlog/spdlog.h>

#include "vclock_options.h"
#include "vcx/binomial_tree.h"

namespace vcx::vclock {

VclockEngine::Slot& VclockEngine::InQueue::at(std::uint64_t pos) {
  while (base + slots.size() <= pos) slots.emplace_back();
  return slots[pos - base];
}

VclockEngine::VclockEngine(ToolHost& host, PeerTransport& transport, Rank self,
                           std::uint32_t width)
    : host_(host),
      transport_(transport),
      self_(self),
      width_(width),
      clock_(width),
      pool_(width),
      baselines_(self, width, option_count(host.options(), kVclockOptions, "vclock.diff-bytes")) {
  transport_.set_handler(PeerChannel::Exchange,
                         [this](Rank src, std::span<const std::uint8_t> bytes) {
                           on_message(src, bytes);
                         });
  scratch_.reserve(sizeof(CollHeader) + width * sizeof(ClockValue));
  contribute_ahead_ = option_switch(host.options(), kVclockOptions, "vclock.ahead");
  dependent_peers_.assign(width, 0);
}

VclockEngine::~VclockEngine() {
  transport_.set_handler(PeerChannel::Exchange, nullptr);
}

// ---------------------------------------------------------------------------
// Program queue

void VclockEngine::enqueue(const CallProgram& program, bool needs_reply) {
  const std::span<const std::uint8_t> notes =
      note_observers_.empty() ? std::span<const std::uint8_t>{} : program.notes();
  programs_.push_back(QueuedProgram{program.model(), program.call(), program.clocked(), needs_reply,
                                    program.event_seq(), program.ops().size(), notes.size()});
  notes_.insert(notes_.end(), notes.begin(), notes.end());
  const std::size_t first = ops_.size();
  bool resources = false, flags = false;
  for (const Op& op : program.ops()) {
    ops_.push_back(op);
    resources |= op.kind == OpKind::Acquire || op.kind == OpKind::Release ||
                 op.kind == OpKind::EndLeases;
    flags |= op.kind == OpKind::FlagWrite || op.kind == OpKind::FlagValue ||
             op.kind == OpKind::FlagWait;
  }
  if (resources) request_resources(program.event_seq(), first);
  if (flags) request_flags(program.event_seq(), first);
  if (program.clocked()) ++queued_tick_;
  if (!contribute_ahead_) return;
  for (const Op& op : program.ops())
    if (op.kind == OpKind::CollectiveContribute &&
        op.collective.kind == CollectiveKind::AllToAll && (op.flags & kCollectiveBlocking))
      contribute_ahead(op.collective);
}

void VclockEngine::run() {
  recheck_deferrals();
  run_programs();
  announce_dependence();
}

void VclockEngine::run_programs() {
  while (!programs_.empty()) {
    const QueuedProgram& p = programs_.front();
    if (!head_started_) {
      head_started_ = true;
      pc_ = 0;
      need_ack_sent_ = false;
      peers_.clear();
      messages_.clear();
      call_group_ = GroupId{};
      call_queue_ = QueueId{};
      if (p.clocked) clock_.tick(self_);
    }
    while (pc_ < p.op_count) {
      if (!execute(ops_[pc_])) return;
      ++pc_;
      need_ack_sent_ = false;
    }
    finish_program(p);
    ops_.erase(ops_.begin(), ops_.begin() + static_cast<std::ptrdiff_t>(p.op_count));
    if (p.note_bytes > 0) {
      // The run programs' notes are dropped from the front in bulk, not one
      // program at a time: with a deep backlog that would move the rest of
      // the queue's notes for every program.
      notes_head_ += p.note_bytes;
      if (notes_head_ == notes_.size()) {
        notes_.clear();
        notes_head_ = 0;
      } else if (notes_head_ >= notes_.size() / 2) {
        notes_.erase(notes_.begin(), notes_.begin() + static_cast<std::ptrdiff_t>(notes_head_));
        notes_head_ = 0;
      }
    }
    programs_.pop_front();
    head_started_ = false;
  }
}

void VclockEngine::finish_program(const QueuedProgram& p) {
  if (p.clocked) {
    ClockedCall call;
    call.rank = self_;
    call.seq = clocked_calls_++;
    call.event_seq = p.event_seq;
    call.model = p.model;
    call.call = p.call;
    call.call_name = host_.call_name(static_cast<std::uint8_t>(p.model), p.call);
    // A call may meet one peer twice (a synchronous send and its answer).
    std::sort(peers_.begin(), peers_.end());
    peers_.erase(std::unique(peers_.begin(), peers_.end()), peers_.end());
    call.peers = peers_;
    call.group = call_group_;
    call.queue = call_queue_;
    call.messages = messages_;
    call.clock = clock_.view();
    for (ClockedCallObserver* o : observers_) o->on_clocked_call(call);
    maybe_sweep_flags();
  }
  if (p.note_bytes > 0) {
    NoteBatch batch;
    batch.rank = self_;
    batch.model = p.model;
    batch.call = p.call;
    batch.call_name = host_.call_name(static_cast<std::uint8_t>(p.model), p.call);
    batch.clocked = p.clocked;
    batch.clock = clock_.view();
    batch.notes = std::span<const std::uint8_t>(notes_.data() + notes_head_, p.note_bytes);
    for (ClockedCallObserver* o : note_observers_) o->on_notes(batch);
  }
  if (p.needs_reply) host_.reply(p.event_seq);
}

bool VclockEngine::execute(const Op& op) {
  switch (op.kind) {
    case OpKind::Signal:
      send_p2p(op.peer, MsgType::Signal, op.flags, op.queue, op.value, clock_.view().data());
      for (ClockedCallObserver* o : signal_observers_)
        o->on_signal_sent(op.peer, op.queue, op.value);
      peers_.push_back(op.peer);
      messages_.push_back(MessageEnd{op.peer, true, false, op.queue, op.value, op.bytes});
      if (call_queue_ == QueueId{}) call_queue_ = op.queue;
      return true;
    case OpKind::Wait:
      return exec_wait(op);
    case OpKind::Snapshot: {
      Receive* r = receives_.get(op.value);
      if (!r || r->snapshot_taken) return true;
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
        r->snapshot = pool_.acquire_copy(clock_.view());
        try_answer(*r, op.value);
      }
      maybe_release_receive(op.value);
      return true;
    }
    case OpKind::WaitAck:
      return exec_wait_ack(op);
    case OpKind::CollectiveContribute:
      return exec_collective(op, false);
    case OpKind::CollectiveComplete:
      return exec_collective(op, true);
    case OpKind::Acquire:
      return exec_acquire(op);
    case OpKind::Release:
      exec_release(op);
      return true;
    case OpKind::Retire:
      retire_resource(op.queue.a);
      return true;
    case OpKind::EndLeases:
      return true;  // done when it was queued
    case OpKind::FlagWrite:
      return exec_flag_write(op);
    case OpKind::FlagValue:
      return true;  // sent when it was queued
    case OpKind::FlagWait:
      return exec_flag_wait(op);
  }
  return true;
}

// ---------------------------------------------------------------------------
// Point-to-point

SendToken VclockEngine::reserve_send(Rank dst, QueueId queue) {
  const PeerQueue key{dst, queue};
  SendSeqSlot& slot = send_seq_slots_[(dst.value + queue.a + queue.b) % send_seq_slots_.size()];
  if (!slot.next || !(slot.key == key)) slot = SendSeqSlot{key, &send_seq_[key]};
  return SendToken{dst, queue, ++*slot.next};
}

ReceiveToken VclockEngine::new_receive(bool answers_synchronous) {
  const std::uint64_t t = receives_.create();
  // Without an answer to give, the receive needs no snapshot.
  if (!answers_synchronous) receives_.get(t)->snapshot_taken = true;
  return ReceiveToken{t};
}

void VclockEngine::bind_receive(ReceiveToken t, Rank src, QueueId queue) {
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
      retain_matched(*r, t.value, s);
      discard_slot(q, s);
    }
    r->merged = true;
  }
  release_followers(t.value);
  maybe_release_receive(t.value);
}

void VclockEngine::abandon_receive(ReceiveToken t) {
  Receive* r = receives_.get(t.value);
  if (!r || r->merged) return;
  r->abandoned = true;
  if (!r->bound) return;  // handled when it is bound
  InQueue& q = queue_of(r->key);
  if (r->pos >= q.base) {
    Slot& s = q.at(r->pos);
    s.discard = true;
    if (s.arrived) {
      retain_matched(*r, t.value, s);
      discard_slot(q, s);
    }
  }
  r->merged = true;
  maybe_release_receive(t.value);
}

void VclockEngine::discard_slot(InQueue& q, Slot& s) {
  pool_.release(s.clock);
  s.clock = nullptr;
  s.merged = true;
  trim(q);
}

void VclockEngine::discard_answer(const SendToken& t) {
  const AckKey key{PeerQueue{t.dst, t.queue}, t.seq};
  auto it = acks_.find(key);
  if (it != acks_.end()) {
    pool_.release(it->second);
    acks_.erase(it);
    return;
  }
  discarded_acks_.insert(key);
}

void VclockEngine::drop_receive(ReceiveToken t) {
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
  destroy_receive(t.value);
  drop_followers(waiting);
  recheck_followers();
}

void VclockEngine::hold_receive(ReceiveToken t) {
  Receive* r = receives_.get(t.value);
  if (!r || !r->bound || r->held || r->merged) return;
  r->held = true;
  queue_of(r->key).held.push_back(r->pos);
}

void VclockEngine::release_hold(ReceiveToken t) {
  Receive* r = receives_.get(t.value);
  if (!r || !r->held) return;
  r->held = false;
  auto& h = queue_of(r->key).held;
  h.erase(std::find(h.begin(), h.end(), r->pos));
  recheck_followers();
}

bool VclockEngine::held_before(const InQueue& q, std::uint64_t pos) const {
  for (const std::uint64_t h : q.held)
    if (h < pos) return true;
  return false;
}

void VclockEngine::unbind(InQueue& q, std::uint64_t pos) {
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

void VclockEngine::try_answer(Receive& r, std::uint64_t token) {
  if (!r.bound || !r.snapshot_taken) return;
  InQueue& q = queue_of(r.key);
  if (r.pos < q.base) return;
  Slot& s = q.slots[r.pos - q.base];
  if (!s.arrived || s.answered) {
    if (s.arrived && s.answered && r.snapshot) {
      pool_.release(r.snapshot);
      r.snapshot = nullptr;
    }
    return;
  }
  if (s.synchronous) {
    if (r.follows_pending > 0) {
      // Earlier receives' matches are still to come; the answer waits for
      // them, and the sender's application must not wait for it meanwhile.
      if (!s.order_deferred) {
        s.order_deferred = true;
        send_p2p(r.key.peer, MsgType::Deferred, 0, r.key.queue, r.pos, nullptr);
      }
      return;
    }
    const ClockValue* answer = r.snapshot;
    if (r.carry) {
      if (r.snapshot) clock_merge(pool_.view(r.snapshot), ClockSpan(r.carry, width_));
      else answer = r.carry;
    }
    send_p2p(r.key.peer, MsgType::Ack, 0, r.key.queue, r.pos, answer);
  }
  s.answered = true;
  pool_.release(r.snapshot);
  r.snapshot = nullptr;
  (void)token;
  trim(q);
}

void VclockEngine::maybe_release_receive(std::uint64_t token) {
  Receive* r = receives_.get(token);
  if (!r || !r->merged || !r->snapshot_taken || r->snapshot != nullptr || r->kept) return;
  if (!r->followers.empty()) return;
  destroy_receive(token);
}

void VclockEngine::trim(InQueue& q) {
  while (!q.slots.empty() && q.slots.front().merged && q.slots.front().answered) {
    pool_.release(q.slots.front().clock);
    q.slots.pop_front();
    ++q.base;
  }
}

bool VclockEngine::exec_wait(const Op& op) {
  Receive* r = receives_.get(op.value);
  if (!r || r->merged) return true;
  if (!r->bound) return false;  // its queue position is not known yet
  InQueue& q = queue_of(r->key);
  if (held_before(q, r->pos)) return false;  // an earlier receive may still vanish
  Slot& s = q.at(r->pos);
  if (!s.arrived) return false;
  clock_.merge(pool_.view(s.clock));
  retain_matched(*r, op.value, s);
  pool_.release(s.clock);
  s.clock = nullptr;
  s.merged = true;
  r->merged = true;
  peers_.push_back(r->key.peer);
  messages_.push_back(MessageEnd{r->key.peer, false, (op.flags & kWaitWildcard) != 0,
                                 r->key.queue, r->pos, op.bytes});
  if (call_queue_ == QueueId{}) call_queue_ = r->key.queue;
  trim(q);
  maybe_release_receive(op.value);
  return true;
}

bool VclockEngine::exec_wait_ack(const Op& op) {
  auto it = acks_.find(AckKey{PeerQueue{op.peer, op.queue}, op.value});
  if (it == acks_.end()) {
    if (!need_ack_sent_) {
      send_p2p(op.peer, MsgType::NeedAck, 0, op.queue, op.value, nullptr);
      need_ack_sent_ = true;
    }
    return false;
  }
  clock_.merge(pool_.view(it->second));
  pool_.release(it->second);
  acks_.erase(it);
  deferred_acks_.erase(AckKey{PeerQueue{op.peer, op.queue}, op.value});
  peers_.push_back(op.peer);
  if (call_queue_ == QueueId{}) call_queue_ = op.queue;
  return true;
}

void VclockEngine::send_p2p(Rank dst, MsgType type, std::uint16_t flags, QueueId q,
                            std::uint64_t seq, const ClockValue* clock) {
  P2PHeader h{};
  h.type = type;
  h.flags = flags;
  h.queue_a = q.a;
  h.queue_b = q.b;
  h.seq = seq;
  send_clock_message(dst, h, clock);
}

template <class Header>
void VclockEngine::send_clock_message(Rank dst, const Header& h, const ClockValue* clock,
                                      bool aside) {
  pack_message(h, clock, width_, scratch_,
               clock && !aside ? baselines_.sending(dst) : nullptr);
  if (aside && clock) scratch_[offsetof(Header, encoding)] |= kEncodingAside;
  transport_.send(dst, PeerChannel::Exchange, scratch_);
}
template void VclockEngine::send_clock_message(Rank, const CollHeader&, const ClockValue*, bool);

ClockValue* VclockEngine::read_clock(Rank src, std::span<const std::uint8_t> bytes,
                                     std::size_t header_bytes, std::uint8_t encoding,
                                     std::uint32_t items, const char* what) {
  if (src.value >= width_) host_.fatal("vclock: a message from a rank outside the job");
  const bool keeps = (encoding & kEncodingKeep) != 0;
  const bool aside = (encoding & kEncodingAside) != 0;
  if (aside && keeps)
    host_.fatal(std::string("vclock: a ") + what + " message both aside and kept");
  encoding &= static_cast<std::uint8_t>(~kEncodingAside);
  const PeerBaselines::Arrival a =
      aside ? PeerBaselines::Arrival{} : baselines_.receiving(src, keeps);
  if (a.invalid)
    host_.fatal(std::string("vclock: a ") + what +
                " message whose clock does not follow the differential protocol (do all tools "
                "run with the same vclock.diff-bytes?)");
  ClockValue* tmp = pool_.acquire();
  if (!decode_clock(bytes.subspan(header_bytes), encoding & ~kEncodingKeep, items, width_, tmp,
                    a.base))
    host_.fatal(std::string("vclock: a ") + what + " message whose clock does not fit this job");
  if (a.base) std::copy_n(tmp, width_, a.base);
  if (a.offer) send_p2p(src, MsgType::DiffOffer, 0, QueueId{}, 0, nullptr);
  return tmp;
}

void VclockEngine::on_message(Rank src, std::span<const std::uint8_t> bytes) {
  if (bytes.empty()) return;
  const auto type = static_cast<MsgType>(bytes[0]);
  if (type == MsgType::CollUp || type == MsgType::CollDown || type == MsgType::CollCross) {
    CollHeader h;
    if (bytes.size() < sizeof h) host_.fatal("vclock: short collective message");
    std::memcpy(&h, bytes.data(), sizeof h);
    ClockValue* tmp = read_clock(src, bytes, sizeof h, h.encoding, h.width, "collective");
    on_collective(src, h, pool_.view(tmp));
    pool_.release(tmp);
    return;
  }
  P2PHeader h;
  if (bytes.size() < sizeof h) host_.fatal("vclock: short point-to-point message");
  std::memcpy(&h, bytes.data(), sizeof h);
  switch (type) {
    case MsgType::Signal:
    case MsgType::Ack:
    case MsgType::GrantClock:
    case MsgType::ReleaseClock:
    case MsgType::FlagClock: {
      ClockValue* tmp = read_clock(src, bytes, sizeof h, h.encoding, h.width, "point-to-point");
      const ClockSpan c(tmp, width_);
      // Ownership of tmp passes on to the handler.
      if (type == MsgType::Signal) on_signal(src, h, c);
      if (type == MsgType::Ack) on_ack(src, h, c);
      if (type == MsgType::GrantClock) on_grant_clock(src, h, c);
      if (type == MsgType::ReleaseClock) on_release_clock(src, h, c);
      if (type == MsgType::FlagClock) on_flag_clock(src, h, c);
      return;
    }
    case MsgType::FlagAnnounce:
      on_flag_announce(src, h);
      return;
    case MsgType::FlagGrant:
      on_flag_grant(src, h);
      return;
    case MsgType::FlagValue:
      on_flag_value(src, h);
      return;
    case MsgType::Acquire:
      on_acquire(src, h);
      return;
    case MsgType::Grant:
      on_grant(src, h);
      return;
    case MsgType::Release:
      on_release(src, h);
      return;
    case MsgType::Recall:
      on_recall(src, h);
      return;
    case MsgType::Dependence: {
      if (src.value >= width_) host_.fatal("vclock: a message from a rank outside the job");
      const std::uint8_t now = h.flags != 0;
      if (dependent_peers_[src.value] != now) {
        dependent_peers_[src.value] = now;
        if (now) ++dependent_peer_count_; else --dependent_peer_count_;
      }
      return;
    }
    case MsgType::NeedAck:
      on_need_ack(src, h);
      return;
    case MsgType::Deferred:
      deferred_acks_.insert(AckKey{PeerQueue{src, QueueId{h.queue_a, h.queue_b}}, h.seq});
      return;
    case MsgType::DiffOffer:
      if (src.value >= width_) host_.fatal("vclock: a message from a rank outside the job");
      if (!baselines_.take_offer(src))
        send_p2p(src, MsgType::DiffDecline, 0, QueueId{}, 0, nullptr);
      return;
    case MsgType::DiffDecline:
      if (src.value >= width_ || !baselines_.declined(src))
        host_.fatal("vclock: a DiffDecline for no offer");
      return;
    default:
      host_.fatal("vclock: unknown message type " + std::to_string(bytes[0]));
  }
}

void VclockEngine::on_signal(Rank src, const P2PHeader& h, ClockSpan clock) {
  const PeerQueue key{src, QueueId{h.queue_a, h.queue_b}};
  InQueue& q = queue_of(key);
  if (h.seq < q.base) host_.fatal("vclock: duplicate signal");
  Slot& s = q.at(h.seq);
  s.arrived = true;
  s.synchronous = (h.flags & kSignalSynchronous) != 0;
  s.answered = !s.synchronous;
  s.clock = const_cast<ClockValue*>(clock.data());  // from the pool, owned by the slot now
  if (!signal_observers_.empty()) {
    const SignalArrival a{src, key.queue, h.seq, s.synchronous, clock};
    for (ClockedCallObserver* o : signal_observers_) o->on_signal(a);
  }
  if (s.discard) {
    const std::uint64_t token = s.receive;  // the slot may be trimmed below
    if (Receive* r = receives_.get(token)) {
      try_answer(*r, token);
      retain_matched(*r, token, q.at(h.seq));
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

void VclockEngine::on_ack(Rank src, const P2PHeader& h, ClockSpan clock) {
  const AckKey key{PeerQueue{src, QueueId{h.queue_a, h.queue_b}}, h.seq};
  if (discarded_acks_.erase(key) != 0) {
    pool_.release(const_cast<ClockValue*>(clock.data()));
    return;
  }
  acks_[key] = const_cast<ClockValue*>(clock.data());
}

void VclockEngine::on_need_ack(Rank src, const P2PHeader& h) {
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

bool VclockEngine::could_bind_later(const PeerQueue& key) const {
  for (const PendingReceives* p : pending_)
    if (p->could_bind_later(key.peer, key.queue)) return true;
  return false;
}

// A synchronous sender waits for an answer that only a receive still unbound
// here can give, and that receive's position depends on what this rank's
// application does next. Tell the sender, so that neither application is
// held: each would wait for the other.
void VclockEngine::maybe_defer(const PeerQueue& key, std::uint64_t seq, Slot& s) {
  if (s.deferred || !could_bind_later(key)) return;
  s.deferred = true;
  ++deferred_unbound_;
  send_p2p(key.peer, MsgType::Deferred, 0, key.queue, seq, nullptr);
}

void VclockEngine::recheck_deferrals() {
  if (wanted_unbound_ == deferred_unbound_) return;
  for (auto& [key, q] : in_) {
    for (std::size_t i = 0; i < q.slots.size(); ++i) {
      Slot& s = q.slots[i];
      if (s.ack_wanted && !s.answered && !s.receive && !s.deferred) maybe_defer(key, q.base + i, s);
    }
  }
}

bool VclockEngine::must_not_stall() const {
  return deferred_unbound_ > 0 || waits_for_application();
}

// True when the head program cannot finish before the application reports
// more: a receive whose match a later completion call reveals, a receive
// behind one that may turn out cancelled, a synchronous send whose answer
// the receiver deferred — or a wait for a message from a peer whose own
// engine is in that state (it said so: Dependence). The application must
// then not be held, or it could not make the calls the engines wait for.
bool VclockEngine::waits_for_application() const {
  if (programs_.empty() || !head_started_) return false;
  const QueuedProgram& p = programs_.front();
  if (pc_ >= p.op_count) return false;
  const Op& op = ops_[pc_];
  auto peer_dependent = [&](Rank r) {
    return r.value < dependent_peers_.size() && dependent_peers_[r.value] != 0;
  };
  switch (op.kind) {
    case OpKind::WaitAck:
      return deferred_acks_.count(AckKey{PeerQueue{op.peer, op.queue}, op.value}) != 0 ||
             peer_dependent(op.peer);
    case OpKind::Wait: {
      const Receive* r = receives_.get(op.value);
      if (!r) return false;
      if (!r->bound) return true;
      // Whether an earlier receive was cancelled is known only at its completion.
      auto it = in_.find(r->key);
      if (it != in_.end() && held_before(it->second, r->pos)) return true;
      return peer_dependent(r->key.peer);
    }
    case OpKind::CollectiveContribute:
    case OpKind::CollectiveComplete: {
      if (dependent_peer_count_ == 0) return false;
      auto g = groups_.find(op.collective.group);
      if (g == groups_.end()) return true;  // its members are not known yet
      for (const Rank m : g->second.members)
        if (peer_dependent(m)) return true;
      return false;
    }
    case OpKind::Acquire:
      // The grant's clock waits for the releases of earlier holders, whoever
      // they are.
      return dependent_peer_count_ != 0;
    case OpKind::FlagWait:
      return flag_wait_needs_application(op);
    default:
      return false;
  }
}

void VclockEngine::announce_dependence() {
  const bool now = waits_for_application();
  if (now == announced_dependent_) return;
  announced_dependent_ = now;
  for (std::uint32_t r = 0; r < width_; ++r)
    if (r != self_.value)
      send_p2p(Rank{r}, MsgType::Dependence, now ? 1 : 0, QueueId{}, 0, nullptr);
}

std::string VclockEngine::blocked_on() const {
  if (programs_.empty()) return "nothing";
  const QueuedProgram& p = programs_.front();
  std::string what = std::string(host_.call_name(static_cast<std::uint8_t>(p.model), p.call)) +
                     " (event " + std::to_string(p.event_seq) + ")";
  if (!head_started_ || pc_ >= p.op_count) return what;
  const Op& op = ops_[pc_];
  switch (op.kind) {
    case OpKind::Wait: {
      const Receive* r = receives_.get(op.value);
      if (r && !r->bound) return what + ": a receive whose match is not known yet";
      if (r) return what + ": signal " + std::to_string(r->pos) + " from rank " +
                    std::to_string(r->key.peer.value);
      return what;
    }
    case OpKind::WaitAck:
      return what + ": answer from rank " + std::to_string(op.peer.value);
    case OpKind::Acquire:
      for (const OrderWait& w : order_waits_)
        if (w.event_seq == p.event_seq)
          return what + ": a lock held at rank " + std::to_string(w.key.key.peer.value);
      return what + ": the clock of a lock granted at rank " + std::to_string(op.peer.value) +
             " (releases ordered before it are not in yet)";
    case OpKind::CollectiveContribute:
    case OpKind::CollectiveComplete:
      return what + ": collective " + std::to_string(op.collective.instance) + " on group " +
             std::to_string(op.collective.group.value);
    case OpKind::FlagWrite:
      return what + ": the registration of a write at rank " + std::to_string(op.peer.value);
    case OpKind::FlagWait:
      return what + flag_wait_blocked_on(op);
    default:
      return what;
  }
}

}  // namespace vcx::vclock
