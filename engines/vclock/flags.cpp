// Flags, the writer's and the waiter's side (the deposition:
// flag_deposition.h).
//
// A write that may be a flag is registered at the tool of the PE whose
// memory it writes before the application makes it: the writer's tool sends
// FlagAnnounce as soon as it reads the write, the deposition answers
// FlagGrant at once, and the application writes only after that answer.
// What the write stores may be known then (a put of one element) or only
// after it (a fetching atomic: FlagValue follows); the writer's clock follows
// when its engine reaches the write (FlagClock, the clock as it is then,
// without a tick). A wait takes its snapshot (the deposition's registrations
// so far) as soon as its tool reads it, before the application goes on.
#include <string>

#include "vclock_engine.h"

namespace vcx::vclock {

// ---------------------------------------------------------------------------
// The writer and the waiter, as programs are queued

void VclockEngine::request_flags(std::uint64_t event_seq, std::size_t first) {
  std::uint32_t announced = 0;
  for (std::size_t i = first; i < ops_.size(); ++i) {
    Op& op = ops_[i];
    switch (op.kind) {
      case OpKind::FlagWrite:
        send_p2p(op.peer, MsgType::FlagAnnounce, op.flags, QueueId{op.queue.a, op.queue.b},
                 op.value, nullptr);
        flag_grants_[op.value] = event_seq;
        ++announced;
        break;
      case OpKind::FlagValue:
        send_p2p(op.peer, MsgType::FlagValue, op.flags, QueueId{op.queue.a, op.queue.b},
                 op.value, nullptr);
        break;
      case OpKind::FlagWait:
        // The registrations so far: those with a lower number came before.
        op.value = flag_deposition_.registrations();
        break;
      default:
        break;
    }
  }
  // No reply overtakes the program before every write of it is registered.
  add_gate(event_seq, announced);
}

void VclockEngine::on_flag_grant(const P2PHeader& h) {
  auto it = flag_grants_.find(h.seq);
  if (it == flag_grants_.end()) host_.fatal("vclock: a flag grant for no write");
  const std::uint64_t seq = it->second;
  flag_grants_.erase(it);
  pass_gate(seq);
}

bool VclockEngine::exec_flag_write(const Op& op) {
  // Registered first: the clock must not reach the deposition, nor the
  // application its reply, before the registration was granted.
  if (gated(programs_.front().event_seq)) return false;
  send_p2p(op.peer, MsgType::FlagClock, 0, QueueId{op.queue.a, 0}, op.value,
           clock_.view().data());
  return true;
}

bool VclockEngine::exec_flag_wait(const Op& op) {
  return flag_deposition_.wait(flag_wait_query(op), clock_, peers_);
}

bool VclockEngine::flag_wait_needs_application(const Op& op) const {
  // What a fetching atomic wrote comes from its application, which may need
  // this PE's application to go on first (an atomic on memory that Open MPI
  // serves only inside the target's OpenSHMEM calls); so does the clock of a
  // writer whose engine waits for its own application.
  return flag_deposition_.any_missing(flag_wait_query(op), [&](const MissingWrite& m) {
    return m.value_pending || peer_dependent(m.writer);
  });
}

std::string VclockEngine::flag_wait_blocked_on(const Op& op) const {
  std::string what;
  flag_deposition_.any_missing(flag_wait_query(op), [&](const MissingWrite& m) {
    what = (m.value_pending ? ": what a write of rank " : ": the clock of a write of rank ") +
           std::to_string(m.writer.value) + (m.value_pending ? " stored" : "");
    return true;
  });
  return what;
}

}  // namespace vcx::vclock
