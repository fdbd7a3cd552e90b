// The tool ranks' statistics (DIR/stats-<rank>.json, one flat JSON object
// each) and the summary vcx-run prints from them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "session/tool_stats.h"

namespace vcx::launcher {

// One tool's statistics file, as the tool wrote it.
using RankStats = session::ToolStats;

// How an application rank ended without MPI_Finalize, as its interceptor
// wrote it to DIR/ending-<rank>: "abort <code>", "exit <status>",
// "signal <number>", or "tool-failed <status> [call]" (the interceptor
// aborted the job because its tool process failed, in `call`).
struct Ending {
  std::string kind;  // abort | exit | signal | tool-failed
  int code = 0;
  std::string call;  // tool-failed: the call the rank was in, if known
};

struct StatsReport {
  std::vector<RankStats> ranks;       // sorted by rank
  std::map<int, Ending> endings;      // by rank
  std::vector<std::string> problems;  // files that could not be read, one line each
  // How long the tool job ran on after the application job had ended (set
  // by vcx-run, which saw both end).
  std::optional<std::uint64_t> tools_after_app_ns;
};

// Reads every stats-<rank>.json and ending-<rank> in `dir`; a stats file
// without "rank" takes the number from its name.
StatsReport read_stats(const std::string& dir);

// "abort 5" → {abort, 5}; "tool-failed 70 MPI_Recv" → {tool-failed, 70,
// MPI_Recv}; nullopt for anything else.
std::optional<Ending> parse_ending(std::string_view text);

// "1.2 ms", "3.40 s"
std::string format_duration_ns(std::uint64_t ns);

// The calls of the program's model that end it cleanly or on purpose, as
// the summary names them.
struct EndingCalls {
  const char* finalize;
  const char* abort;
  const char* abort_code;  // what the abort call's argument is called
  const char* starter;     // the command that kills the other ranks when one fails
};
inline constexpr EndingCalls kMpiEndingCalls{"MPI_Finalize", "MPI_Abort", "error code",
                                             "mpiexec"};
inline constexpr EndingCalls kShmemEndingCalls{"shmem_finalize", "shmem_global_exit", "status",
                                               "oshrun"};
inline constexpr EndingCalls kHybridEndingCalls{"both MPI_Finalize and shmem_finalize",
                                                "MPI_Abort or shmem_global_exit", "code", "oshrun"};

// The summary lines (without the "vcx: " prefix): totals, then how ranks
// ended that ended without MPI_Finalize (the cause where the interceptor
// could tell it), ranks that never attached, tool ranks that left no
// statistics, and last the stall time per rank and the tools' memory.
std::vector<std::string> summary_lines(const StatsReport& report, int nprocs,
                                       const std::optional<std::string>& trace_dir,
                                       const EndingCalls& calls = kMpiEndingCalls);

// True when some rank's application crashed, ended without MPI_Finalize or
// never attached.
bool has_rank_trouble(const StatsReport& report);

}  // namespace vcx::launcher
