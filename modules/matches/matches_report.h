// The matches analysis's report: the results every tool wrote to
// <session>/matches/rank-<R>.json, posting calls named by file:line (DWARF,
// through each rank's memory map), as text for stderr (per source location:
// wildcard receives, how many could have matched another source, examples)
// and as JSON findings for --report (schema: docs/analyses.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace vcx::matches {

struct MatchesReport {
  std::string text;
  nlohmann::json findings;        // one per wildcard receive with alternatives
  std::uint64_t receives = 0;     // wildcard receives decided
  std::uint64_t with_alternatives = 0;
  std::vector<std::string> problems;  // rank files missing or unreadable
};

// `dir`: the tools' results directory; `ranks`: how many files to expect.
MatchesReport build_matches_report(const std::string& dir, int ranks);

}  // namespace vcx::matches
