// The receive notes of one call program (vcx/analysis.h, NoteKind::
// ReceivePosted...), for analyses of the matching: an ExchangeControl that
// forwards everything to the engine's and notes what it is told about
// receives, so that every binding, drop and order reaches the analyses in
// the order the engine learns it.
#pragma once

#include "vcx/analysis.h"
#include "vcx/call_program.h"
#include "vcx/exchange.h"

namespace vcx::mpi {

class ReceiveNoting final : public ExchangeControl {
 public:
  ReceiveNoting(ExchangeControl& to, CallProgram& out) : to_(to), out_(out) {}

  void register_group(GroupId id, std::span<const Rank> members,
                      std::uint32_t second_side) override {
    to_.register_group(id, members, second_side);
  }
  ReceiveToken new_receive(bool answers_synchronous) override {
    return to_.new_receive(answers_synchronous);
  }
  void bind_receive(ReceiveToken t, Rank src, QueueId queue) override {
    out_.add_note(NoteKind::ReceiveBound, ReceiveBoundNote{t.value, queue.a, queue.b, src.value, 0});
    to_.bind_receive(t, src, queue);
  }
  void drop_receive(ReceiveToken t) override {
    out_.add_note(NoteKind::ReceiveDropped, ReceiveNote{t.value});
    to_.drop_receive(t);
  }
  void hold_receive(ReceiveToken t) override { to_.hold_receive(t); }
  void release_hold(ReceiveToken t) override { to_.release_hold(t); }
  void abandon_receive(ReceiveToken t) override { to_.abandon_receive(t); }
  void discard_answer(const SendToken& t) override { to_.discard_answer(t); }
  void order_receive_after(ReceiveToken later, ReceiveToken earlier) override {
    out_.add_note(NoteKind::ReceiveOrdered, ReceiveOrderedNote{later.value, earlier.value});
    to_.order_receive_after(later, earlier);
  }
  void keep_receive_order(ReceiveToken t) override { to_.keep_receive_order(t); }
  void end_receive_order(ReceiveToken t) override { to_.end_receive_order(t); }
  void add_pending_receives(const PendingReceives* p) override { to_.add_pending_receives(p); }
  SendToken reserve_send(Rank dst, QueueId queue) override {
    return to_.reserve_send(dst, queue);
  }

  // The call completes the synchronous send `t`: its message was matched.
  void sync_send_completed(const SendToken& t) {
    out_.add_note(NoteKind::SyncSendCompleted,
                  SyncSendCompletedNote{t.queue.a, t.queue.b, t.seq, t.dst.value, 0});
  }

  // A receive posted on the queues of `space` by the call at `pc` (the
  // application's return address, 0 if unknown).
  // `forced`: a wildcard receive a replay forced to want_source.
  void posted(ReceiveToken t, std::uint64_t space, std::int32_t want_source,
              std::int32_t want_tag, std::uint64_t pc, bool forced = false) {
    ReceivePostedNote n{};
    n.token = t.value;
    n.space = space;
    n.pc = pc;
    n.want_source = want_source < 0 ? kNoteAnySource : want_source;
    n.want_tag = want_tag < 0 ? kNoteAnyTag : want_tag;
    n.call = out_.call();
    n.forced = forced ? 1 : 0;
    out_.add_note(NoteKind::ReceivePosted, n);
  }
  void completed(ReceiveToken t) {
    out_.add_note(NoteKind::ReceiveCompleted, ReceiveNote{t.value});
  }

 private:
  ExchangeControl& to_;
  CallProgram& out_;
};

}  // namespace vcx::mpi
