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
  Op op;
  op.kind = OpKind::Signal;
  op.peer = target;
  op.queue = queue;
  op.value = ctl.reserve_send(target, queue).seq;
  out.push(op);
}

inline void push_annotated_wait(ExchangeControl& ctl, Rank origin, QueueId queue,
                                CallProgram& out) {
  const ReceiveToken tok = ctl.new_receive(false);
  ctl.bind_receive(tok, origin, queue);
  Op op;
  op.kind = OpKind::Wait;
  op.value = tok.value;
  out.push(op);
}

inline void push_resource_deposit(Rank deposition, QueueId resource, CallProgram& out) {
  Op op;
  op.peer = deposition;
  op.queue = resource;
  op.flags = kResourceDeposit;
  op.kind = OpKind::Acquire;
  out.push(op);
  op.kind = OpKind::Release;
  out.push(op);
}

inline void push_resource_fetch(Rank deposition, QueueId resource, CallProgram& out) {
  Op op;
  op.peer = deposition;
  op.queue = resource;
  op.flags = kResourceShared | kResourceFetch;
  op.kind = OpKind::Acquire;
  out.push(op);
}

}  // namespace vcx
