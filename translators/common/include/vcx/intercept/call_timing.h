// Physical times of the application's calls, for traces: when a call was
// entered and when it returned, read from CLOCK_MONOTONIC (the vDSO, about
// 16 ns a read) only while a module asks for them (kModeTimestamps).
//
// An event is usually sent as its call is entered (a send, a blocking
// collective), so its enter time is the time it is begun. A call that sends
// its event after its MPI or OpenSHMEM call ran (a receive, a wait) holds a
// CallEntry from its start instead. The return of a call is known only after
// its event left: the client stamps it when the call commits its event and
// again when it waits after its MPI call, and sends it with the next event.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>

#include "vcx/channel/event_record.h"

namespace vcx::intercept {

// The trace clock in ns. Tests may skew it per rank (VCX_TEST_CLOCK_SKEW,
// see start_trace_clock) to imitate the unsynchronised clocks of nodes.
std::uint64_t trace_clock_ns();

// Turns the stamps on for this process (at attach, when the tool asks) and
// reads this rank's skew: VCX_TEST_CLOCK_SKEW="R:offset_ns:drift_ppm,..."
// adds offset_ns + drift_ppm * 1e-6 * (t - t_start) to rank R's readings.
// False and *error when the variable is malformed.
bool start_trace_clock(int world_rank, const char** error);
// Inline: every OpenSHMEM wrapper and every MPI completion asks.
extern std::atomic<bool> g_trace_clock_on;
inline bool trace_clock_on() { return g_trace_clock_on.load(std::memory_order_relaxed); }

// Which clock this rank's trace clock is: equal values read the same clock
// (one boot of one machine, one time namespace, no test skew), and a rank
// whose value equals rank 0's needs no offset measured (an offset measured
// between processes that share a clock is only noise: on busy cores a round
// trip's halves are far from equal). Valid once start_trace_clock ran.
std::uint64_t trace_clock_domain(int world_rank);

// With several threads calling (MPI_THREAD_MULTIPLE, or local accesses
// reported), a call's return is stamped only while its event is still the
// channel's last timed one; otherwise the next event carries no return.

// The offset of rank 0's trace clock to this rank's, from `rounds`
// ping-pongs with rank 0: `ping_pong(k)` sends round k and returns rank 0's
// clock from its answer. The round with the shortest round trip counts: the
// offset is the answer's time minus the middle of that round here.
template <class PingPong>
ClockSyncEvent measure_clock_offset(unsigned phase, int rounds, PingPong&& ping_pong) {
  ClockSyncEvent e{phase, static_cast<std::uint32_t>(rounds), 0, trace_clock_ns(), 0};
  std::uint64_t best = std::numeric_limits<std::uint64_t>::max();
  for (int k = 0; k < rounds; ++k) {
    const std::uint64_t sent = trace_clock_ns();
    const std::uint64_t reference = ping_pong(k);
    const std::uint64_t back = trace_clock_ns();
    if (back - sent >= best) continue;
    best = back - sent;
    e.local_ns = sent + best / 2;
    e.offset_ns = static_cast<std::int64_t>(reference - e.local_ns);
    e.rtt_ns = best;
  }
  return e;
}

// Scoped: the calls this thread makes while one lives were entered when the
// outermost one was made.
class CallEntry {
 public:
  CallEntry() noexcept;
  ~CallEntry();
  CallEntry(const CallEntry&) = delete;
  CallEntry& operator=(const CallEntry&) = delete;

 private:
  bool outermost_ = false;
};

// The enter time of the event this thread is about to send: its CallEntry's,
// else now.
std::uint64_t call_enter_ns();

}  // namespace vcx::intercept
