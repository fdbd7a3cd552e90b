#include "launcher/option_table.h"

#include <sstream>
#include <string>
#include <vector>

#include "launcher/options.h"

namespace vcx::launcher {
namespace po = boost::program_options;

const char* const kSynopsis =
    "vcx-run [-n N] [options] [--] PROGRAM [ARGS...] [: [-n N] PROGRAM [ARGS...]]...";

po::options_description settings_table() {
  po::options_description d("Options", 80, 40);
  // clang-format off
  d.add_options()
    ("np,n", po::value<std::string>()->value_name("N"),
     "number of application ranks (default 1; -np N works too); the tool job gets as many")
    ("hostfile,f", po::value<std::string>()->value_name("FILE"),
     "hosts to run on (MPICH hydra format), for both jobs: tool rank i runs on the host of "
     "application rank i")
    ("hosts", po::value<std::string>()->value_name("A,B"),
     "hosts to run on as a list (host[:slots],...; -hosts works too), for both jobs")
    ("ppn", po::value<std::string>()->value_name("N"), "ranks per node")
    ("placement", po::value<std::string>()->value_name("P"),
     "where tools run: 'split' gives them cores of their own on each node, apart from the "
     "application's; 'shared' pins each tool to its application rank's core. Also 'none' (no "
     "binding, the default) or a placement file (see config/template.ini)")
    ("channel", po::value<std::string>()->value_name("shm|tcp"),
     "application-to-tool channel: shared memory (default) or TCP (for a tool on another node)")
    ("transport", po::value<std::string>()->value_name("tcp|shm|mpi"),
     "tool-to-tool transport: TCP (default), shm (shared memory between tools on one node, TCP "
     "between nodes) or the tool job's own MPI")
    ("launcher", po::value<std::string>()->value_name("L"),
     "what starts the application job: hydra (MPICH's mpiexec), slurm (srun) or openmpi "
     "(oshrun); detected when not given")
    ("trace", po::value<std::string>()->value_name("DIR"),
     "record every clocked call with its vector clock, times and source line in DIR "
     "(created if missing); read it with 'vcx-trace export DIR'")
    ("view", po::bool_switch(),
     "with --trace: write the run's space-time view, DIR/view.html, when it ends "
     "(vcx-trace view)")
    ("stall", po::value<std::string>()->value_name("never|waits"),
     "never (default): the application waits for its tool only when the channel is full or "
     "for a lock's grant; the tools lag behind and compute the same clocks. waits: the "
     "application also waits for its tool at every wait (receives, waits, synchronisations), "
     "so the tools are never behind")
    ("no-stall", po::bool_switch(), "the same as --stall never")
    ("tool-backlog", po::value<std::string>()->value_name("N"),
     "calls a tool reads ahead of the one it computes, at most (default 65536); then it "
     "reads no more until it catches up, the channel fills and the application waits. With "
     "the channel (4 MiB of events) this bounds how far the tools lag behind")
    ("shmem-flags", po::value<std::string>()->value_name("on|off"),
     "OpenSHMEM: on (default) registers every write that may set a flag at the target PE's "
     "tool before it happens, so that waits merge it; off skips that (each such write then "
     "costs no round trip, and only annotations order flag waits)")
    ("analysis", po::value<std::vector<std::string>>()->composing()->value_name("a,b"),
     "further analyses to run, comma-separated (the installed ones are listed below, some on "
     "by default); their report goes to stderr at the end")
    ("no-analysis", po::value<std::vector<std::string>>()->composing()->value_name("a,b"),
     "leave out analyses that run by default (those marked 'on by default' below), "
     "comma-separated")
    ("report", po::value<std::string>()->value_name("FILE"),
     "also write the analyses' findings to FILE as JSON (docs/analyses.md)")
    ("force-match", po::value<std::vector<std::string>>()->composing()->value_name("R:I=S,..."),
     "replay the program with rank R's wildcard receive number I (0-based, as the matches "
     "analysis numbers them) matching a message of world rank S instead of MPI_ANY_SOURCE; "
     "may be repeated")
    ("force-match-file", po::value<std::string>()->value_name("FILE"),
     "the same, R:I=S items read from FILE (separated by commas, spaces or lines)")
    ("explore", po::value<std::string>()->value_name("N"),
     "run the program under the matches analysis, then replay it up to N times, each with "
     "one alternative match of a wildcard receive forced, and report the replays whose exit "
     "status, output or ending (crash, hang) differ, with the line that reproduces each")
    ("race-exit-code", po::value<std::string>()->value_name("N"),
     "exit with status N when the race analysis found a race (default: the program's own)")
    ("modules", po::value<std::vector<std::string>>()->composing()->value_name("a,b"),
     "further tool modules to load, comma-separated; may be repeated (the installed ones "
     "are listed below)")
    ("on-tool-failure", po::value<std::string>()->value_name("abort|continue"),
     "when a tool process fails: abort the application (default) or let it run on unanalysed")
    ("tool-spin-ns", po::value<std::string>()->value_name("NS"),
     "how long an idle tool polls before it sleeps (default 20000); a tool sharing cores with "
     "the application (--placement shared) polls only while its rank waits for it or while it "
     "is far behind it")
    ("app-yield", po::value<std::string>()->value_name("auto|on|off"),
     "MPI programs: on makes blocking calls (receives, waits, collectives) test for "
     "completion and yield the core in between, so that a tool sharing it runs at once; off "
     "leaves MPI to busy-poll; auto (default) is on where tools share cores with the "
     "application (--placement shared)")
    ("app-spin-ns", po::value<std::string>()->value_name("NS"),
     "how long the application polls for its tool's answer before it sleeps; default 2000, 0 "
     "when tools share cores with the application")
    ("clock-diff-mib", po::value<std::string>()->value_name("MiB"),
     "memory per tool for the last clock sent to and received from each peer (default 64); "
     "clocks then travel as the entries that changed when that is smaller; 0 sends whole "
     "clocks only")
    ("launcher-args", po::value<std::string>()->value_name("'ARGS'"),
     "further options for the application job's starter (mpiexec, srun or oshrun), split "
     "at spaces, e.g. --launcher-args '-iface eth0'")
    ("leave-stopped", po::bool_switch(),
     "when an analysis would end the run (it found the program stuck), leave its processes "
     "as they are and print their pids, for a debugger; Ctrl-C then ends the run")
    ("keep-session", po::bool_switch(),
     "keep the session directory (sockets, statistics) and print its path")
    ("verbose,v", po::bool_switch(), "print the commands started and a summary at the end");
  // clang-format on
  return d;
}

po::options_description option_table() {
  po::options_description d = settings_table();
  // clang-format off
  d.add_options()
    ("config", po::value<std::string>()->value_name("FILE"),
     "read settings from FILE (keys as the long options; see config/template.ini)")
    ("option", po::value<std::vector<std::string>>()->composing()->value_name("KEY=VALUE"),
     "an option of a plugin (the engine, a translator or a module), for every tool; may be "
     "repeated. --help-plugins lists them with their defaults")
    ("help-plugins", "list the installed plugins and the options each takes, and exit")
    ("dry-run", po::bool_switch(), "print the two commands vcx-run would start, and exit")
    ("version", "print vcx's version and exit")
    ("help,h", "print this help and exit");
  // clang-format on
  return d;
}

po::options_description config_file_table() {
  po::options_description d = settings_table();
  d.add_options()("placement.app-cores", po::value<std::string>())(
      "placement.tool-cores", po::value<std::string>());
  return d;
}

std::string usage_text(const std::vector<std::string>& installed_modules,
                       const std::vector<InstalledAnalysis>& installed_analyses) {
  std::ostringstream out;
  out << "Usage: " << kSynopsis << "\n\n"
      << "Runs the MPI program PROGRAM with N ranks under MPICH's mpiexec, unchanged, while one\n"
         "vcx tool process per rank computes the happened-before order of its MPI calls as\n"
         "vector clocks. Everything from PROGRAM on belongs to the program; use -- when its\n"
         "name starts with '-'.\n\n"
      << option_table() << "\n"
      << "Modules:\n"
      << "  vclock (the exchange, always loaded); installed for --modules: "
      << (installed_modules.empty() ? std::string("none") : [&] {
           std::string list;
           for (const auto& m : installed_modules) list += (list.empty() ? "" : ", ") + m;
           return list;
         }())
      << "\n  (trace is also loaded by --trace DIR, an analysis by --analysis NAME)\n\n"
      << "Analyses (--analysis):\n";
  if (installed_analyses.empty()) out << "  none installed\n";
  for (const InstalledAnalysis& a : installed_analyses)
    out << "  " << a.name << (a.on_by_default ? " (on by default)" : "") << ": " << a.description
        << "\n";
  out << "\n"
      << "mpiexec's options:\n"
         "  -genv NAME VALUE and -env NAME VALUE set a variable for the application's ranks,\n"
         "  -l and -prepend-rank label their output lines, -bind-to X binds them as the\n"
         "  starter does (not with --placement), -genvall is accepted (the ranks get the\n"
         "  whole environment anyway), -n=N is -n N. Anything else goes to the starter with\n"
         "  --launcher-args.\n\n"
      << "Placement:\n"
         "  With 'split' each node's cores are divided: application ranks run on the first\n"
         "  half, their tools on the second, so tools never take a core from the application.\n"
         "  With 'shared' tool rank i is pinned to the core of application rank i, for nodes\n"
         "  without spare cores; the tools sleep whenever they have nothing to do.\n\n"
         "Settings:\n"
         "  Every option above except --config, --option, --help-plugins, --dry-run and\n"
         "  --help may also be given as a variable VCX_<NAME> (VCX_PLACEMENT=split,\n"
         "  VCX_NO_STALL=1) or as 'name = value' in the --config file (or VCX_CONFIG); the\n"
         "  command line wins over the environment, which wins over the file.\n\n"
      << "Exit status:\n"
         "  the application's exit status, as mpiexec reports it; otherwise\n"
         "  64     usage error: bad option, missing PROGRAM, unknown module, bad\n"
         "         VCX_* value, --trace directory that cannot be made\n"
         "  70     vcx failed: one of its files is missing, the tool job did not get ready,\n"
         "         or it failed or had to be stopped while the application succeeded (not\n"
         "         with --on-tool-failure=continue); also the interceptors' abort when\n"
         "         their tools fail\n"
         "  127    PROGRAM not found or not executable (nothing was started)\n"
         "  128+S  the application job (mpiexec) was killed by signal S, or vcx-run got\n"
         "         signal S (SIGINT, SIGTERM, SIGHUP: passed on to both jobs) and the\n"
         "         application still reported success\n\n"
         "Environment:\n"
         "  VCX_START_TIMEOUT  seconds to wait for the tool job to get ready (default 60)\n"
         "  VCX_STOP_TIMEOUT   seconds the tool job may take to finish after the application\n"
         "                     ended before it is stopped (default 60)\n"
         "  VCX_TOOLPROC       the tool executable (default: vcx-toolproc next to vcx-run)\n"
         "  VCX_PLUGIN_DIR     the plugin directory with the interceptor (default: ../lib/vcx)\n"
         "  VCX_MPIEXEC        MPICH's mpiexec (default: the one vcx was built with)\n"
         "  VCX_OSHRUN         Open MPI's oshrun, for OpenSHMEM programs (default: the one\n"
         "                     vcx was built with)\n"
         "  TMPDIR             where the private session directory is made (default /tmp)\n";
  return out.str();
}

}  // namespace vcx::launcher
