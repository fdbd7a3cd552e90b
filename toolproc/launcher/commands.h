// The commands and environments of the two jobs vcx-run starts: the tool
// job (always MPICH's mpiexec) and the application job (hydra, Slurm's srun
// or Open MPI's oshrun), with the interceptor preloaded.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "launcher/plan.h"

namespace vcx::launcher {

// Whether the run spans several nodes, and so needs tools reachable from
// other hosts: a host file naming several hosts, or a Slurm allocation of
// several nodes without one.
bool spans_nodes(const LaunchOptions& options, const Environment& env, std::string* error);

// What every tool of the run is told (its command line: to_argv()).
session::ToolArguments tool_arguments(const Plan& plan, const std::string& session_dir);
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

}  // namespace vcx::launcher
