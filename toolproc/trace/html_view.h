// The trace as one self-contained HTML page: a space-time diagram drawn on a
// canvas by the page's own script (toolproc/trace/view/), with the trace's
// data embedded as JSON. Opens without network access.
#pragma once

#include <cstdint>
#include <string>

#include "trace_set.h"

namespace vcx::trace {

struct ViewSummary {
  std::uint64_t calls = 0;
  std::uint64_t messages = 0;     // arrows: sends paired with their receives
  std::uint64_t collectives = 0;  // instances joined across their members
};

// Writes the page for `trace` to the file `out`. Call sites are named from
// the memory maps in `maps_dir` (the trace directory). The times are the
// trace's as they are: correct them first (TraceSet::correct_times) to draw
// them respecting happened-before; `violations_fixed` then says how many
// the page reports. Throws TraceError.
ViewSummary write_view(const TraceSet& trace, const std::string& maps_dir, const std::string& out,
                       const std::string& title, bool corrected, std::uint64_t violations_fixed);

}  // namespace vcx::trace
