// The generic exchange: runs call programs in program order on this process's
// vector clock, exchanging clocks with the other tool processes, and routes
// the other engines' messages to the part they belong to.
//
// Its parts, one concept each: PointToPoint (point_to_point.h),
// Collectives (collectives.h), LockRequests (this process's locks and
// leases, lock_requests.h), LockDeposition (the locks deposited here,
// lock_deposition.h), FlagDeposition (the flags of this PE's memory,
// flag_deposition.h), PeerMail (the wire, peer_mail.h). The engine itself
// keeps the program queue, the gates that keep replies behind order grants,
// and the writer's and waiter's side of flags (flags.cpp), which follow the
// queue.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "clock_pool.h"
#include "collectives.h"
#include "flag_deposition.h"
#include "lock_deposition.h"
#include "lock_requests.h"
#include "messages.h"
#include "peer_mail.h"
#include "peer_queue.h"
#include "point_to_point.h"
#include "vcx/exchange.h"
#include "vcx/plugin.h"
#include "vcx/transport.h"

namespace vcx::vclock {

class VclockEngine final : public ExchangeEngine, public ExchangeControl, public Plugin {
 public:
  VclockEngine(ToolHost& host, PeerTransport& transport, Rank self, std::uint32_t width);
  ~VclockEngine() override;

  // Plugin
  ExchangeEngine* engine() override { return this; }

  // ExchangeEngine
  ExchangeControl& control() override { return *this; }
  void enqueue(const CallProgram& program, bool needs_reply) override;
  void run() override;
  bool idle() const override { return programs_.empty(); }
  std::size_t backlog() const override { return programs_.size(); }
  bool must_not_stall() const override;
  std::string blocked_on() const override;
  std::uint64_t replies_allowed_through() const override;
  void add_observer(ClockedCallObserver* o) override {
    observers_.push_back(o);
    if (o->wants_notes() || o->wants_receive_notes()) note_observers_.push_back(o);
    if (o->wants_signals()) signal_observers_.push_back(o);
    if (o->wants_collective_mismatches()) mismatch_observers_.push_back(o);
  }
  ClockSpan clock() const override { return clock_.view(); }
  std::uint64_t clocked_calls() const override { return clocked_calls_; }
  void on_tick() override;
  std::uint64_t leased_acquisitions() const override {
    return lock_requests_.leased_acquisitions();
  }

  // ExchangeControl
  void register_group(GroupId id, std::span<const Rank> members,
                      std::uint32_t second_side) override;
  // Point-to-point: PointToPoint's.
  ReceiveToken new_receive(bool answers_synchronous) override {
    return p2p_.new_receive(answers_synchronous, {queued_tick_, queued_waits_});
  }
  void bind_receive(ReceiveToken t, Rank src, QueueId queue) override {
    p2p_.bind_receive(t, src, queue);
  }
  void drop_receive(ReceiveToken t) override { p2p_.drop_receive(t); }
  void hold_receive(ReceiveToken t) override { p2p_.hold_receive(t); }
  void release_hold(ReceiveToken t) override { p2p_.release_hold(t); }
  void abandon_receive(ReceiveToken t) override { p2p_.abandon_receive(t); }
  void discard_answer(const SendToken& t) override { p2p_.discard_answer(t); }
  void order_receive_after(ReceiveToken later, ReceiveToken earlier) override {
    p2p_.order_receive_after(later, earlier);
  }
  void keep_receive_order(ReceiveToken t) override { p2p_.keep_receive_order(t); }
  void end_receive_order(ReceiveToken t) override { p2p_.end_receive_order(t); }
  void add_pending_receives(const PendingReceives* p) override { p2p_.add_pending_receives(p); }
  SendToken reserve_send(Rank dst, QueueId queue) override { return p2p_.reserve_send(dst, queue); }

  // Diagnostics for tests.
  std::size_t pooled_clocks_in_use() const { return pool_.in_use(); }
  std::size_t live_receives() const { return p2p_.live_receives(); }
  std::size_t live_collectives() const { return collectives_.live(); }
  std::size_t pending_grants() const { return lock_requests_.pending_grants(); }
  std::size_t order_gates() const { return gates_.size(); }
  std::size_t flag_deposits() const { return flag_deposition_.deposits(); }
  bool dependent() const { return announced_dependent_; }
  const PeerBaselines& baselines() const { return mail_.baselines(); }

 private:
  // A program whose acquisitions wait for their depositions' order grants;
  // no reply may overtake it.
  struct OrderGate {
    std::uint64_t event_seq;
    std::uint32_t outstanding;
  };

  struct QueuedProgram {
    Model model;
    std::uint16_t call;
    bool clocked;
    bool needs_reply;
    std::uint64_t event_seq;
    std::uint64_t call_site;
    std::size_t op_count;
    std::size_t note_bytes;  // its notes, at notes_head_ in notes_ when it runs
  };

