#include "launcher/launcher.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "launcher/console.h"
#include "launcher/explore.h"
#include "launcher/process.h"
#include "launcher/session.h"
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
    return "--modules: there is no module '" + name + "' (no " + file + "); available: " +
           (available.empty() ? "none" : join(available, ", "));
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

int launcher_main(int argc, char** argv, char** envp) {
  const Environment env(envp);
  const std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);

  const ParseResult parsed = parse_command_line(args, env);
  if (parsed.options.version) {
    write_line(STDOUT_FILENO, std::string("vcx-run (vcx) ") + VCX_VERSION);
    return 0;
  }
  if (parsed.options.help) {
    const std::string bindir = self_bindir();
    std::string text = usage_text(
        bindir.empty() ? std::vector<std::string>{}
                       : available_plugins(install_paths(bindir, env).plugin_dir, PluginKind::Module));
    if (!text.empty() && text.back() == '\n') text.pop_back();
    write_line(STDOUT_FILENO, text);
    return 0;
  }
  if (parsed.options.help_plugins) {
    const std::string bindir = self_bindir();
    if (bindir.empty()) {
      say("cannot tell where vcx-run is installed (/proc/self/exe is unreadable)");
      return kExitToolFailure;
    }
    const std::string dir = install_paths(bindir, env).plugin_dir;
    std::string text = "Plugins in " + dir + " (options: vcx-run --option KEY=VALUE)\n" +
                       describe_plugins(dir);
    if (!text.empty() && text.back() == '\n') text.pop_back();
    write_line(STDOUT_FILENO, text);
    return 0;
  }
  if (!parsed.ok()) {
    say(parsed.error);
    return kExitUsage;
  }
  if (parsed.options.explore > 0 && !env.get_nonempty(kExploreChildVariable))
    return explore(args, parsed.options, env);

  Plan plan;
  plan.options = parsed.options;
  if (env.get_nonempty(kExploreChildVariable))
    plan.matches_record = env.get_nonempty(kExploreRecordVariable);
  if (auto err = read_timeouts(env, &plan.timeouts)) {
    say(*err);
    return kExitUsage;
  }
  // The tools read these too; a bad value is caught here, before anything starts.
  ChaosSettings chaos;
  const auto chaos_delay = env.get("VCX_CHAOS_DELAY_US");
  const auto chaos_seed = env.get("VCX_CHAOS_SEED");
  if (auto err = parse_chaos_settings(chaos_delay ? chaos_delay->c_str() : nullptr,
                                      chaos_seed ? chaos_seed->c_str() : nullptr, &chaos)) {
    say(*err);
    return kExitUsage;
  }

  // The program is checked before anything starts, as a shell would.
  const ProgramLookup program = resolve_program(plan.options.program, env.get("PATH"));
  if (!program.ok()) {
    say(plan.options.program + ": " + program.error);
    return kExitNotFound;
  }
  // mpiexec would read a leading '-' as one of its own options.
  plan.program = plan.options.program[0] == '-' ? program.path : plan.options.program;

  const std::string bindir = self_bindir();
  if (bindir.empty()) {
    say("cannot tell where vcx-run is installed (/proc/self/exe is unreadable)");
    return kExitToolFailure;
  }
  plan.paths = install_paths(bindir, env);
  if (auto err = check_install(plan.paths, env.get("PATH"))) {
    say(*err);
    return kExitToolFailure;
  }
  if (auto err = check_modules(plan.options, plan.paths.plugin_dir)) {
    say(*err);
    return kExitUsage;
  }
  if (auto err = check_plugin_options(plan.options, plan.paths.plugin_dir)) {
    say(*err);
    return kExitUsage;
  }

  // Who starts the application: Open MPI's oshrun for an OpenSHMEM or
  // MPI+OpenSHMEM program (one that links liboshmem), else MPICH's hydra
  // unless told otherwise (inside a Slurm allocation hydra starts its
  // proxies through Slurm by itself).
  const ProgramModel model = program_model(program.path);
  if (model == ProgramModel::OpenMpiMpi) {
    say(plan.options.program + " is an MPI program built with Open MPI (it links Open MPI's "
        "libmpi); vcx runs MPI programs built with MPICH: rebuild it with mpicc.mpich (Open MPI "
        "only for OpenSHMEM and MPI+OpenSHMEM programs, built with oshcc)");
    return kExitUsage;
  }
  const bool on_openmpi = model == ProgramModel::Shmem || model == ProgramModel::Hybrid;
  plan.model = on_openmpi ? model : ProgramModel::Mpi;
  // MPMD: every further program must be there and be an MPI program too;
  // they all run under MPICH's mpiexec, each rank with its own tool.
  for (const AppSegment& seg : plan.options.more_programs) {
    const ProgramLookup more = resolve_program(seg.program, env.get("PATH"));
    if (!more.ok()) {
      say(seg.program + ": " + more.error);
      return kExitNotFound;
    }
    const ProgramModel m = program_model(more.path);
    if (on_openmpi || m == ProgramModel::Shmem || m == ProgramModel::Hybrid ||
        m == ProgramModel::OpenMpiMpi ||
        plan.options.launcher.value_or(LauncherKind::Hydra) != LauncherKind::Hydra) {
      say("several programs (':') run only as MPI programs built with MPICH, under its "
          "mpiexec; " + (on_openmpi ? plan.options.program : seg.program) + " is not one, or "
          "--launcher names another starter");
      return kExitUsage;
    }
    plan.more_programs.push_back(seg.program[0] == '-' ? more.path : seg.program);
  }
  plan.launcher =
      plan.options.launcher.value_or(on_openmpi ? LauncherKind::OpenMpi : LauncherKind::Hydra);
  plan.launcher_program = plan.paths.mpiexec;
  if (on_openmpi && plan.launcher != LauncherKind::OpenMpi) {
    say(plan.options.program + " is an " +
        (model == ProgramModel::Hybrid ? "MPI+OpenSHMEM" : "OpenSHMEM") +
        " program (it links Open MPI's liboshmem): it runs under oshrun; leave out --launcher "
        "or give --launcher openmpi");
    return kExitUsage;
  }
  if (plan.launcher == LauncherKind::OpenMpi) {
    if (model == ProgramModel::Mpi) {
      say("--launcher openmpi runs OpenSHMEM programs, and " + plan.options.program +
          " does not link Open MPI's liboshmem; MPI programs run under MPICH (leave out "
          "--launcher)");
      return kExitUsage;
    }
    // A program vcx cannot read (a script) is taken at its word.
    if (plan.model != ProgramModel::Hybrid) plan.model = ProgramModel::Shmem;
    if (auto err = check_shmem_install(plan.paths, env.get("PATH"),
                                       plan.model == ProgramModel::Hybrid)) {
      say(*err);
      return kExitToolFailure;
    }
    {
      std::string err;
      openmpi_hosts(plan.options, &err);
      if (!err.empty()) {
        say(err);
        return kExitUsage;
      }
    }
    plan.launcher_program = plan.paths.oshrun;
    plan.as_root = ::geteuid() == 0;
  }
  if (plan.launcher == LauncherKind::Slurm) {
    if (plan.options.hostfile || plan.options.hosts) {
      say(std::string(plan.options.hostfile ? "--hostfile" : "-hosts") +
          " is for hydra; with --launcher slurm the allocation decides the hosts");
      return kExitUsage;
    }
    const ProgramLookup srun = resolve_program("srun", env.get("PATH"));
    if (!srun.ok()) {
      say("--launcher slurm: cannot use srun: " + srun.error + " (run inside a Slurm allocation)");
      return kExitUsage;
    }
    plan.launcher_program = srun.path;
  }
  {
    std::string err;
    plan.spans_nodes = spans_nodes(plan.options, env, &err);
    if (!err.empty()) {
      say(err);
      return kExitUsage;
    }
  }
  {
    const std::vector<int> cpus = available_cpus();
    const PlacementResult placement =
        resolve_placement(plan.options.placement, plan.paths.config_dir, cpus);
    if (!placement.ok()) {
      say(placement.error);
      return kExitUsage;
    }
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
        say(std::to_string(per_node) + " ranks and " + std::to_string(per_node) +
            " tools on " + std::to_string(cpus.size()) +
            " cores: tools share the ranks' cores, so nobody polls while waiting and blocking "
            "calls yield the core (--app-yield auto)");
    }
  }
  if (plan.launcher == LauncherKind::OpenMpi && !plan.placement.app_cores.empty()) {
    const int per_node = plan.options.ppn > 0 ? plan.options.ppn : plan.options.nprocs;
    const auto binding = binding_args(LauncherKind::OpenMpi, plan.placement.app_cores, per_node);
    if (binding.size() == 2 && binding[1] == "none")
      say("--placement: oshrun binds one rank per core and the placement gives the application " +
          std::to_string(plan.placement.app_cores.size()) + " core(s) for " +
          std::to_string(per_node) + " ranks per node: the application ranks are not bound "
          "(the tools are)");
  }

  // A progress line only for a person watching a terminal.
  plan.progress = ::isatty(STDERR_FILENO) == 1 && !env.get_nonempty("VCX_NO_PROGRESS");
  if (plan.options.dry_run) {
    // The session directory is made only by a real run.
    if (plan.options.trace_dir) plan.trace_dir = absolute_path(*plan.options.trace_dir);
    const std::string session = "<session-dir>";
    write_line(STDOUT_FILENO, "tool job: " + shell_quote(tool_command(plan, session)));
    write_line(STDOUT_FILENO,
               "application job: " +
                   shell_quote(app_command(
                       plan, preload_value(interceptor_of(plan), env.get("LD_PRELOAD")))));
    return 0;
  }

  if (plan.options.trace_dir) {
    try {
      plan.trace_dir = prepare_output_dir(*plan.options.trace_dir);
      if (const std::size_t n = remove_trace_files(*plan.trace_dir); n > 0)
        say("--trace " + *plan.options.trace_dir + ": replacing the trace of an earlier run (" +
            std::to_string(n) + (n == 1 ? " rank file)" : " rank files)"));
    } catch (const std::exception& e) {
      say(std::string("--trace: ") + e.what());
      return kExitUsage;
    }
  }
  // The session directory is where application ranks find their tools: a
  // run across nodes needs one every node sees. $TMPDIR is usually local to
  // a node, $HOME usually shared.
  if (auto parent = env.get_nonempty("VCX_SESSION_PARENT")) {
    plan.session_parent = session_parent(parent);
  } else if (plan.spans_nodes && env.get_nonempty("HOME")) {
    const std::string dir = *env.get_nonempty("HOME") + "/.vcx";
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      say("cannot make " + dir + " for the session directory of a run across nodes: " +
          std::strerror(errno) + " (set VCX_SESSION_PARENT to a directory all nodes see)");
      return kExitUsage;
    }
    plan.session_parent = session_parent(dir);
  } else {
    plan.session_parent = session_parent(env.get("TMPDIR"));
  }

  try {
    return run(plan, env);
  } catch (const std::exception& e) {
    say(e.what());
    return kExitToolFailure;
  }
}

}  // namespace vcx::launcher

