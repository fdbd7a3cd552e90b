#include "launcher/analysis_files.h"

#include <fstream>

#include "vcx/session_layout.h"

namespace vcx::launcher {

std::optional<nlohmann::json> read_rank_file(const std::string& dir, int rank,
                                             const std::string& analysis, const std::string& what,
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

}  // namespace vcx::launcher
