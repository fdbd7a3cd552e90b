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
  std::uint64_t wildcard = 0;     // of them, taken by receives posted for any source
  std::uint64_t collectives = 0;  // instances joined across their members
  std::uint64_t alternatives = 0;  // receives the report says could have matched another
  std::uint64_t races = 0;         // data races the report lists
  std::uint64_t deadlocks = 0;     // deadlocks the report lists (drawn over the last calls)
};

struct ViewInput {
  std::string maps_dir;  // the trace directory: call sites are named from its maps
  std::string title;
  // The times are the trace's as they are: correct them first
  // (TraceSet::correct_times) to draw them respecting happened-before;
  // `violations_fixed` then says how many the page reports.
  bool corrected = false;
  std::uint64_t violations_fixed = 0;
  // The text of an analyses' report of the same run (vcx-run --report), or
  // empty: wildcard receives with alternative matches are marked on their
  // calls, data races listed.
  std::string report;
};

// Writes the page for `trace` to the file `out`. Throws TraceError.
ViewSummary write_view(const TraceSet& trace, const std::string& out, const ViewInput& in);

}  // namespace vcx::trace
