// vcx-run's answer to SIGUSR1, "where the ranks are": a numbered request in
// the session directory, which each tool answers with the last call its rank
// made and the rank's stacks; the answers are collected for a while.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace vcx::launcher {

// The line after vcx-run's answer to SIGUSR1.
inline constexpr const char* kWhereEnd = "end of where the ranks are";

// Writes request `number` and waits up to `wait` for the answers of ranks
// 0..ranks-1 (each removed once read). Returns the lines to say: a heading,
// each rank's answer (or that none came), and kWhereEnd.
std::vector<std::string> where_the_ranks_are(const std::string& session_dir, int ranks,
                                             std::uint64_t number, std::chrono::milliseconds wait);

}  // namespace vcx::launcher
