// The race analysis's report: the findings every tool wrote to
// <session>/race/rank-<R>.json, merged per pair of source locations, code
// addresses named by file:line (DWARF, through each rank's memory map), as
// text for stderr and as JSON for --report (schema: docs/analyses.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace vcx::race {

struct RaceReport {
  std::string text;          // the human report, one block per race and a last line
  nlohmann::json findings;   // array of findings, schema version 1
  std::size_t races = 0;     // distinct races (pairs of source locations)
  std::vector<std::string> problems;  // rank files missing or unreadable
};

// `dir`: the tools' findings directory; `ranks`: how many files to expect.
RaceReport build_race_report(const std::string& dir, int ranks);

}  // namespace vcx::race
