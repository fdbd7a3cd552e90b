#include "launcher/commands.h"

#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "launcher/console.h"
#include "vcx/atomic_file.h"
#include "vcx/session_layout.h"

namespace vcx::launcher {
namespace {

// Hydra's own placement options, the same for both jobs so that tool rank i
// lands on the node of application rank i.
void add_hydra_layout(const Plan& plan, std::vector<std::string>& cmd) {
  if (plan.options.hostfile) {
    cmd.push_back("-f");
    cmd.push_back(*plan.options.hostfile);
  }
  if (plan.options.hosts) {
    cmd.push_back("-hosts");
    cmd.push_back(*plan.options.hosts);
  }
  if (plan.options.ppn > 0) {
    cmd.push_back("-ppn");
    cmd.push_back(std::to_string(plan.options.ppn));
  }
}

void append(std::vector<std::string>& cmd, const std::vector<std::string>& more) {
  cmd.insert(cmd.end(), more.begin(), more.end());
}

}  // namespace

session::ToolArguments tool_arguments(const Plan& plan, const std::string& session_dir) {
  session::ToolArguments a;
  a.session_dir = session_dir;
  a.plugin_dir = plan.paths.plugin_dir;
  a.translators = session::comma_list(translators_of(plan.model));
  a.modules = module_list(plan.options);
  Options& options = a.plugin_options;
  if (plan.trace_dir) options.set("trace.dir", *plan.trace_dir);
  for (const std::string& analysis : plan.options.analyses)
    options.set(analysis + ".dir", session_dir + "/" + analysis);
  // In the session directory, which every node sees; vcx-run copies it out.
  if (plan.matches_record && runs_analysis(plan.options, "matches"))
    options.set("matches.record", session::file(session_dir, session::kMatchesRecord));
  if (const auto& mib = plan.options.clock_diff_mib)
    options.set("vclock.diff-bytes", std::to_string(*mib << 20));
  // The user's own last: they win over the settings above.
  for (const std::string& kv : plan.options.plugin_options) {
    const auto eq = kv.find('=');
    options.set(kv.substr(0, eq), eq == std::string::npos ? "" : kv.substr(eq + 1));
  }
  a.stall = plan.options.stall;
  if (const auto& n = plan.options.tool_backlog) a.max_backlog = *n;
  a.shmem_flags = plan.options.shmem_flags;
  a.shared_core = tools_share_app_cores(plan.placement);
  a.app_yield = plan.options.app_yield;
  if (const auto& ns = plan.options.tool_spin_ns) a.spin_ns = *ns;
  if (const auto& ns = plan.options.app_spin_ns) a.app_spin_ns = static_cast<std::uint32_t>(*ns);
  a.progress = plan.progress;
  a.channel = plan.options.channel;
  a.transport = plan.options.transport;
  // Several nodes: the start-up exchange goes over MPI, not through files
  // a shared file system may show late.
  if (plan.spans_nodes) {
    a.bind_host = "0.0.0.0";
    a.mpi_start = true;
  }
  return a;
}

std::vector<std::string> tool_command(const Plan& plan, const std::string& session_dir) {
  // The tool job is always an MPICH job, whoever starts the application.
  std::vector<std::string> cmd{plan.paths.mpiexec};
  add_hydra_layout(plan, cmd);
  cmd.push_back("-n");
  cmd.push_back(std::to_string(plan.options.nprocs));
  append(cmd, binding_args(LauncherKind::Hydra, plan.placement.tool_cores, plan.options.nprocs));
  cmd.push_back(plan.paths.toolproc);
  append(cmd, tool_arguments(plan, session_dir).to_argv());
  return cmd;
}

namespace {

// Each starter's part of the application job's command, up to the program.
// LD_PRELOAD goes to the ranks only: the starters and their daemons are not
// MPI programs and must not load the interceptor and MPI with it.

// MPICH's hydra: -genv gives the ranks a variable.
std::vector<std::string> hydra_start(const Plan& plan, const std::string& preload) {
  std::vector<std::string> cmd{plan.paths.mpiexec};
  add_hydra_layout(plan, cmd);
  append(cmd, plan.options.launcher_args);
  for (const auto& [name, value] : plan.options.app_env) append(cmd, {"-genv", name, value});
  if (plan.options.prepend_rank) cmd.push_back("-prepend-rank");
  if (plan.options.bind_to) append(cmd, {"-bind-to", *plan.options.bind_to});
  append(cmd, {"-genv", "LD_PRELOAD", preload, "-n",
               std::to_string(plan.options.more_programs.empty() ? plan.options.nprocs
                                                                 : plan.options.first_nprocs)});
  append(cmd, binding_args(LauncherKind::Hydra, plan.placement.app_cores, plan.options.nprocs));
  return cmd;
}

// Slurm's srun: --export gives the tasks LD_PRELOAD, srun itself does not get it.
std::vector<std::string> slurm_start(const Plan& plan, const std::string& preload) {
  std::vector<std::string> cmd{plan.launcher_program, "-n", std::to_string(plan.options.nprocs)};
  append(cmd, plan.options.launcher_args);
  if (plan.options.prepend_rank) cmd.push_back("--label");
  if (plan.options.bind_to) cmd.push_back("--cpu-bind=" + *plan.options.bind_to);
  if (plan.options.ppn > 0) cmd.push_back("--ntasks-per-node=" + std::to_string(plan.options.ppn));
  append(cmd, binding_args(LauncherKind::Slurm, plan.placement.app_cores, plan.options.nprocs));
  std::string exports = "--export=ALL";
  for (const auto& [name, value] : plan.options.app_env) exports += "," + name + "=" + value;
  cmd.push_back(exports + ",LD_PRELOAD=" + preload);
  return cmd;
}

// Open MPI's oshrun (OpenSHMEM and MPI+OpenSHMEM programs).
std::vector<std::string> openmpi_start(const Plan& plan, const std::string& preload) {
  std::vector<std::string> cmd{plan.launcher_program};
  // oshrun refuses to start as root unless told; vcx-run runs as whoever
  // calls it, in containers often root.
  if (plan.as_root) cmd.push_back("--allow-run-as-root");
  // Like hydra, start as many ranks as asked whatever the core count.
  cmd.push_back("--oversubscribe");
  // Open MPI 4.1's rdma one-sided component crashes shmem_finalize in its
  // memory hooks; UCX's does not.
  append(cmd, {"--mca", "osc", "ucx"});
  std::string err;
  append(cmd, openmpi_hosts(plan.options, &err));
  if (plan.options.ppn > 0) append(cmd, {"--npernode", std::to_string(plan.options.ppn)});
  append(cmd, plan.options.launcher_args);
  for (const auto& [name, value] : plan.options.app_env) append(cmd, {"-x", name + "=" + value});
  if (plan.options.prepend_rank) cmd.push_back("--tag-output");
  // -x NAME exports the variable's value to the ranks (only those on this
  // node inherit the environment); the token stays off the command line.
  if (!plan.options.forced_matches.empty()) append(cmd, {"-x", "VCX_FORCE_MATCH"});
  append(cmd, {"-x", "VCX_SESSION_DIR", "-x", "VCX_SESSION_TOKEN", "-x", "VCX_ON_TOOL_FAILURE",
               "-x", "LD_PRELOAD=" + preload, "-n", std::to_string(plan.options.nprocs)});
  const int per_node = plan.options.ppn > 0 ? plan.options.ppn : plan.options.nprocs;
  std::vector<std::string> binding =
      binding_args(LauncherKind::OpenMpi, plan.placement.app_cores, per_node);
  if (binding.empty()) binding = {"--bind-to", plan.options.bind_to.value_or("none")};
  append(cmd, binding);
  return cmd;
}

}  // namespace

std::vector<std::string> app_command(const Plan& plan, const std::string& preload) {
  std::vector<std::string> cmd;
  switch (plan.launcher) {
    case LauncherKind::Hydra: cmd = hydra_start(plan, preload); break;
    case LauncherKind::Slurm: cmd = slurm_start(plan, preload); break;
    case LauncherKind::OpenMpi: cmd = openmpi_start(plan, preload); break;
  }
  cmd.push_back(plan.program);
  cmd.insert(cmd.end(), plan.options.program_args.begin(), plan.options.program_args.end());
  // MPMD (hydra only): each further program with its ranks and variables.
  for (std::size_t i = 0; i < plan.options.more_programs.size(); ++i) {
    const AppSegment& seg = plan.options.more_programs[i];
    append(cmd, {":", "-n", std::to_string(seg.nprocs)});
    for (const auto& [name, value] : seg.env) append(cmd, {"-env", name, value});
    cmd.push_back(i < plan.more_programs.size() ? plan.more_programs[i] : seg.program);
    cmd.insert(cmd.end(), seg.program_args.begin(), seg.program_args.end());
  }
  return cmd;
}

const char* translators_of(ProgramModel model) {
  switch (model) {
    case ProgramModel::Shmem:
      return "shmem";
    case ProgramModel::Hybrid:
      return "mpi,shmem";
    default:
      return "mpi";
  }
}

const std::string& interceptor_of(const Plan& plan) {
  switch (plan.model) {
    case ProgramModel::Shmem:
      return plan.paths.shmem_interceptor;
    case ProgramModel::Hybrid:
      return plan.paths.hybrid_interceptor;
    default:
      return plan.paths.interceptor;
  }
}

bool spans_nodes(const LaunchOptions& options, const Environment& env, std::string* error) {
  if (options.hostfile || options.hosts) {
    const HostList hosts = hosts_of(options);
    if (!hosts.error.empty()) {
      *error = hosts.error;
      return false;
    }
    return hosts.hosts.size() > 1;
  }
  for (const char* var : {"SLURM_JOB_NUM_NODES", "SLURM_NNODES"}) {
    if (auto v = env.get_nonempty(var)) return std::atoi(v->c_str()) > 1;
  }
  return false;
}

std::string preload_value(const std::string& interceptor,
                          const std::optional<std::string>& existing) {
  if (!existing || existing->empty()) return interceptor;
  return interceptor + ":" + *existing;
}

Environment tool_environment(const Environment& base, const std::string& token) {
  Environment env = base;
  env.unset("VCX_SESSION_DIR");  // the tools are not an application to attach
  env.set("VCX_SESSION_TOKEN", token);
  return env;
}

// The longest --force-match list passed in the environment itself.
constexpr std::size_t kForceMatchInline = 4096;

Environment app_environment(const Environment& base, const std::string& session_dir,
                            const std::string& token, const LaunchOptions& options) {
  Environment env = base;
  // The interceptor reads what to do when its tool fails from here.
  env.set("VCX_ON_TOOL_FAILURE",
          std::string(session::name_of(options.on_tool_failure, kOnToolFailureNames)));
  env.set("VCX_SESSION_DIR", session_dir);
  env.set("VCX_SESSION_TOKEN", token);
  // The interceptor of each rank applies the matches forced on it.
  std::string forced;
  for (const auto& f : options.forced_matches)
    forced += (forced.empty() ? "" : ",") + std::to_string(f.rank) + ":" +
              std::to_string(f.index) + "=" + std::to_string(f.source);
  // A long list (a replay pinning many receives) goes through a file: one
  // environment string may not exceed 128 KiB.
  if (forced.empty()) {
    env.unset("VCX_FORCE_MATCH");
  } else if (forced.size() <= kForceMatchInline) {
    env.set("VCX_FORCE_MATCH", forced);
  } else {
    const std::string path = session::file(session_dir, session::kForceMatch);
    std::ofstream(path) << forced << '\n';
    env.set("VCX_FORCE_MATCH", "@" + path);
  }
  return env;
}

}  // namespace vcx::launcher
