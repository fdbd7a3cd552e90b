// A translator plugin maps one programming model's calls onto the exchange.
#pragma once

#include <cstdint>

#include "vcx/call_program.h"
#include "vcx/channel/blocked_call.h"
#include "vcx/channel/event_record.h"
#include "vcx/exchange.h"
#include "vcx/wait_state.h"

namespace vcx {

class Translator {
 public:
  virtual ~Translator() = default;
  virtual Model model() const = 0;
  // Name of a call as the user wrote it ("MPI_Waitall"); stable for the run.
  virtual const char* call_name(std::uint16_t call) const = 0;
  // Called once per event of this model, in program order, as soon as the
  // event is read. Fills `out` (already reset to the event's model and seq)
  // and may register groups and receives on `ctl`. Must not keep pointers
  // into `ev` after returning.
  virtual void translate(const EventHeader& ev, ExchangeControl& ctl, CallProgram& out) = 0;
  // The application detached; pending bookkeeping may be settled.
  virtual void finish(ExchangeControl& ctl) {}

  // For the deadlock analysis (vcx/wait_state.h). The rank is in `call`, a
  // call of this model it may be blocked in (vcx/channel/blocked_call.h),
  // and every event it pushed through call.after_seq was translated: what
  // it waits for. False: not a call this translator can say that of.
  virtual bool wait_state(const channel::BlockedCall& call, WaitState* out) {
    (void)call, (void)out;
    return false;
  }
  // What the rank has done that others' waits depend on; adds to `out`.
  virtual void wait_facts(WaitFacts* out) const { (void)out; }
};

}  // namespace vcx
