// The deposition of flags: the registered writes to the flags of this PE's
// memory, and which of them a wait that read a value merges
// (docs/clock-rules.md, "Flags").
//
// A write is registered here before its application makes it, so the
// registrations are numbered in an order that follows the applications'. A
// wait's snapshot is the number of registrations when its tool read it,
// before its application went on: every write its read could have seen has a
// lower number, every later one a higher. It merges those before its
// snapshot whose value says they came before the value it read: a store of
// that very value, or a counter step (an increment or a decrement) not past
// it. Which writes it merges never depends on the timing of tool messages.
//
// Invariants: deposits of a flag are kept in registration order; a deposit
// whose clock is below this engine's clock adds nothing to a later wait and
// is dropped (merged ones at once, others when their flag is waited for or
// in a sweep once many accumulated); a write that stored nothing is dropped
// as soon as that is known.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "clock_pool.h"
#include "vcx/call_program.h"
#include "vcx/vector_clock.h"

namespace vcx::vclock {

// A wait on a flag as its program names it: the flag, the registrations
// before it, the waited value's type (FlagMode bits) and the value it read.
struct FlagWaitQuery {
  std::uint64_t flag = 0;
  std::uint64_t snapshot = 0;
  std::uint16_t bits = 0;
  std::uint64_t value = 0;
};

// A registration before a wait's snapshot that the wait cannot do without
// yet: what it stored (value_pending) or, since it merges, its clock.
struct MissingWrite {
  Rank writer{};
  bool value_pending = false;
};

class FlagDeposition {
 public:
  // ---- the writers' messages ----
  // FlagAnnounce: registers the write `id` of `writer` (`bits`: FlagMode and
  // type; `value`: what it stores, when known).
  void announce(Rank writer, std::uint64_t flag, std::uint64_t id, std::uint16_t bits,
                std::uint64_t value);
  // FlagValue: what a write registered with kFlagPending stored.
  void value(Rank writer, std::uint64_t flag, std::uint64_t id, std::uint16_t bits,
             std::uint64_t value);
  // FlagClock: the writer's clock at the write.
  void clock(Rank writer, std::uint64_t flag, std::uint64_t id, PooledClock clock);

  // ---- the waits of this PE ----
  // The snapshot a wait read now takes.
  std::uint64_t registrations() const { return registrations_; }
  // Merges into `clock` what the wait merges and adds the writers to
  // `writers`; false (nothing merged) while a registration before its
  // snapshot is missing something the decision needs.
  bool wait(const FlagWaitQuery& q, VectorClock& clock, std::vector<Rank>& writers);
  // Calls f(MissingWrite) for each missing registration, in order, until f
  // returns true; returns whether one did.
  template <class F>
  bool any_missing(const FlagWaitQuery& q, F&& f) const;

  // Drops, over every flag, deposits below `now` once many accumulated.
  void maybe_sweep(ClockSpan now);
  std::size_t deposits() const { return deposits_; }

  // Whether a wait that read `value` (type `wait_bits`) merges a write of
  // `deposit_value` (`deposit_bits`).
  static bool merges(std::uint16_t deposit_bits, std::uint64_t deposit_value,
                     std::uint16_t wait_bits, std::uint64_t value);

 private:
  struct Deposit {
    Rank writer{};
    std::uint64_t id = 0;     // the writer's name for the write
    std::uint64_t index = 0;  // registration number, over every flag
    std::uint16_t bits = 0;   // FlagMode, width, signedness; kFlagPending until known
    std::uint64_t value = 0;
    PooledClock clock;        // the writer's clock at the write, once arrived
  };

  Deposit* find(std::uint64_t flag, Rank writer, std::uint64_t id);
  // Drops the flag's deposits whose clocks are below `now`.
  void prune(std::uint64_t flag, ClockSpan now);

  std::unordered_map<std::uint64_t, std::vector<Deposit>> flags_;
  std::uint64_t registrations_ = 0;
  std::size_t deposits_ = 0;     // over every flag
  std::size_t sweep_at_ = 1024;  // sweep every flag when there are more
};

template <class F>
bool FlagDeposition::any_missing(const FlagWaitQuery& q, F&& f) const {
  auto it = flags_.find(q.flag);
  if (it == flags_.end()) return false;
  for (const Deposit& d : it->second) {
    if (d.index >= q.snapshot) break;
    if (flag_mode(d.bits) == kFlagPending) {
      if (f(MissingWrite{d.writer, true})) return true;
    } else if (!d.clock && merges(d.bits, d.value, q.bits, q.value)) {
      if (f(MissingWrite{d.writer, false})) return true;
    }
  }
  return false;
}

}  // namespace vcx::vclock
