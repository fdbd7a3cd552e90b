#include "vclock_engine.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <utility>

#include "vclock_options.h"

namespace vcx::vclock {

VclockEngine::VclockEngine(ToolHost& host, PeerTransport& transport, Rank self,
                           std::uint32_t width)
    : host_(host),
      transport_(transport),
      self_(self),
      width_(width),
      clock_(width),
      pool_(width),
      mail_(host, transport, self, width,
            option_count(host.options(), kVclockOptions, "vclock.diff-bytes")),
      collectives_(self, width, pool_, mail_),
      lock_deposition_(pool_, mail_),
      p2p_(pool_, mail_),
      lock_requests_(pool_, mail_, [&host] { return host.app_leases(); }) {
  transport_.set_handler(ToolPart::Exchange,
                         [this](Rank src, std::span<const std::uint8_t> bytes) {
                           on_message(src, bytes);
                         });
  contribute_ahead_ = option_switch(host.options(), kVclockOptions, "vclock.ahead");
  // Ticks come every 100 ms; a wait seen at `probe_ticks_` ticks in a row
  // has lasted at least (probe_ticks_ - 1) * 100 ms.
  const std::uint64_t probe_ms = option_count(host.options(), kVclockOptions, "vclock.probe-ms");
  probe_ticks_ =
      probe_ms == 0 ? 0 : static_cast<unsigned>(std::min<std::uint64_t>(probe_ms / 100, 1000)) + 1;
  dependent_peers_.assign(width, 0);
}

VclockEngine::~VclockEngine() {
  transport_.set_handler(ToolPart::Exchange, nullptr);
}

// ---------------------------------------------------------------------------
// Program queue

void VclockEngine::enqueue(const CallProgram& program, bool needs_reply) {
  const std::span<const std::uint8_t> notes =
      note_observers_.empty() ? std::span<const std::uint8_t>{} : program.notes();
  programs_.push_back(QueuedProgram{program.model(), program.call(), program.clocked(), needs_reply,
                                    program.event_seq(), program.call_site(),
                                    program.ops().size(), notes.size()});
  notes_.insert(notes_.end(), notes.begin(), notes.end());
  const std::size_t first = ops_.size();
  bool resources = false, flags = false, completes_sends = false;
  for (const Op& op : program.ops()) {
    ops_.push_back(op);
    resources |= op.kind == OpKind::Acquire || op.kind == OpKind::Release ||
                 op.kind == OpKind::EndLeases;
    flags |= op.kind == OpKind::FlagWrite || op.kind == OpKind::FlagValue ||
             op.kind == OpKind::FlagWait;
    completes_sends |= op.kind == OpKind::SendCompleted;
  }
  if (resources)
    add_gate(program.event_seq(), lock_requests_.request(ops_, first, program.event_seq()));
  if (flags) request_flags(program.event_seq(), first);
  if (program.clocked()) {
    ++queued_tick_;
    queued_waits_ = 0;
  } else if (completes_sends) {
    ++queued_waits_;
  }
  if (!contribute_ahead_) return;
  for (const Op& op : program.ops())
    if (op.kind == OpKind::CollectiveContribute &&
        op.collective.kind == CollectiveKind::AllToAll && (op.flags & kCollectiveBlocking))
      collectives_.queued(op.collective, queued_tick_);
}

void VclockEngine::run() {
  p2p_.recheck_deferrals();
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
      collective_parts_.clear();
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
    call.completed_sends = completed_sends_;
    call.collectives = collective_parts_;
    call.call_site = p.call_site;
    call.clock = clock_.view();
    for (ClockedCallObserver* o : observers_) o->on_clocked_call(call);
    completed_sends_.clear();
    flag_deposition_.maybe_sweep(clock_.view());
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
      messages_.push_back(MessageEnd{op.peer, true, false, false, op.queue, op.value, op.bytes});
      if (call_queue_ == QueueId{}) call_queue_ = op.queue;
      return true;
    case OpKind::Wait:
      return exec_wait(op);
    case OpKind::Snapshot:
      p2p_.snapshot(op.value, clock_.view());
      return true;
    case OpKind::WaitAck:
      return exec_wait_ack(op);
    case OpKind::CollectiveContribute:
      return exec_collective(op, false);
    case OpKind::CollectiveComplete:
      return exec_collective(op, true);
    case OpKind::Acquire:
      return exec_acquire(op);
    case OpKind::Release:
      lock_requests_.release(op, clock_.view());
      peers_.push_back(op.peer);
      return true;
    case OpKind::Retire:
      lock_deposition_.retire(op.queue.a);
      return true;
    case OpKind::EndLeases:
      return true;  // done when it was queued
    case OpKind::FlagWrite:
      return exec_flag_write(op);
    case OpKind::FlagValue:
      return true;  // sent when it was queued
    case OpKind::FlagWait:
      return exec_flag_wait(op);
    case OpKind::SendCompleted:
      if (!observers_.empty()) {
        const QueuedProgram& p = programs_.front();
        const SendCompletion c{op.peer,  !p.clocked, p.model,     p.call,
                               op.queue, op.value,   p.call_site, p.event_seq};
        if (p.clocked)
          completed_sends_.push_back(c);
        else
          for (ClockedCallObserver* o : observers_) o->on_send_completed(c);
      }
      return true;
  }
  return true;
}

