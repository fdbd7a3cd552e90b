// The per-rank result files an analysis module writes at the end of a run
// (<dir>/rank-<R>.json), as the report builders read them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace vcx::launcher {

// Rank r's file, parsed; nullopt with one line added to `problems` when it
// is missing or unreadable. `analysis` ("race") and `what` ("findings")
// name it there.
std::optional<nlohmann::json> read_rank_file(const std::string& dir, int rank,
                                             const std::string& analysis, const std::string& what,
                                             std::vector<std::string>& problems);

}  // namespace vcx::launcher
