// Physical times that respect the run's happened-before order.
//
// Each clocked call of a trace is two events on its rank's time line: its
// enter and its return (leave). A call's clock names, for every other rank,
// the last call of that rank it happened after; that call's enter must then
// come before this call's return (the clock condition: a message is sent
// before it is received). Clocks of different nodes have offsets and drift,
// so a trace may break it. The correction is the extended controlled logical
// clock (forward amortisation, backward amortisation), driven by the vector
// clocks instead of re-matched messages: the same rule covers point-to-point
// messages (whatever the receive's source), collectives of every shape,
// synchronous sends, RMA epochs, locks and OpenSHMEM synchronisation.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vcx/exchange.h"
#include "vcx/types.h"

namespace vcx::trace {

struct CorrectionOptions {
  // A return comes at least this long after the enter of a call it happened
  // after (the minimum message latency).
  std::int64_t min_latency_ns = 1;
  // Consecutive events of a rank stay at least this far apart.
  std::int64_t min_gap_ns = 1;
  // After a forward jump, local intervals shrink to no less than gamma of
  // their length until the corrected clock meets the measured one again.
  double gamma = 0.99;
  // A jump of D is spread over the D / max_stretch before it, so intervals
  // there grow by at most this fraction (more only where an earlier send
  // must stay before its receive) ...
  double max_stretch = 0.01;
  // ... and over at most this many events.
  std::size_t max_amortised_events = 100000;
  // First move every rank's times by its clock's measured offset to rank
  // 0's (Timelines::align), linear between the start and the end.
  bool use_offsets = true;
};

// The largest drift between two clocks taken as measured (ppm). Quartz
// oscillators stay within some tens of ppm; more says a measurement is off.
inline constexpr double kMaxDriftPpm = 500;

struct RankCorrection {
  // The rank's clock against rank 0's (align()): offsets at the start and
  // the end, the drift between them; none without measurements.
  bool aligned = false;
  bool shared_clock = false;  // the rank read rank 0's clock: nothing to move
  std::int64_t offset_start_ns = 0, offset_end_ns = 0;
  double drift_ppm = 0;
  // Nonzero: the drift the two measurements gave, beyond kMaxDriftPpm, and
  // refused; the offset is then the better measurement's, constant.
  double drift_refused_ppm = 0;
  std::uint64_t violations_measured = 0;  // before align(), as recorded
  std::uint64_t violations = 0;  // returns before the enter of a call they happened after
  std::uint64_t moved = 0;       // events whose time changed
  std::int64_t max_shift_ns = 0;  // largest move of one event (corrections only add)
};

struct CorrectionReport {
  std::vector<RankCorrection> ranks;
  std::uint64_t violations_measured = 0;  // in the times as recorded
  std::uint64_t violations = 0;       // before the correction (after align()), all ranks
  std::uint64_t violations_after = 0;  // after it (0 unless the trace is inconsistent)
  std::uint64_t unresolved = 0;  // clock entries naming calls the trace does not hold
};

// The time lines of a whole trace: per rank, its calls' enter and return
// times and what their clocks learned.
class Timelines {
 public:
  explicit Timelines(std::uint32_t world_size);

  // The next call of `rank` in program order. A return time of 0 (not known)
  // counts as the enter time. `clock` has world_size entries.
  void add_call(std::uint32_t rank, std::uint64_t enter_ns, std::uint64_t leave_ns,
                std::span<const ClockValue> clock);

  std::uint32_t world_size() const { return static_cast<std::uint32_t>(ranks_.size()); }
  std::size_t calls(std::uint32_t rank) const { return ranks_[rank].own.size(); }
  std::int64_t enter(std::uint32_t rank, std::size_t call) const {
    return ranks_[rank].t[2 * call];
  }
  std::int64_t leave(std::uint32_t rank, std::size_t call) const {
    return ranks_[rank].t[2 * call + 1];
  }

  // The call (of another rank) whose enter must precede the return of call
  // `call` of `rank`: every rank's latest call its clock learned of anew.
  struct Source {
    std::uint32_t rank;
    std::uint32_t call;
  };
  std::span<const Source> sources(std::uint32_t rank, std::size_t call) const;

  // Violations of the clock condition in the current times.
  std::uint64_t count_violations(std::int64_t min_latency_ns) const;
  // Per returning rank.
  std::vector<std::uint64_t> violations_per_rank(std::int64_t min_latency_ns) const;

  // Moves every rank's times onto rank 0's clock: by the offset measured at
  // the start, and, with one at the end too, by the offset interpolated
  // between the two (a constant drift). `syncs[r]`: rank r's measurements
  // (none: the rank stays as it is). Call once, after every call was added.
  void align(std::span<const std::vector<ClockSync>> syncs);

  // Moves events forward (never back) so that the clock condition holds,
  // keeping local intervals as described at CorrectionOptions.
  CorrectionReport correct(const CorrectionOptions& options);

 private:
  struct RankLine {
    std::vector<std::int64_t> t;         // 2 per call: enter, return
    std::vector<ClockValue> own;         // the rank's own clock entry per call
    std::vector<ClockValue> last_clock;  // of the last call added
    std::vector<std::uint32_t> first;    // per call + 1: its sources in `learned`
    struct Learned {
      std::uint32_t rank;
      ClockValue value;
    };
    std::vector<Learned> learned;
    // `learned`, resolved to calls when first asked for (link()).
    mutable std::vector<Source> sources;
    mutable std::vector<std::uint32_t> source_first;
  };
  void link() const;

  std::vector<RankLine> ranks_;
  void align_rank(std::uint32_t rank, std::span<const ClockSync> syncs);

  std::vector<RankCorrection> alignment_;  // per rank, what align() did
  bool aligned_ = false;
  mutable bool linked_ = false;
  mutable std::uint64_t unresolved_ = 0;
};

}  // namespace vcx::trace
