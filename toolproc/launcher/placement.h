// Where the two jobs' processes run on each node: the cores of application
// ranks and of tool processes, from a placement file (config/*.ini), and the
// launcher options that bind them there.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "launcher/options.h"

namespace vcx::launcher {

struct Placement {
  std::string source;            // "none", or the file it came from
  std::vector<int> app_cores;    // empty: not bound
  std::vector<int> tool_cores;   // empty: not bound
  // Nothing bound, and a node holds more ranks and tools than it has cores:
  // the tools run on the ranks' cores all the same.
  bool oversubscribed = false;
};

struct PlacementResult {
  Placement placement;
  std::string error;  // one line, empty on success
  bool ok() const { return error.empty(); }
};

// The CPUs this process may run on (its affinity), ascending.
std::vector<int> available_cpus();

// "all", "first-half", "second-half" of `available`, or a list of cores and
// ranges ("0-3,8"); nullopt and `error` when malformed or empty.
std::optional<std::vector<int>> parse_cores(const std::string& text,
                                            const std::vector<int>& available,
                                            std::string* error);

// `spec` is "none", "split", "shared" (read from `config_dir`) or a file.
PlacementResult resolve_placement(const std::string& spec, const std::string& config_dir,
                                  const std::vector<int>& available);

// True when some tool process may run on a core that an application rank is
// bound to, or nothing is bound on a node with fewer cores than ranks and
// tools: then neither side should poll while it waits for the other.
bool tools_share_app_cores(const Placement& placement);

// Whether `ranks_per_node` ranks and as many tools outnumber `cpus` cores
// (0 ranks per node: not known, false).
bool oversubscribed(int ranks_per_node, std::size_t cpus);

// The options binding `nprocs` ranks to `cores` (local rank i to the i-th,
// wrapping around) for the given launcher; empty when `cores` is. Open MPI
// binds local rank i to the i-th lowest core and only one rank per core:
// with fewer cores than ranks its options bind nothing ("--bind-to none").
std::vector<std::string> binding_args(LauncherKind launcher, const std::vector<int>& cores,
                                      int nprocs);

}  // namespace vcx::launcher
