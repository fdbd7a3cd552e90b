// vcx-run --explore N (docs/analyses.md, "Exploring"): runs the program once
// under the matches analysis, then replays it up to N times, each replay
// forcing one alternative match of a wildcard receive (--force-match),
// depth first, and reports every replay whose outcome differs from the first
// run's — exit status, a crash or MPI_Abort, a hang, or different output —
// with the --force-match line that reproduces it.
#pragma once

#include <string>
#include <vector>

#include "launcher/options.h"
#include "launcher/paths.h"

namespace vcx::launcher {

// Set in the environment of the runs --explore makes: they run normally.
inline constexpr const char* kExploreChildVariable = "VCX_EXPLORE_CHILD";
// Set for each of those runs: the directory where the matches analysis
// records every wildcard receive (matches.record), for the next replays' pins.
inline constexpr const char* kExploreRecordVariable = "VCX_EXPLORE_RECORD";
// Seconds after which a replay counts as hung (default: ten times the first
// run, at least 60).
inline constexpr const char* kExploreTimeoutVariable = "VCX_EXPLORE_TIMEOUT";

// `args`: vcx-run's own arguments, as given (--explore included).
int explore(const std::vector<std::string>& args, const LaunchOptions& options,
            const Environment& env);

}  // namespace vcx::launcher
