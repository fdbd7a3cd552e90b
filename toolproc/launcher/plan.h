// A run as vcx-run plans it: the options, where vcx is installed, the
// placement, the launcher and the program's model, all checked before
// anything starts.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "launcher/hosts.h"
#include "launcher/options.h"
#include "launcher/paths.h"
#include "launcher/placement.h"
#include "launcher/program_model.h"

namespace vcx::launcher {

struct Timeouts {
  std::chrono::milliseconds start{60'000};            // tool job until ready
  std::chrono::milliseconds stop{60'000};             // tool job after the application ended
  std::chrono::milliseconds kill_grace{5'000};        // SIGTERM until SIGKILL
  std::chrono::milliseconds interrupt_grace{10'000};  // forwarded signal until SIGKILL
};

// Reads VCX_START_TIMEOUT and VCX_STOP_TIMEOUT (seconds); the error line
// when one is not a number.
std::optional<std::string> read_timeouts(const Environment& env, Timeouts* out);

// Everything a run needs, checked.
struct Plan {
  LaunchOptions options;
  InstallPaths paths;
  std::optional<std::string> trace_dir;  // absolute, exists
  // --explore's runs: where the matches analysis records every wildcard
  // receive (kExploreRecordVariable).
  std::optional<std::string> matches_record;
  std::string program;                   // as handed to mpiexec
  std::vector<std::string> more_programs;  // MPMD: each further program, as handed to mpiexec
  std::string session_parent;
  Timeouts timeouts;
  Placement placement;
  LauncherKind launcher = LauncherKind::Hydra;
  std::string launcher_program;  // srun for Slurm, oshrun for Open MPI; the mpiexec otherwise
  ProgramModel model = ProgramModel::Mpi;  // which interceptor and translator
  bool as_root = false;                    // oshrun must be told it may run as root
  bool spans_nodes = false;      // tools then listen on every address
  bool progress = false;         // show a progress line (stderr is a terminal)
};

}  // namespace vcx::launcher
