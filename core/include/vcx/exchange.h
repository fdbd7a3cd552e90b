// The generic signal/wait exchange as translators see it. Implemented by the
// vclock module; translators never touch clocks or tool messages themselves.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "vcx/analysis.h"
#include "vcx/call_program.h"
#include "vcx/types.h"
#include "vcx/vector_clock.h"
#include "vcx/wait_state.h"

namespace vcx {

// Implemented by translators: receives posted but not yet bound to a queue.
class PendingReceives {
 public:
  virtual ~PendingReceives() = default;
  virtual bool could_bind_later(Rank src, QueueId queue) const = 0;
};

// Calls a translator makes while it translates events. Translation runs in
// program order as soon as an event is read, usually long before the
// program's clocks can be computed.
class ExchangeControl {
 public:
  virtual ~ExchangeControl() = default;

  // Members in group order (the order trees are built over). Call before any
  // collective on the group; registering the same id again must give the same
  // members. A group with two sides (for Bipartite collectives) lists the
  // first side's members, then the second's; `second_side` is the position
  // where the second side starts (0: one side).
  virtual void register_group(GroupId id, std::span<const Rank> members,
                              std::uint32_t second_side = 0) = 0;

  // A receive posted by the application. Bind it to its queue once its
  // source and queue are known, in the queue's FIFO order (MPI posting order):
  // the n-th bind on (src, queue) receives the n-th signal sent on it.
  // A receive that can never answer a synchronous sender (e.g. one edge of a
  // neighbourhood collective) needs no Snapshot op.
  virtual ReceiveToken new_receive(bool answers_synchronous = true) = 0;
  virtual void bind_receive(ReceiveToken t, Rank src, QueueId queue) = 0;
  // A receive that will never match (cancelled, or to MPI_PROC_NULL). A
  // bound receive gives up its queue position: the receives bound after it
  // on its queue move up one place.
  virtual void drop_receive(ReceiveToken t) = 0;
  // A receive that may turn out to have matched nothing (MPI_Cancel was
  // called on it): receives bound after it on its queue do not merge until
  // it is dropped or released.
  virtual void hold_receive(ReceiveToken t) = 0;
  virtual void release_hold(ReceiveToken t) = 0;
  // A receive that will match but whose completion nobody will wait for
  // (its request was freed while active): its signal is discarded on arrival.
  virtual void abandon_receive(ReceiveToken t) = 0;
  // The answer to this synchronous send will never be waited for.
  virtual void discard_answer(const SendToken& t) = 0;

  // MPI's non-overtaking rule for receives: `later` matched only after
  // `earlier` had matched (`earlier` was posted first, was still pending, and
  // could have taken `later`'s message). The answer `later` gives a
  // synchronous sender then also carries the clock of the message `earlier`
  // matched and, transitively, what `earlier`'s own answer carries beyond its
  // posting clock. Declare it before `later` is bound. A dropped `earlier`
  // (it matched nothing) contributes nothing.
  virtual void order_receive_after(ReceiveToken later, ReceiveToken earlier) = 0;
  // Receives not declared yet may still be ordered after `t` (one was posted
  // while `t` was pending): the engine keeps what `t`'s match brings until
  // end_receive_order(t), also past its completion.
  virtual void keep_receive_order(ReceiveToken t) = 0;
  virtual void end_receive_order(ReceiveToken t) = 0;

  // Lets the engine ask whether a posted receive may still be bound to
  // (src, queue): its position depends on events the application has not
  // reported yet (e.g. an earlier wildcard receive still pending). Where a
  // wait depends on such a receive, the tool does not make the applications
  // wait, because that could deadlock them.
  virtual void add_pending_receives(const class PendingReceives* p) = 0;