// ---------------------------------------------------------------------------
// Collectives (collectives.h)

void VclockEngine::register_group(GroupId id, std::span<const Rank> members,
                                  std::uint32_t second_side) {
  if (!collectives_.add_group(id, members, second_side)) return;
  for (ClockedCallObserver* o : observers_) o->on_group(id, *collectives_.members(id));
  // Messages that arrived before the group was known can be routed now.
  collectives_.route_early(id);
}

bool VclockEngine::exec_collective(const Op& op, bool complete) {
  call_group_ = op.collective.group;
  if (!complete) {
    if (!observers_.empty()) collective_parts_.push_back(CollectivePart{op.collective, false});
    collectives_.contribute(op, clock_.view());
    report_new_mismatches();
    return true;
  }
  if (!collectives_.complete(op, clock_)) {
    waiting_collective_ = op.collective;
    report_new_mismatches();
    return false;
  }
  waiting_collective_.reset();
  if (!observers_.empty()) collective_parts_.push_back(CollectivePart{op.collective, true});
  if (mismatch_observers_.empty()) return true;
  const CollectiveRef& c = op.collective;
  const QueuedProgram& p = programs_.front();
  const CompletedCollective done{c, p.model, p.call, p.event_seq, p.call_site};
  if (collectives_.mismatched(c)) {
    if (c.instance == collectives_.first_mismatch(c.group)) report_mismatch(done);
  } else {
    auto& recent = recent_collectives_[c.group];
    if (recent.size() == CollectiveMismatch::kRecentCollectives) recent.pop_front();
    recent.push_back(done);
  }
  report_new_mismatches();
  return true;
}

void VclockEngine::on_tick() {
  // A completion that waited from one tick to the next asks the group's
  // first member whether every member calls the same (collectives.h).
  if (!waiting_collective_) {
    ticks_waiting_ = 0;
    return;
  }
  const CollectiveRef& c = *waiting_collective_;
  if (c.group != probed_.group || c.instance != probed_.instance) {
    probed_ = CollectiveRef{c.group, c.instance};
    ticks_waiting_ = 0;
  }
  if (probe_ticks_ != 0 && ++ticks_waiting_ == probe_ticks_) collectives_.probe(c);
}

void VclockEngine::report_new_mismatches() {
  if (!collectives_.has_new_mismatches()) return;
  for (const GroupId g : collectives_.take_new_mismatches()) {
    const std::uint64_t first = collectives_.first_mismatch(g);
    const auto it = recent_collectives_.find(g);
    if (it == recent_collectives_.end()) continue;
    for (const CompletedCollective& c : it->second)
      if (c.ref.instance == first) report_mismatch(c);
  }
}

void VclockEngine::report_mismatch(const CompletedCollective& c) {
  std::uint64_t& reported = mismatch_reported_[c.ref.group];
  if (reported != 0 && reported <= c.ref.instance) return;
  reported = c.ref.instance;
  const std::vector<Rank>* members = collectives_.members(c.ref.group);
  CollectiveMismatch m;
  m.group = c.ref.group;
  m.instance = c.ref.instance;
  if (members) m.members = *members;
  m.kind = c.ref.kind;
  m.root = c.ref.root;
  m.operation = c.ref.operation;
  m.model = c.model;
  m.operation_name =
      c.ref.operation ? host_.call_name(static_cast<std::uint8_t>(c.model), c.ref.operation) : "";
  m.call_name = host_.call_name(static_cast<std::uint8_t>(c.model), c.call);
  m.event_seq = c.event_seq;
  m.call_site = c.call_site;
  for (ClockedCallObserver* o : mismatch_observers_) o->on_collective_mismatch(m);
}

// ---------------------------------------------------------------------------
// Point-to-point (point_to_point.h)

bool VclockEngine::exec_wait(const Op& op) {
  PointToPoint::Matched m;
  if (!p2p_.wait(op.value, clock_, m)) return false;
  if (!m.message) return true;
  peers_.push_back(m.peer);
  messages_.push_back(MessageEnd{m.peer, false, (op.flags & kWaitWildcard) != 0,
                                 (op.flags & kWaitPostedInCall) != 0, m.queue, m.pos, op.bytes,
                                 m.posted.after, m.posted.waits});
  if (call_queue_ == QueueId{}) call_queue_ = m.queue;
  return true;
}

bool VclockEngine::exec_wait_ack(const Op& op) {
  if (!p2p_.wait_ack(op.peer, op.queue, op.value, need_ack_sent_, clock_)) return false;
  peers_.push_back(op.peer);
  if (call_queue_ == QueueId{}) call_queue_ = op.queue;
  return true;
}

// ---------------------------------------------------------------------------
// Locks (lock_requests.h) and the gates of order grants

