// The per-rank result files an analysis module writes at the end of a run
// (<dir>/rank-<R>.json, session::analysis_result), as its report builder
// reads them (vcx/analysis_report.h).
#pragma once

#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vcx/session_layout.h"

namespace vcx {

// Rank r's file, parsed; nullopt with one line added to `problems` when it
// is missing or unreadable. `analysis` ("race") and `what` ("findings")
// name it there.
inline std::optional<nlohmann::json> read_rank_file(const std::string& dir, int rank,
                                                    const std::string& analysis,
                                                    const std::string& what,
                                                    std::vector<std::string>& problems) {
  const std::string path = session::analysis_result(dir, static_cast<std::uint32_t>(rank));
  std::ifstream in(path);
  if (!in) {
    problems.push_back("the " + analysis + " analysis of rank " + std::to_string(rank) +
                       " left no " + what + " (" + path + ")");
    return std::nullopt;
  }
  try {
    return nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    problems.push_back("the " + analysis + " " + what + " of rank " + std::to_string(rank) +
                       " are unreadable: " + e.what());
    return std::nullopt;
  }
}

}  // namespace vcx