  // Numbers the next signal from this process on (dst, queue). Every Signal
  // op carries the seq reserved for it here, in program order.
  virtual SendToken reserve_send(Rank dst, QueueId queue) = 0;
};

// A point-to-point message of a clocked call: a signal it sent, or one its
// receive took. The n-th message sent on a (source, destination, queue) is
// the one the n-th receive on it takes: equal positions pair the two ends.
struct MessageEnd {
  Rank peer{};  // the destination of a sent message, the source of a received one
  bool sent = false;
  bool wildcard = false;  // received by a receive posted for any source
  // A received message: the call that took it posted its receive too (an
  // MPI_Recv); otherwise an earlier call did.
  bool posted_in_call = false;
  QueueId queue{};
  std::uint64_t position = 0;  // on its queue between the two ranks, from 1
  std::uint64_t bytes = 0;     // the message's size, 0 if unknown
  // A received message: where the receiver posted its receive. After
  // `posted_after` clocked calls, and, unless the call that took it posted
  // it, after `posted_after_waits` of the calls since the last of those that
  // completed sends without being clocked (SendCompletion::before).
  std::uint64_t posted_after = 0;
  std::uint32_t posted_after_waits = 0;
};

// A send a call completed (OpKind::SendCompleted): the position-th message
// of this rank on (peer, queue). Completed by a clocked call, it is one of
// that call's (ClockedCall::completed_sends); by a call that was not clocked
// (an MPI_Wait of an MPI_Isend), observers hear of it on its own
// (ClockedCallObserver::on_send_completed), `before` set: the rank
// completed it before its next clocked call.
struct SendCompletion {
  Rank peer{};
  bool before = false;
  Model model{};
  std::uint16_t call = 0;       // the call that completed it
  QueueId queue{};
  std::uint64_t position = 0;
  std::uint64_t call_site = 0;  // that call's return address, 0 if unknown
  std::uint64_t event_seq = 0;  // that call's event (EventHeader::seq)
};

// A collective instance a clocked call took part in: it contributed to it
// (entered it) or completed it (CollectiveContribute, CollectiveComplete).
struct CollectivePart {
  CollectiveRef ref{};
  bool completed = false;
};

// One clocked call, after its program ran to the end.
struct ClockedCall {
  Rank rank{};
  std::uint64_t seq = 0;          // per-rank count of clocked calls, from 0
  std::uint64_t event_seq = 0;    // the channel event of the call (EventHeader::seq)
  Model model{};
  std::uint16_t call = 0;
  const char* call_name = "";
  std::span<const Rank> peers;    // point-to-point partners (world ranks)
  GroupId group{};                // collective group, 0 if none
  QueueId queue{};                // first point-to-point queue, {0,0} if none
  ClockSpan clock;                // the clock recorded for the call
  std::span<const MessageEnd> messages;  // in the order the call's program took them
  std::span<const SendCompletion> completed_sends;
  std::span<const CollectivePart> collectives;  // in program order
  std::uint64_t call_site = 0;    // the application's return address, 0 if unknown
};

// A collective instance whose members did not all make the same call (kind,
// root or operation differ: MPI 4.0, 6.14 requires every member to call the
// same collectives in the same order). From the first such instance on a
// group on, the exchange completes that group's collectives without their
// edges at every member, so that no tool waits for a part that never comes.
// Each member's observers hear once of its own call at that first instance
// (again if an earlier one is found later): when the member completes it,
// or, if it had completed it already, when it learns of the mismatch (from
// the last kRecentCollectives it completed on the group).
struct CollectiveMismatch {
  static constexpr std::size_t kRecentCollectives = 64;
  GroupId group{};
  std::uint64_t instance = 0;     // the group's first mismatched instance
  std::span<const Rank> members;  // the group's, in position order (empty if unknown)
  // This member's call for the instance, as its translator described it:
  CollectiveKind kind = CollectiveKind::AllToAll;
  Rank root{};
  std::uint16_t operation = 0;
  Model model{};
  const char* operation_name = "";  // the operation's call name ("" if 0)
  // The call that completed it here (the collective itself, or the wait of
  // a non-blocking one), with the application's return address.
  const char* call_name = "";
  std::uint64_t event_seq = 0;
  std::uint64_t call_site = 0;
};

// A point-to-point signal (a message's clock) that reached this rank's tool.
struct SignalArrival {
  Rank source{};
  QueueId queue{};
  std::uint64_t position = 0;  // on its queue, from 1
  bool synchronous = false;
  ClockSpan clock;             // the sender's clock at the signal
};

// When an application call that sent an event ran, as the application's
// clock saw it (plugins that declare kNeedsTimestamps).
struct EventTime {
  std::uint64_t event_seq = 0;  // EventHeader::seq
  std::uint64_t enter_ns = 0;   // the call was entered
  // The call of the previous timed event of the channel returned (0 if
  // unknown): a call's leave is known only once the next one is sent.
  std::uint64_t previous_leave_ns = 0;
  std::uint64_t call_site = 0;  // return address into the program, 0 if unknown
};

// An application rank's clock against rank 0's (ClockSyncEvent), for
// modules that want times.
struct ClockSync {
  std::uint32_t phase = 0;  // 0: start of the run, 1: end
  std::int64_t offset_ns = 0;
  std::uint64_t local_ns = 0;
  std::uint64_t rtt_ns = 0;
};

class ClockedCallObserver {
 public:
  virtual ~ClockedCallObserver() = default;
  virtual void on_clocked_call(const ClockedCall& call) = 0;
  // The notes of a call program (vcx/analysis.h), in program order, after
  // on_clocked_call for a clocked one. Only observers that want_notes().
  virtual void on_notes(const NoteBatch& batch) { (void)batch; }
  virtual bool wants_notes() const { return false; }
  // Receive notes (NoteKind::ReceivePosted...) too, through on_notes.
  virtual bool wants_receive_notes() const { return false; }
  // Every point-to-point signal that reaches this rank, as it arrives (any
  // time, not in program order); the clock is valid during the call only.
  virtual bool wants_signals() const { return false; }
  // A group of ranks a translator registered (a communicator, a window's,
  // an active set), members in group order, before any call uses it.
  virtual void on_group(GroupId id, std::span<const Rank> members) {
    (void)id;
    (void)members;
  }
  // Every timed event as the tool reads it, in channel order, before its
  // clocked call (if any) ran (kNeedsTimestamps).
  virtual void on_event_time(const EventTime& t) { (void)t; }
  // The rank's clock against rank 0's, at the start and at the end.
  virtual void on_clock_sync(const ClockSync& s) { (void)s; }
  virtual void on_signal(const SignalArrival& s) { (void)s; }
  virtual bool wants_collective_mismatches() const { return false; }
  virtual void on_collective_mismatch(const CollectiveMismatch& m) { (void)m; }
  // A send completed by a call that was not clocked, in program order
  // between the clocked calls (SendCompletion).
  virtual void on_send_completed(const SendCompletion& c) { (void)c; }
  // This rank's engine sent a signal (in program order, as it ran the call).
  virtual void on_signal_sent(Rank dst, QueueId queue, std::uint64_t position) {
    (void)dst;
    (void)queue;
    (void)position;
  }
  // The tool has nothing to do right now (it is about to sleep), or is about
  // to report that its rank is done: the moment to send what was held back
  // to travel in bulk.
  virtual void on_idle() {}
  // Where the rank is (vcx/wait_state.h): told when it has been in a call
  // it may be blocked in for a while, when it left that call, and when it
  // finished; while it stays in the call, again at every look, with `wait`
  // null. Only for observers that want it (the tool then looks at the
  // rank's blocked-call slot every so often).
  virtual bool wants_wait_states() const { return false; }
  virtual void on_wait_state(const RankWait& w) { (void)w; }
  // The application is gone (normally or not), or the run ends: write what
  // is buffered and what was found so far. May come more than once.
  virtual void flush() {}
};

// The engine the tool process drives: it queues translated programs, runs
// them in program order as far as the exchange allows, and reacts to messages
// from other tool processes. Implemented by the vclock module.
class ExchangeEngine {
 public:
  virtual ~ExchangeEngine() = default;
  virtual ExchangeControl& control() = 0;
  // Queues a copy of the program. Programs with no ops are still queued so
  // that replies keep program order.
  virtual void enqueue(const CallProgram& program, bool needs_reply) = 0;
  // Runs queued programs until one blocks or none is left.
  virtual void run() = 0;
  virtual bool idle() const = 0;  // nothing queued
  // Programs queued and not yet run to their end: how far the engine lags
  // behind what its tool has read.
  virtual std::size_t backlog() const = 0;
  // True while making the application wait could deadlock (see
  // ExchangeControl::add_pending_receives): the tool then answers at once.
  virtual bool must_not_stall() const = 0;
  // The last queued event a reply may be given for before the engine has run
  // it (--stall never, must_not_stall): replies never overtake an acquisition
  // whose deposition has not granted it yet, so that the application calls
  // MPI's lock only in the order the depositions decided.
  virtual std::uint64_t replies_allowed_through() const = 0;
  // Human-readable description of what the head program waits for.
  virtual std::string blocked_on() const = 0;
  virtual void add_observer(ClockedCallObserver* o) = 0;
  virtual ClockSpan clock() const = 0;
  virtual std::uint64_t clocked_calls() const = 0;
  // Lock acquisitions the application made under a lease, asking nobody.
  virtual std::uint64_t leased_acquisitions() const { return 0; }
  // About every 100 ms while the tool watches where its rank is: an engine
  // whose head program has waited since the last tick may ask its peers why
  // (a collective whose members' calls differ: CollectiveMismatch).
  virtual void on_tick() {}
};

}  // namespace vcx