bool VclockEngine::exec_acquire(const Op& op) {
  // The order grant comes first on the same pair; waiting for it too keeps
  // a reply from overtaking it whatever the transport. Under a lease nobody
  // was asked.
  if (!(op.flags & kResourceLeased) && gated(programs_.front().event_seq)) return false;
  if (!lock_requests_.acquire(op, clock_)) return false;
  peers_.push_back(op.peer);
  return true;
}

void VclockEngine::add_gate(std::uint64_t event_seq, std::uint32_t grants) {
  if (grants == 0) return;
  if (!gates_.empty() && gates_.back().event_seq == event_seq)
    gates_.back().outstanding += grants;
  else
    gates_.push_back(OrderGate{event_seq, grants});
}

void VclockEngine::pass_gate(std::uint64_t event_seq) {
  for (OrderGate& g : gates_)
    if (g.event_seq == event_seq) --g.outstanding;
  while (!gates_.empty() && gates_.front().outstanding == 0) gates_.pop_front();
}

std::uint64_t VclockEngine::replies_allowed_through() const {
  return gates_.empty() ? ~std::uint64_t{0} : gates_.front().event_seq - 1;
}

// ---------------------------------------------------------------------------
// Messages

void VclockEngine::on_message(Rank src, std::span<const std::uint8_t> bytes) {
  if (bytes.empty()) return;
  const auto type = static_cast<MsgType>(bytes[0]);
  if (type == MsgType::CollUp || type == MsgType::CollDown || type == MsgType::CollCross ||
      type == MsgType::CollMismatch || type == MsgType::CollProbe) {
    CollHeader h;
    if (bytes.size() < sizeof h) host_.fatal("vclock: short collective message");
    std::memcpy(&h, bytes.data(), sizeof h);
    const PooledClock clock =
        mail_.read_clock(src, bytes, sizeof h, h.encoding, h.width, "collective", pool_);
    collectives_.on_message(src, h, clock.view());
    if (!mismatch_observers_.empty()) report_new_mismatches();
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
      PooledClock c =
          mail_.read_clock(src, bytes, sizeof h, h.encoding, h.width, "point-to-point", pool_);
      if (type == MsgType::Signal) {
        if (!signal_observers_.empty()) {
          const SignalArrival a{src, QueueId{h.queue_a, h.queue_b}, h.seq,
                                (h.flags & kSignalSynchronous) != 0, c.view()};
          for (ClockedCallObserver* o : signal_observers_) o->on_signal(a);
        }
        p2p_.on_signal(src, h, std::move(c));
      } else if (type == MsgType::Ack) {
        p2p_.on_ack(src, h, std::move(c));
      } else if (type == MsgType::GrantClock) {
        lock_requests_.on_grant_clock(src, h, std::move(c));
      } else if (type == MsgType::ReleaseClock) {
        lock_deposition_.on_release_clock(src, h, std::move(c));
      } else {
        flag_deposition_.clock(src, h.queue_a, h.seq, std::move(c));
      }
      return;
    }
    case MsgType::FlagAnnounce:
      flag_deposition_.announce(src, h.queue_a, h.seq, h.flags, h.queue_b);
      send_p2p(src, MsgType::FlagGrant, 0, QueueId{h.queue_a, 0}, h.seq, nullptr);
      return;
    case MsgType::FlagGrant:
      on_flag_grant(h);
      return;
    case MsgType::FlagValue:
      flag_deposition_.value(src, h.queue_a, h.seq, h.flags, h.queue_b);
      return;
    case MsgType::Acquire:
      lock_deposition_.on_acquire(src, h);
      return;
    case MsgType::Grant:
      pass_gate(lock_requests_.on_grant(src, h));
      return;
    case MsgType::Release:
      lock_deposition_.on_release(src, h);
      return;
    case MsgType::Recall:
      lock_requests_.on_recall(src, h);
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
      p2p_.on_need_ack(src, h);
      return;
    case MsgType::Deferred:
      p2p_.on_deferred(src, h);
      return;
    case MsgType::DiffOffer:
      mail_.on_offer(src);
      return;
    case MsgType::DiffDecline:
      mail_.on_decline(src);
      return;
    default:
      host_.fatal("vclock: unknown message type " + std::to_string(bytes[0]));
  }
}

bool VclockEngine::must_not_stall() const {
  return p2p_.defers_answers() || waits_for_application();
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
  switch (op.kind) {
    case OpKind::WaitAck:
      return p2p_.answer_deferred(op.peer, op.queue, op.value) || peer_dependent(op.peer);
    case OpKind::Wait:
      return p2p_.wait_needs_application(op.value, [&](Rank r) { return peer_dependent(r); });
    case OpKind::CollectiveContribute:
    case OpKind::CollectiveComplete: {
      if (dependent_peer_count_ == 0) return false;
      const std::vector<Rank>* members = collectives_.members(op.collective.group);
      if (!members) return true;  // its members are not known yet
      for (const Rank m : *members)
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
    case OpKind::Wait:
      return what + p2p_.describe_wait(op.value);
    case OpKind::WaitAck:
      return what + ": answer from rank " + std::to_string(op.peer.value);
    case OpKind::Acquire:
      if (const auto deposition = lock_requests_.waiting_for_grant(p.event_seq))
        return what + ": a lock held at rank " + std::to_string(deposition->value);
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
