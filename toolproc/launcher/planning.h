// Planning a run: everything vcx-run checks before anything starts, and the
// Plan (plan.h) it makes of it: the program and its programming model, who
// starts it (hydra, Slurm, Open MPI's oshrun), the installation, the modules
// and plugin options asked for, the timeouts, the placement.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "launcher/plan.h"

namespace vcx::launcher {

struct Planned {
  std::optional<Plan> plan;        // none: the run cannot be made
  int exit_code = 0;               // without a plan: vcx-run's exit code
  std::string error;               // without a plan: what to tell the user
  std::vector<std::string> notes;  // to tell the user even so
};

// `bindir`: where vcx-run is installed (empty: unknown). Makes nothing and
// starts nothing; the trace and session directories are the caller's.
Planned make_plan(const LaunchOptions& options, const Environment& env, const std::string& bindir);

}  // namespace vcx::launcher