  // Program execution.
  void run_programs();
  bool execute(const Op& op);
  void finish_program(const QueuedProgram& p);
  // A collective this member completed, as CollectiveMismatch describes it.
  struct CompletedCollective {
    CollectiveRef ref;
    Model model{};
    std::uint16_t call = 0;
    std::uint64_t event_seq = 0;
    std::uint64_t call_site = 0;
  };
  // Tells the mismatch observers of this member's call at a group's first
  // mismatched instance, once per instance (vcx/exchange.h).
  void report_mismatch(const CompletedCollective& c);
  // For groups just found mismatched: the call at the first mismatched
  // instance, if this member completed it already.
  void report_new_mismatches();
  bool exec_wait(const Op& op);
  bool exec_wait_ack(const Op& op);
  bool exec_collective(const Op& op, bool complete);
  // Whether the head program cannot go on before the application reports
  // more, directly or through a peer that waits for its own application.
  bool waits_for_application() const;
  void announce_dependence();
  bool peer_dependent(Rank r) const {
    return r.value < dependent_peers_.size() && dependent_peers_[r.value] != 0;
  }

  // Locks (lock_requests.h): an acquisition waits for its program's order
  // grants, then for the grant's clock.
  bool exec_acquire(const Op& op);
  // Gates: a program with order grants still to come (of locks, or of flag
  // registrations) holds back every reply from it on.
  void add_gate(std::uint64_t event_seq, std::uint32_t grants);
  void pass_gate(std::uint64_t event_seq);
  bool gated(std::uint64_t event_seq) const {
    return !gates_.empty() && gates_.front().event_seq <= event_seq;
  }

  // Flags, the writer's and the waiter's side (flags.cpp): the requests of
  // the program queued at ops_[first..] (registrations sent, snapshots
  // taken), and execution.
  void request_flags(std::uint64_t event_seq, std::size_t first);
  void on_flag_grant(const P2PHeader& h);
  bool exec_flag_write(const Op& op);
  bool exec_flag_wait(const Op& op);
  // The head FlagWait cannot finish before a writer's application reports
  // what it wrote, or before a dependent writer's engine sends its clock.
  bool flag_wait_needs_application(const Op& op) const;
  std::string flag_wait_blocked_on(const Op& op) const;
  static FlagWaitQuery flag_wait_query(const Op& op) {
    return FlagWaitQuery{op.queue.a, op.value, op.flags, op.queue.b};
  }

  // Messages.
  void on_message(Rank src, std::span<const std::uint8_t> bytes);
  void send_p2p(Rank dst, MsgType type, std::uint16_t flags, QueueId q, std::uint64_t seq,
                const ClockValue* clock) {
    mail_.send_p2p(dst, type, flags, q, seq, clock);
  }

  ToolHost& host_;
  PeerTransport& transport_;
  Rank self_;
  std::uint32_t width_;
  VectorClock clock_;
  // Declared before everything that holds a PooledClock, so that it
  // outlives them.
  ClockPool pool_;
  PeerMail mail_;
  Collectives collectives_;
  LockDeposition lock_deposition_;
  FlagDeposition flag_deposition_;
  PointToPoint p2p_;
  LockRequests lock_requests_;
  std::uint64_t clocked_calls_ = 0;
  // This rank's own clock entry as of the last queued program: the clocked
  // programs queued so far (only they tick it).
  ClockValue queued_tick_ = 0;
  // Programs queued since the last clocked one that complete sends without
  // being clocked (MessageEnd::posted_after_waits).
  std::uint32_t queued_waits_ = 0;
  bool contribute_ahead_ = true;

  std::deque<QueuedProgram> programs_;
  std::deque<Op> ops_;
  bool head_started_ = false;
  std::size_t pc_ = 0;
  bool need_ack_sent_ = false;
  std::vector<Rank> peers_;
  std::vector<MessageEnd> messages_;  // of the call being run
  std::vector<SendCompletion> completed_sends_;  // by the clocked call being run
  std::vector<CollectivePart> collective_parts_;  // of the call being run
  GroupId call_group_{};
  QueueId call_queue_{};

  std::deque<OrderGate> gates_;

  // Peers that said their engines wait for their applications, and whether
  // this engine said so itself.
  std::vector<std::uint8_t> dependent_peers_;
  std::uint32_t dependent_peer_count_ = 0;
  bool announced_dependent_ = false;

  // This process's registrations not granted yet: write id → event seq.
  std::unordered_map<std::uint64_t, std::uint64_t> flag_grants_;

  std::vector<ClockedCallObserver*> observers_;
  std::vector<ClockedCallObserver*> note_observers_;  // those that want notes
  std::vector<ClockedCallObserver*> signal_observers_;  // those that want signals
  std::vector<ClockedCallObserver*> mismatch_observers_;  // ... collective mismatches
  // With mismatch observers: the last collectives completed per group, and
  // the first mismatched instance reported per group.
  std::unordered_map<GroupId, std::deque<CompletedCollective>> recent_collectives_;
  std::unordered_map<GroupId, std::uint64_t> mismatch_reported_;
  // The collective whose completion the head program waits for, if any, and
  // since how many ticks (on_tick).
  std::optional<CollectiveRef> waiting_collective_;
  CollectiveRef probed_{};
  unsigned ticks_waiting_ = 0;
  unsigned probe_ticks_ = 3;  // vclock.probe-ms; 0: never
  std::vector<std::uint8_t> notes_;  // the queued programs' notes, in queue order
  std::size_t notes_head_ = 0;       // where the head program's notes start in notes_
};

}  // namespace vcx::vclock
