// vcx-run's flow: check everything, start the tool job, wait until it is
// ready, start the application job with the interceptor, supervise both, and
// report.
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

// The line after vcx-run's answer to SIGUSR1 ("where the ranks are").
inline constexpr const char* kWhereEnd = "end of where the ranks are";

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

// Whether the run spans several nodes, and so needs tools reachable from
// other hosts: a host file naming several hosts, or a Slurm allocation of
// several nodes without one.
bool spans_nodes(const LaunchOptions& options, const Environment& env, std::string* error);

std::vector<std::string> tool_command(const Plan& plan, const std::string& session_dir);
std::vector<std::string> app_command(const Plan& plan, const std::string& preload);
// The interceptor of the program's model.
const std::string& interceptor_of(const Plan& plan);
// The translators the tools load for the program's model ("mpi,shmem" for
// an MPI+OpenSHMEM program).
const char* translators_of(ProgramModel model);
// The interceptor in front of whatever LD_PRELOAD already holds.
std::string preload_value(const std::string& interceptor,
                          const std::optional<std::string>& existing);
Environment tool_environment(const Environment& base, const std::string& token);
Environment app_environment(const Environment& base, const std::string& session_dir,
                            const std::string& token, const LaunchOptions& options = {});

// Runs both jobs; returns vcx-run's exit code. Throws std::runtime_error
// when the session cannot be set up.
int run(const Plan& plan, const Environment& env);

// The whole program: arguments in, exit code out.
int launcher_main(int argc, char** argv, char** envp);

}  // namespace vcx::launcher
