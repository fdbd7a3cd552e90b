#include "launcher/planning.h"

#include <unistd.h>

#include <cmath>
#include <string>

#include "launcher/analyses.h"
#include "launcher/commands.h"
#include "launcher/console.h"
#include "launcher/explore.h"
#include "launcher/process.h"
#include "vcx/chaos_settings.h"
#include "vcx/plugin_loader.h"

namespace vcx::launcher {

using std::chrono::milliseconds;

std::optional<std::string> read_timeouts(const Environment& env, Timeouts* out) {
  const std::pair<const char*, milliseconds*> vars[] = {{"VCX_START_TIMEOUT", &out->start},
                                                        {"VCX_STOP_TIMEOUT", &out->stop}};
  for (const auto& [name, field] : vars) {
    const auto text = env.get_nonempty(name);
    if (!text) continue;
    const auto secs = parse_seconds(*text);
    if (!secs) return std::string(name) + " must be a number of seconds, not '" + *text + "'";
    *field = milliseconds(static_cast<long long>(std::llround(*secs * 1000.0)));
  }
  return std::nullopt;
}

namespace {

// The tools load modules by name from the plugin directory; a name without
// a file there is a usage error, said once here rather than by every tool.
std::optional<std::string> check_modules(const LaunchOptions& options,
                                         const std::string& plugin_dir) {
  for (const auto& name : module_list(options)) {
    const std::string file = plugin_dir + "/" + plugin_file_name(PluginKind::Module, name);
    if (::access(file.c_str(), R_OK) == 0) continue;
    const std::vector<std::string> available = available_plugins(plugin_dir, PluginKind::Module);
    return "--modules: there is no module '" + name + "' (no " + file +
           "); available: " + (available.empty() ? "none" : join(available, ", "));
  }
  return std::nullopt;
}

// --option keys are checked against what the installed plugins declare
// before anything starts (each tool checks them again against the plugins
// it loads).
std::optional<std::string> check_plugin_options(const LaunchOptions& options,
                                                const std::string& plugin_dir) {
  if (options.plugin_options.empty()) return std::nullopt;
  Options given;
  for (const std::string& kv : options.plugin_options) {
    const auto eq = kv.find('=');
    given.set(kv.substr(0, eq), kv.substr(eq + 1));
  }
  std::vector<AvailablePlugin> plugins = load_available_plugins(plugin_dir);
  std::vector<DeclaredOptions> declared;
  // One that does not load here is left out: the tools say why if the run needs it.
  for (const AvailablePlugin& a : plugins)
    if (a.loaded.descriptor) declared.push_back({a.name, a.loaded.descriptor->options});
  const std::string error = apply_option_specs(given, declared);
  for (AvailablePlugin& a : plugins) unload_plugin(a.loaded);
  if (error.empty()) return std::nullopt;
  return "--option: " + error;
}

}  // namespace

Planned make_plan(const LaunchOptions& options, const Environment& env, const std::string& bindir) {
  Planned planned;
  auto refuse = [&](int code, std::string why) {
    planned.exit_code = code;
    planned.error = std::move(why);
    return std::move(planned);
  };
  auto note = [&](std::string text) { planned.notes.push_back(std::move(text)); };

  Plan plan;
  plan.options = options;
  if (env.get_nonempty(kExploreChildVariable))
    plan.matches_record = env.get_nonempty(kExploreRecordVariable);
  if (auto err = read_timeouts(env, &plan.timeouts)) return refuse(kExitUsage, *err);
  // The tools read these too; a bad value is caught here, before anything starts.
  ChaosSettings chaos;
  const auto chaos_delay = env.get("VCX_CHAOS_DELAY_US");
  const auto chaos_seed = env.get("VCX_CHAOS_SEED");
  if (auto err = parse_chaos_settings(chaos_delay ? chaos_delay->c_str() : nullptr,
                                      chaos_seed ? chaos_seed->c_str() : nullptr, &chaos))
    return refuse(kExitUsage, *err);

  // The program is checked before anything starts, as a shell would.
  const ProgramLookup program = resolve_program(plan.options.program, env.get("PATH"));
  if (!program.ok()) return refuse(kExitNotFound, plan.options.program + ": " + program.error);
  // mpiexec would read a leading '-' as one of its own options.
  plan.program = plan.options.program[0] == '-' ? program.path : plan.options.program;

  if (bindir.empty())
    return refuse(kExitToolFailure,
                  "cannot tell where vcx-run is installed (/proc/self/exe is unreadable)");
  plan.paths = install_paths(bindir, env);
  if (auto err = check_install(plan.paths, env.get("PATH"))) return refuse(kExitToolFailure, *err);
  if (auto err = resolve_analyses(&plan.options, plan.paths.plugin_dir); !err.empty())
    return refuse(kExitUsage, err);
  if (auto err = check_modules(plan.options, plan.paths.plugin_dir))
    return refuse(kExitUsage, *err);
  if (auto err = check_plugin_options(plan.options, plan.paths.plugin_dir))
    return refuse(kExitUsage, *err);

  // Who starts the application: Open MPI's oshrun for an OpenSHMEM or
  // MPI+OpenSHMEM program (one that links liboshmem), else MPICH's hydra
  // unless told otherwise (inside a Slurm allocation hydra starts its
  // proxies through Slurm by itself).
  const ProgramModel model = program_model(program.path);
  if (model == ProgramModel::OpenMpiMpi) {
    return refuse(kExitUsage,
                  plan.options.program +
                      " is an MPI program built with Open MPI (it links Open MPI's libmpi); "
                      "vcx runs MPI programs built with MPICH: rebuild it with mpicc.mpich "
                      "(Open MPI only for OpenSHMEM and MPI+OpenSHMEM programs, built with "
                      "oshcc)");
  }
  const bool on_openmpi = model == ProgramModel::Shmem || model == ProgramModel::Hybrid;
  plan.model = on_openmpi ? model : ProgramModel::Mpi;
  // MPMD: every further program must be there and be an MPI program too;
  // they all run under MPICH's mpiexec, each rank with its own tool.
  for (const AppSegment& seg : plan.options.more_programs) {
    const ProgramLookup more = resolve_program(seg.program, env.get("PATH"));
    if (!more.ok()) return refuse(kExitNotFound, seg.program + ": " + more.error);
    const ProgramModel m = program_model(more.path);
    if (on_openmpi || m == ProgramModel::Shmem || m == ProgramModel::Hybrid ||
        m == ProgramModel::OpenMpiMpi ||
        plan.options.launcher.value_or(LauncherKind::Hydra) != LauncherKind::Hydra) {
      return refuse(kExitUsage,
                    "several programs (':') run only as MPI programs built with MPICH, under its "
                    "mpiexec; " +
                        (on_openmpi ? plan.options.program : seg.program) +
                        " is not one, or "
                        "--launcher names another starter");
    }
    plan.more_programs.push_back(seg.program[0] == '-' ? more.path : seg.program);
  }
  plan.launcher =
      plan.options.launcher.value_or(on_openmpi ? LauncherKind::OpenMpi : LauncherKind::Hydra);
  plan.launcher_program = plan.paths.mpiexec;
  if (on_openmpi && plan.launcher != LauncherKind::OpenMpi) {
    return refuse(
        kExitUsage,
        plan.options.program + " is an " +
            (model == ProgramModel::Hybrid ? "MPI+OpenSHMEM" : "OpenSHMEM") +
            " program (it links Open MPI's liboshmem): it runs under oshrun; leave out --launcher "
            "or give --launcher openmpi");
  }
  if (plan.launcher == LauncherKind::OpenMpi) {
    if (model == ProgramModel::Mpi) {
      return refuse(
          kExitUsage,
          "--launcher openmpi runs OpenSHMEM programs, and " + plan.options.program +
              " does not link Open MPI's liboshmem; MPI programs run under MPICH (leave out "
              "--launcher)");
    }
    // A program vcx cannot read (a script) is taken at its word.
    if (plan.model != ProgramModel::Hybrid) plan.model = ProgramModel::Shmem;
    if (auto err =
            check_shmem_install(plan.paths, env.get("PATH"), plan.model == ProgramModel::Hybrid))
      return refuse(kExitToolFailure, *err);
    {
      std::string err;
      openmpi_hosts(plan.options, &err);
      if (!err.empty()) return refuse(kExitUsage, err);
    }
    plan.launcher_program = plan.paths.oshrun;
    plan.as_root = ::geteuid() == 0;
  }
  if (plan.launcher == LauncherKind::Slurm) {
    if (plan.options.hostfile || plan.options.hosts) {
      return refuse(kExitUsage,
                    std::string(plan.options.hostfile ? "--hostfile" : "-hosts") +
                        " is for hydra; with --launcher slurm the allocation decides the hosts");
    }
    const ProgramLookup srun = resolve_program("srun", env.get("PATH"));
    if (!srun.ok())
      return refuse(kExitUsage, "--launcher slurm: cannot use srun: " + srun.error +
                                    " (run inside a Slurm allocation)");
    plan.launcher_program = srun.path;
  }
  {
    std::string err;
    plan.spans_nodes = spans_nodes(plan.options, env, &err);
    if (!err.empty()) return refuse(kExitUsage, err);
  }
  {
    const std::vector<int> cpus = available_cpus();
    const PlacementResult placement =
        resolve_placement(plan.options.placement, plan.paths.config_dir, cpus);
    if (!placement.ok()) return refuse(kExitUsage, placement.error);
    plan.placement = placement.placement;
    // Unbound on a node with fewer cores than ranks and tools: the tools
    // share the ranks' cores as with --placement shared, and polling would
    // take the core the other side needs (a rank busy-polling in a blocking
    // call starves the tools it waits for).
    if (plan.placement.source == "none") {
      const int per_node = plan.options.ppn > 0 ? plan.options.ppn
                           : plan.spans_nodes   ? 0
                                                : plan.options.nprocs;
      plan.placement.oversubscribed = oversubscribed(per_node, cpus.size());
      if (plan.placement.oversubscribed && plan.options.verbose)
        note(std::to_string(per_node) + " ranks and " + std::to_string(per_node) + " tools on " +
             std::to_string(cpus.size()) +
             " cores: tools share the ranks' cores, so nobody polls while waiting and blocking "
             "calls yield the core (--app-yield auto)");
    }
  }
  if (plan.launcher == LauncherKind::OpenMpi && !plan.placement.app_cores.empty()) {
    const int per_node = plan.options.ppn > 0 ? plan.options.ppn : plan.options.nprocs;
    const auto binding = binding_args(LauncherKind::OpenMpi, plan.placement.app_cores, per_node);
    if (binding.size() == 2 && binding[1] == "none")
      note("--placement: oshrun binds one rank per core and the placement gives the application " +
           std::to_string(plan.placement.app_cores.size()) + " core(s) for " +
           std::to_string(per_node) +
           " ranks per node: the application ranks are not bound "
           "(the tools are)");
  }

  planned.plan = std::move(plan);
  return planned;
}

}  // namespace vcx::launcher
