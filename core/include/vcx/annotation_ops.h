// The primitives every translator gives user annotations (docs/annotations.md):
// a process signal or wait is point-to-point on a queue the translator
// chooses; a resource is kept at its deposition like a lock, a signal
// deposits, a wait fetches every deposit made before it.
#pragma once

#include "vcx/call_program.h"
#include "vcx/exchange.h"

namespace vcx {

inline void push_annotated_signal(ExchangeControl& ctl, Rank target, QueueId queue,
                                  CallProgram& out) {
  out.push(Op::signal(ctl.reserve_send(target, queue)));
}

inline void push_annotated_wait(ExchangeControl& ctl, Rank origin, QueueId queue,
                                CallProgram& out) {
  const ReceiveToken tok = ctl.new_receive(false);
  ctl.bind_receive(tok, origin, queue);
  out.push(Op::wait(tok));
}

inline void push_resource_deposit(Rank deposition, std::uint64_t resource, CallProgram& out) {
  out.push(Op::acquire(deposition, resource, kResourceDeposit));
  out.push(Op::release(deposition, resource, kResourceDeposit));
}

inline void push_resource_fetch(Rank deposition, std::uint64_t resource, CallProgram& out) {
  out.push(Op::acquire(deposition, resource, kResourceShared | kResourceFetch));
}

}  // namespace vcx
