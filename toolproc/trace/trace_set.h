// A whole trace in memory: every rank's calls, the groups they name, and
// their time lines for the clock condition. For the exports that need the
// trace at once (OTF2, the view); `vcx-trace export` streams instead.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "clock_condition.h"
#include "vcx/trace_format.h"

namespace vcx::trace {

// A call that completes requests (MPI_Wait..., MPI_Test...): one that
// completes a non-blocking collective names the collective's group, but the
// collective's instance is its initiation's.
bool completes_requests(const std::string& call);

// The trace cannot be read (missing, not a trace, corrupt, inconsistent).
struct TraceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct RankTrace {
  Rank rank;
  std::string path;
  std::vector<Record> calls;
  std::vector<ClockSync> syncs;  // its clock against rank 0's
  bool truncated = false;  // the file ends in a partial frame (a crash)
};

class TraceSet {
 public:
  // Reads every rank file of `dir`; throws TraceError.
  static TraceSet load(const std::string& dir);

  std::uint32_t world_size = 0;
  std::vector<RankTrace> ranks;  // the rank files present, by rank
  std::unordered_map<std::uint64_t, std::vector<Rank>> groups;
  bool timed = false;  // the calls have physical times

  // The calls as time lines (rank files that are missing count as empty),
  // moved onto rank 0's clock by the measured offsets when `aligned`.
  Timelines timelines(bool aligned) const;
  // The ranks' call times after the clock-condition correction; the report
  // of the correction in *report when given.
  void correct_times(const CorrectionOptions& o, CorrectionReport* report = nullptr);
};

}  // namespace vcx::trace
