// The session directory of one run: the files vcx-run, the tool processes
// and the interceptors leave there for each other, named in one place. Who
// writes each file and who reads it is said beside its name; files that
// others read while they may be written go through write_file_atomically.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace vcx::session {

// Tool rank 0, once every tool listens; vcx-run starts waiting ranks then.
inline constexpr std::string_view kReady = "ready";
// Tool rank 0: the tools' peer endpoints (for vcx-run's -v output).
inline constexpr std::string_view kPeers = "peers";
// Tool rank 0, when every tool started ("ok") or one failed (its reason).
inline constexpr std::string_view kToolsStarted = "tools-started";
// vcx-run, when the application job ended: tools stop waiting for ranks
// that never attached.
inline constexpr std::string_view kAppExited = "app-exited";
// An interceptor or a tool: an application rank ended without finishing,
// so the others' interceptors run on when their tools stop.
inline constexpr std::string_view kAppFailed = "app-failed";
// vcx-run, before it ends a run an analysis found stuck (a deadlock): the
// analysis's name. The tools then stop without calling the ranks' end an error.
inline constexpr std::string_view kRunEnded = "run-ended";
// vcx-run (SIGUSR1): asks every tool where its rank is; holds a number.
inline constexpr std::string_view kWhereRequest = "where-request";
// vcx-run: a long list of forced matches for the interceptors.
inline constexpr std::string_view kForceMatch = "force-match";
// The tools (matches analysis, --explore's runs): every wildcard receive, a
// file per rank; vcx-run copies the directory out.
inline constexpr std::string_view kMatchesRecord = "matches-record";

// Per rank: "<prefix><rank><suffix>".
inline constexpr std::string_view kToolStartPrefix = "tool-";      // + ".start"
inline constexpr std::string_view kToolSocketPrefix = "tool-";     // + ".sock" / ".tcp"
inline constexpr std::string_view kPeerSocketPrefix = "peer-";     // + ".sock"
inline constexpr std::string_view kProgressPrefix = "progress-";   // a tool, for vcx-run
inline constexpr std::string_view kStatsPrefix = "stats-";         // + ".json", a tool
inline constexpr std::string_view kStatsSuffix = ".json";
inline constexpr std::string_view kWherePrefix = "where-";         // + "<n>.txt", a tool
// An interceptor, as its rank ends without MPI_Finalize/shmem_finalize.
// A C string: the interceptor formats it in a signal handler.
inline constexpr const char* kEndingPrefix = "ending-";

inline std::string file(std::string_view dir, std::string_view name) {
  std::string out(dir);
  out += '/';
  out += name;
  return out;
}

inline std::string per_rank(std::string_view dir, std::string_view prefix, std::uint32_t rank,
                            std::string_view suffix = {}) {
  std::string out = file(dir, prefix);
  out += std::to_string(rank);
  out += suffix;
  return out;
}

inline std::string tool_start(std::string_view dir, std::uint32_t rank) {
  return per_rank(dir, kToolStartPrefix, rank, ".start");
}
inline std::string tool_socket(std::string_view dir, std::uint32_t rank) {
  return per_rank(dir, kToolSocketPrefix, rank, ".sock");
}
inline std::string tool_endpoint(std::string_view dir, std::uint32_t rank) {
  return per_rank(dir, kToolSocketPrefix, rank, ".tcp");
}
inline std::string peer_socket(std::string_view dir, std::uint32_t rank) {
  return per_rank(dir, kPeerSocketPrefix, rank, ".sock");
}
inline std::string progress(std::string_view dir, std::uint32_t rank) {
  return per_rank(dir, kProgressPrefix, rank);
}
inline std::string stats(std::string_view dir, std::uint32_t rank) {
  return per_rank(dir, kStatsPrefix, rank, kStatsSuffix);
}
inline std::string ending(std::string_view dir, std::uint32_t rank) {
  return per_rank(dir, kEndingPrefix, rank);
}
// An analysis's results for one rank, in the analysis's directory.
inline constexpr std::string_view kAnalysisRankPrefix = "rank-";  // + ".json"
inline std::string analysis_result(std::string_view analysis_dir, std::uint32_t rank) {
  return per_rank(analysis_dir, kAnalysisRankPrefix, rank, ".json");
}
// The answer of tool `rank` to where-request number `n`.
inline std::string where_answer(std::string_view dir, std::uint32_t rank, std::uint64_t n) {
  return per_rank(dir, kWherePrefix, rank, "-" + std::to_string(n) + ".txt");
}

}  // namespace vcx::session
