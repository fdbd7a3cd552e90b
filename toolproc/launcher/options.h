// The vcx-run command line: mpiexec-like, everything from the program name on
// belongs to the program.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "launcher/paths.h"
#include "session/tool_arguments.h"

namespace vcx::launcher {

// Exit codes of vcx-run itself (otherwise it returns the application's).
inline constexpr int kExitUsage = 64;        // bad command line or environment setting
inline constexpr int kExitToolFailure = 70;  // vcx could not do its part
inline constexpr int kExitNotFound = 127;    // the program cannot be run

// Who starts the application job.
enum class LauncherKind { Hydra, Slurm, OpenMpi };

// What vcx-run does when a tool process fails: stop the run (exit 70), or
// let the application finish with the analysis stopped.
enum class OnToolFailure : std::uint8_t { Abort, Continue };
inline constexpr session::Spelling<OnToolFailure> kOnToolFailureNames[] = {
    {OnToolFailure::Abort, "abort"}, {OnToolFailure::Continue, "continue"}};

// A further program of an MPMD launch ("vcx-run -n 2 ./a : -n 1 ./b"): its
// ranks follow the earlier programs' in MPI_COMM_WORLD.
struct AppSegment {
  int nprocs = 1;
  std::string program;
  std::vector<std::string> program_args;
  std::vector<std::pair<std::string, std::string>> env;  // -env NAME VALUE
};

struct LaunchOptions {
  int nprocs = 0;        // every program's ranks: the tool job gets as many
  int first_nprocs = 0;  // the first program's
  std::vector<AppSegment> more_programs;  // after ':', in order
  // mpiexec's own options, for the application job only.
  std::vector<std::pair<std::string, std::string>> app_env;  // -genv/-env NAME VALUE
  bool prepend_rank = false;                                 // -l, -prepend-rank
  std::optional<std::string> bind_to;                        // -bind-to X
  std::vector<std::string> launcher_args;                    // --launcher-args '...
  std::optional<std::string> trace_dir;  // as given
  bool view = false;                     // write trace_dir/view.html after the run
  // Auto: the tools choose (never, unless an analysis needs the
  // application to wait at every wait).
  session::Stall stall = session::Stall::Auto;
  bool keep_session = false;
  // When an analysis ends the run (a deadlock): leave its processes as they
  // are and print their pids, until the user interrupts vcx-run.
  bool leave_stopped = false;
  bool verbose = false;
  bool help = false;
  bool help_plugins = false;  // --help-plugins: list the plugins and their options
  bool version = false;
  bool dry_run = false;
  std::vector<std::string> extra_modules;  // from --modules, in order, split at commas
  std::vector<std::string> plugin_options;  // --option KEY=VALUE, in order, for every tool
  std::vector<std::string> analyses;       // from --analysis, in order, split at commas
  // --no-analysis: analyses on by default to leave out.
  std::vector<std::string> analyses_off;
  // The analyses make_plan added to `analyses` because they are on by
  // default: their reports are said only when they found something.
  std::vector<std::string> analyses_by_default;
  std::optional<std::string> report_file;  // --report FILE: the analyses' findings as JSON
  std::optional<int> race_exit_code;       // --race-exit-code N
  // --force-match R:I=S,... and --force-match-file F: rank R's wildcard
  // receive I matches world rank S (docs/analyses.md, "Replaying").
  struct ForcedMatch {
    int rank = 0;
    std::uint64_t index = 0;
    int source = 0;
  };
  std::vector<ForcedMatch> forced_matches;
  int explore = 0;  // --explore N: replays to run at most (0: none)
  std::optional<std::string> hostfile;     // -f: hydra host file, for both jobs
  std::optional<std::string> hosts;        // -hosts a,b: hydra host list, for both jobs
  int ppn = 0;                             // ranks per node, 0: the launcher's default
  std::string placement = "none";          // none | split | shared | a placement file
  session::Channel channel = session::Channel::Shm;
  session::Transport transport = session::Transport::Tcp;
  std::optional<LauncherKind> launcher;    // nullopt: detect
  OnToolFailure on_tool_failure = OnToolFailure::Abort;
  bool shmem_flags = true;                 // register OpenSHMEM flag writes (on | off)
  // Blocking MPI calls yield the core (on | off); nullopt (auto): where
  // tools share the application's cores.
  std::optional<bool> app_yield;
  // Polling before sleeping (ns): the idle tool, and the application waiting
  // for its tool; nullopt: the tool's defaults.
  std::optional<std::uint64_t> tool_spin_ns;
  std::optional<std::uint64_t> app_spin_ns;
  // Differential clocks: each tool's memory for its peers' baselines
  // (vclock.diff-bytes); nullopt: the engine's default.
  std::optional<std::uint64_t> clock_diff_mib;
  std::optional<std::uint64_t> tool_backlog;  // --tool-backlog N
  std::optional<std::string> config_file;  // --config or VCX_CONFIG, as given
  std::string program;
  std::vector<std::string> program_args;
};

struct ParseResult {
  LaunchOptions options;
  std::string error;  // one line, empty on success
  bool ok() const { return error.empty(); }
};

// `args` excludes argv[0]. Settings come from the command line first, then
// from VCX_<NAME> variables of `env` (NAME: the long option in capitals, '-'
// as '_'), then from the --config file (VCX_CONFIG); the first source that
// sets a key wins.
ParseResult parse_command_line(const std::vector<std::string>& args,
                               const Environment& env = Environment());

const char* launcher_name(LauncherKind k);

// The --help text, naming the modules installed in the plugin directory.
// An installed analysis: a module with reporting hooks
// (vcx/analysis_report.h), which --analysis NAME runs.
struct InstalledAnalysis {
  std::string name;
  std::string description;
  bool on_by_default = false;  // runs unless --no-analysis names it
};

std::string usage_text(const std::vector<std::string>& installed_modules,
                       const std::vector<InstalledAnalysis>& installed_analyses);

inline bool runs_analysis(const LaunchOptions& o, const std::string& name) {
  for (const auto& a : o.analyses)
    if (a == name) return true;
  return false;
}

// The tool modules to load: trace when tracing, the analyses, then
// --modules, without duplicates and without the exchange engine (a plugin
// of its own kind, always loaded: --modules may name it, to no effect).
std::vector<std::string> module_list(const LaunchOptions& options);

// A duration in seconds from the environment ("60", "0.5"); nullopt when
// `text` is not a non-negative number.
std::optional<double> parse_seconds(const std::string& text);

}  // namespace vcx::launcher
