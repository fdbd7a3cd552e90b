#include "launcher/options.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "launcher/hosts.h"

namespace vcx::launcher {
namespace po = boost::program_options;
namespace {

constexpr int kMaxProcs = 1 << 20;

// Settings: keys of the command line, of VCX_* variables and of --config
// files alike.
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
     "analyses to run, comma-separated: race (data races between one-sided accesses: MPI "
     "RMA, OpenSHMEM), matches (wildcard receives: which other ranks' messages each could "
     "have matched); a report goes to stderr at the end")
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
    ("keep-session", po::bool_switch(),
     "keep the session directory (sockets, statistics) and print its path")
    ("verbose,v", po::bool_switch(), "print the commands started and a summary at the end");
  // clang-format on
  return d;
}

// The command line has a few more.
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

// A config file may also hold the [placement] section of a placement file.
po::options_description config_file_table() {
  po::options_description d = settings_table();
  d.add_options()("placement.app-cores", po::value<std::string>())(
      "placement.tool-cores", po::value<std::string>());
  return d;
}

bool takes_value(const po::options_description& table, const std::string& display_name) {
  for (const auto& opt : table.options()) {
    const bool match =
        opt->canonical_display_name(po::command_line_style::allow_long) == display_name ||
        opt->canonical_display_name(po::command_line_style::allow_dash_for_short) == display_name;
    if (match) return opt->semantic()->max_tokens() > 0;
  }
  return false;
}

// Splits `args` into the launcher's own part and the program with its
// arguments: the first word that is not an option (or the word after "--")
// is the program. Options taking a value swallow the next word.
struct Split {
  std::vector<std::string> own;
  std::size_t program_index;
  bool help = false;
  bool help_plugins = false;
  bool version = false;
  // mpiexec's spellings that the options table does not hold.
  std::vector<std::pair<std::string, std::string>> env;
  bool prepend_rank = false;
  std::optional<std::string> bind_to;
  std::string error;
};

Split split_arguments(const po::options_description& table, const std::vector<std::string>& args) {
  Split s;
  std::size_t i = 0;
  for (; i < args.size(); ++i) {
    std::string a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a.size() < 2 || a[0] != '-') break;
    // mpiexec's spellings of long options with one dash.
    for (const char* name : {"-np", "-ppn", "-hosts"}) {
      const std::size_t len = std::strlen(name);
      if (a.compare(0, len, name) == 0 && (a.size() == len || a[len] == '=')) {
        a = "-" + a;
        break;
      }
    }
    if (a.rfind("-n=", 0) == 0) a = "--np=" + a.substr(3);
    // mpiexec's options for the application job (hydra's names).
    if (a == "-genv" || a == "-env") {
      if (i + 2 >= args.size()) {
        s.error = a + " needs a name and a value: " + a + " NAME VALUE";
        break;
      }
      s.env.emplace_back(args[i + 1], args[i + 2]);
      i += 2;
      continue;
    }
    if (a == "-genvall" || a == "-envall") continue;  // what mpiexec and vcx-run do anyway
    if (a == "-l" || a == "-prepend-rank" || a == "--prepend-rank") {
      s.prepend_rank = true;
      continue;
    }
    if (a == "-bind-to" || a == "--bind-to") {
      if (i + 1 >= args.size()) {
        s.error = a + " needs a value, as mpiexec takes it (e.g. core)";
        break;
      }
      s.bind_to = args[++i];
      continue;
    }
    if (a == "--help" || a == "-h") s.help = true;
    if (a == "--help-plugins") s.help_plugins = true;
    if (a == "--version") s.version = true;
    s.own.push_back(a);
    bool value_follows = false;
    if (a.rfind("--", 0) == 0) {
      value_follows = a.find('=') == std::string::npos && takes_value(table, a);
    } else {
      // A group of short options ("-vn4", "-vn 4"): the first one taking a
      // value takes the rest of the word, or the next word if none is left.
      for (std::size_t j = 1; j < a.size(); ++j) {
        if (takes_value(table, std::string("-") + a[j])) {
          value_follows = j + 1 == a.size();
          break;
        }
      }
    }
    if (value_follows && i + 1 < args.size()) s.own.push_back(args[++i]);
  }
  s.program_index = i;
  return s;
}

bool valid_module_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-' || c == '.';
  });
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// The names of a repeatable, comma-separated option (--modules a,b --modules
// c), in order, trimmed, empty ones dropped.
std::vector<std::string> names_of(const po::variables_map& vm, const char* option) {
  std::vector<std::string> out;
  if (!vm.count(option)) return out;
  for (const auto& item : vm[option].as<std::vector<std::string>>()) {
    std::stringstream parts(item);
    std::string name;
    while (std::getline(parts, name, ','))
      if (!(name = trim(name)).empty()) out.push_back(name);
  }
  return out;
}

const char* const kSynopsis =
    "vcx-run [-n N] [options] [--] PROGRAM [ARGS...] [: [-n N] PROGRAM [ARGS...]]...";

}  // namespace

namespace {

bool is_bool_key(const std::string& key) {
  return key == "no-stall" || key == "keep-session" || key == "verbose";
}

// VCX_<NAME> variables naming a setting, as parsed options. Other VCX_*
// variables (timeouts, paths, the session's own) are not settings.
std::string environment_options(const po::options_description& table, const Environment& env,
                                po::parsed_options* out) {
  for (const std::string& entry : env.entries()) {
    if (entry.rfind("VCX_", 0) != 0) continue;
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    std::string key = entry.substr(4, eq - 4);
    for (char& c : key) c = c == '_' ? '-' : static_cast<char>(std::tolower(c));
    if (key == "config" || !table.find_nothrow(key, false)) continue;
    std::string value = entry.substr(eq + 1);
    if (is_bool_key(key)) {
      std::string v = value;
      for (char& c : v) c = static_cast<char>(std::tolower(c));
      if (v == "1" || v == "true" || v == "yes" || v == "on") {
        value = "true";
      } else if (v.empty() || v == "0" || v == "false" || v == "no" || v == "off") {
        continue;
      } else {
        return entry.substr(0, eq) + " must be 1 or 0, not '" + value + "'";
      }
    } else if (value.empty()) {
      continue;  // set but empty: as if unset
    }
    po::option opt;
    opt.string_key = key;
    opt.value.push_back(value);
    opt.original_tokens = {entry};
    out->options.push_back(opt);
  }
  return {};
}

std::string one_of(const std::string& key, const std::string& value,
                   std::initializer_list<const char*> allowed) {
  std::string list;
  for (const char* a : allowed) {
    if (value == a) return {};
    list += list.empty() ? "" : ", ";
    list += a;
  }
  return "--" + key + " must be one of " + list + ", not '" + value + "'";
}

std::string whole_number(const std::string& key, const std::string& text, int max, int* out) {
  char* end = nullptr;
  errno = 0;
  const long value = text.empty() ? 0 : std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || value < 1 || value > max)
    return key + " needs a positive whole number, not '" + text + "'";
  *out = static_cast<int>(value);
  return {};
}

// A polling time in nanoseconds: 0 to one second.
std::string whole_number(const std::string& key, const std::string& text,
                         unsigned long long max, const char* unit,
                         std::optional<std::uint64_t>* out) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = text.empty() ? 0 : std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])) || *end != '\0' ||
      errno != 0 || value > max)
    return "--" + key + " needs a whole number of " + unit + " from 0 to " +
           std::to_string(max) + ", not '" + text + "'";
  *out = value;
  return {};
}

// A path from a config file is taken relative to the file's directory.
std::string relative_to(const std::string& path, const std::optional<std::string>& config,
                        bool from_config) {
  if (!from_config || !config || path.empty() || path[0] == '/') return path;
  const auto slash = config->rfind('/');
  if (slash == std::string::npos) return path;
  return config->substr(0, slash + 1) + path;
}

// The programs after the first ':' of an MPMD launch: "[-n N] [-env NAME
// VALUE]... PROGRAM [ARGS...]", separated by ':'.
std::string parse_more_programs(const std::vector<std::string>& words,
                                std::vector<AppSegment>* out) {
  std::size_t i = 0;
  while (true) {
    AppSegment seg;
    for (; i < words.size(); ++i) {
      std::string w = words[i];
      if (w == "-n" || w == "-np" || w == "--np" || w.rfind("-n=", 0) == 0 ||
          w.rfind("-np=", 0) == 0 || w.rfind("--np=", 0) == 0) {
        std::string value;
        if (const auto eq = w.find('='); eq != std::string::npos) {
          value = w.substr(eq + 1);
        } else if (i + 1 < words.size()) {
          value = words[++i];
        }
        if (whole_number("-n", value, kMaxProcs, &seg.nprocs).size() > 0)
          return "-n after ':' needs a positive whole number of ranks, not '" + value + "'";
      } else if (w == "-env" || w == "-genv") {
        if (i + 2 >= words.size()) return w + " after ':' needs a name and a value";
        seg.env.emplace_back(words[i + 1], words[i + 2]);
        i += 2;
      } else if (w == "--") {
        ++i;
        break;
      } else if (w.size() > 1 && w[0] == '-') {
        return "after ':' only -n N and -env NAME VALUE may come before the program, not '" +
               w + "'";
      } else {
        break;
      }
    }
    if (i >= words.size() || words[i] == ":")
      return "a ':' must be followed by a program: " + std::string(kSynopsis);
    seg.program = words[i++];
    for (; i < words.size() && words[i] != ":"; ++i) seg.program_args.push_back(words[i]);
    out->push_back(std::move(seg));
    if (i >= words.size()) return {};
    ++i;  // the ':'
  }
}

}  // namespace

const char* launcher_name(LauncherKind k) {
  switch (k) {
    case LauncherKind::Hydra: return "hydra";
    case LauncherKind::Slurm: return "slurm";
    case LauncherKind::OpenMpi: return "openmpi";
  }
  return "?";
}

ParseResult parse_command_line(const std::vector<std::string>& args, const Environment& env) {
  ParseResult r;
  LaunchOptions& o = r.options;
  const po::options_description table = option_table();
  const Split split = split_arguments(table, args);
  if (split.help) {
    o.help = true;
    return r;
  }
  if (split.help_plugins) {
    o.help_plugins = true;
    return r;
  }
  if (split.version) {
    o.version = true;
    return r;
  }
  if (!split.error.empty()) {
    r.error = split.error;
    return r;
  }
  o.app_env = split.env;
  o.prepend_rank = split.prepend_rank;
  o.bind_to = split.bind_to;

  po::variables_map vm;
  try {
    const int style = po::command_line_style::unix_style & ~po::command_line_style::allow_guessing;
    po::store(po::command_line_parser(split.own).options(table).style(style).run(), vm);
  } catch (const po::error& e) {
    r.error = std::string(e.what()) + " (see 'vcx-run --help')";
    return r;
  }
  // Which keys the config file set (after the command line and the
  // environment, which win).
  std::vector<std::string> from_config;
  try {
    const po::options_description settings = settings_table();
    po::parsed_options env_opts(&settings);
    if (std::string err = environment_options(settings, env, &env_opts); !err.empty()) {
      r.error = err;
      return r;
    }
    po::store(env_opts, vm);
    if (vm.count("config")) {
      o.config_file = vm["config"].as<std::string>();
    } else if (auto c = env.get_nonempty("VCX_CONFIG")) {
      o.config_file = *c;
    }
    if (o.config_file) {
      std::ifstream in(*o.config_file);
      if (!in) {
        r.error = "cannot read the config file " + *o.config_file + ": " + std::strerror(errno);
        return r;
      }
      const po::options_description file_table = config_file_table();
      po::variables_map seen = vm;
      try {
        po::store(po::parse_config_file(in, file_table, false), vm);
      } catch (const po::error& e) {
        r.error = "config file " + *o.config_file + ": " + e.what();
        return r;
      }
      for (const auto& [key, value] : vm)
        if (!value.defaulted() && (!seen.count(key) || seen[key].defaulted()))
          from_config.push_back(key);
    }
    po::notify(vm);
  } catch (const po::error& e) {
    r.error = std::string(e.what()) + " (see 'vcx-run --help')";
    return r;
  }
  auto set_by_config = [&](const char* key) {
    return std::find(from_config.begin(), from_config.end(), key) != from_config.end();
  };

  if (split.program_index < args.size()) {
    o.program = args[split.program_index];
    o.program_args.assign(args.begin() + static_cast<std::ptrdiff_t>(split.program_index) + 1,
                          args.end());
  }
  // MPMD, as mpiexec reads it: a ':' word ends a program's arguments, and
  // each further program may have its own -n and -env before its name.
  if (auto colon = std::find(o.program_args.begin(), o.program_args.end(), ":");
      colon != o.program_args.end()) {
    std::vector<std::string> rest(colon + 1, o.program_args.end());
    o.program_args.erase(colon, o.program_args.end());
    if (std::string err = parse_more_programs(rest, &o.more_programs); !err.empty()) {
      r.error = err;
      return r;
    }
  }
  if (vm.count("stall")) {
    const std::string v = vm["stall"].as<std::string>();
    if (std::string err = one_of("stall", v, {"never", "waits"}); !err.empty()) {
      r.error = err;
      return r;
    }
    o.stall = v;
  }
  // --no-stall is the old spelling of --stall never. Given both, a setting
  // from the command line or environment wins over one from the config file.
  if (vm["no-stall"].as<bool>()) {
    const bool waits = o.stall == "waits";
    if (waits && set_by_config("no-stall") == set_by_config("stall")) {
      r.error = "--no-stall and --stall waits contradict each other: give one";
      return r;
    }
    if (!waits || set_by_config("stall")) o.stall = "never";
  }
  o.keep_session = vm["keep-session"].as<bool>();
  o.verbose = vm["verbose"].as<bool>();
  o.dry_run = vm.count("dry-run") && vm["dry-run"].as<bool>();

  // As with mpiexec, one rank unless told otherwise.
  const std::string np = vm.count("np") ? vm["np"].as<std::string>() : "1";
  if (std::string err = whole_number("-n", np, kMaxProcs, &o.nprocs); !err.empty()) {
    r.error = "-n needs a positive whole number of ranks, not '" + np + "'";
    return r;
  }
  o.first_nprocs = o.nprocs;
  for (const AppSegment& seg : o.more_programs) {
    if (o.nprocs > kMaxProcs - seg.nprocs) {
      r.error = "the programs have more than " + std::to_string(kMaxProcs) + " ranks together";
      return r;
    }
    o.nprocs += seg.nprocs;
  }
  if (vm.count("ppn")) {
    if (std::string err = whole_number("-ppn", vm["ppn"].as<std::string>(), kMaxProcs, &o.ppn);
        !err.empty()) {
      r.error = err;
      return r;
    }
  }
  if (vm.count("hostfile")) {
    o.hostfile =
        relative_to(vm["hostfile"].as<std::string>(), o.config_file, set_by_config("hostfile"));
    if (o.hostfile->empty()) {
      r.error = "--hostfile needs a file name";
      return r;
    }
  }
  if (vm.count("hosts")) {
    if (o.hostfile) {
      r.error = "-hosts and --hostfile both name the hosts; give one of them";
      return r;
    }
    o.hosts = vm["hosts"].as<std::string>();
    if (std::string err = parse_host_list(*o.hosts).error; !err.empty()) {
      r.error = err;
      return r;
    }
  }
  if (vm.count("placement")) {
    o.placement = vm["placement"].as<std::string>();
    if (o.placement.empty()) {
      r.error = "--placement needs split, shared, none or a placement file";
      return r;
    }
    if (o.placement != "split" && o.placement != "shared" && o.placement != "none")
      o.placement = relative_to(o.placement, o.config_file, set_by_config("placement"));
  } else if (o.config_file &&
             (vm.count("placement.app-cores") || vm.count("placement.tool-cores"))) {
    o.placement = *o.config_file;  // the config file is its own placement file
  }
  struct Choice {
    const char* key;
    std::string* field;
    std::initializer_list<const char*> allowed;
  };
  const Choice choices[] = {{"channel", &o.channel, {"shm", "tcp"}},
                            {"transport", &o.transport, {"tcp", "shm", "mpi"}},
                            {"on-tool-failure", &o.on_tool_failure, {"abort", "continue"}},
                            {"shmem-flags", &o.shmem_flags, {"on", "off"}},
                            {"app-yield", &o.app_yield, {"auto", "on", "off"}}};
  for (const Choice& c : choices) {
    if (!vm.count(c.key)) continue;
    const std::string v = vm[c.key].as<std::string>();
    if (std::string err = one_of(c.key, v, c.allowed); !err.empty()) {
      r.error = err;
      return r;
    }
    *c.field = v;
  }
  struct Number {
    const char* key;
    std::optional<std::uint64_t>* field;
    unsigned long long max;
    const char* unit;
  };
  for (const Number& n : {Number{"tool-spin-ns", &o.tool_spin_ns, 1'000'000'000ULL, "nanoseconds"},
                          Number{"app-spin-ns", &o.app_spin_ns, 1'000'000'000ULL, "nanoseconds"},
                          Number{"clock-diff-mib", &o.clock_diff_mib, 1'048'576ULL, "MiB"},
                          Number{"tool-backlog", &o.tool_backlog, 1ULL << 32, "calls"}}) {
    const std::string key = n.key;
    if (!vm.count(key)) continue;
    if (std::string err = whole_number(key, vm[key].as<std::string>(), n.max, n.unit, n.field);
        !err.empty()) {
      r.error = err;
      return r;
    }
  }
  if (o.tool_backlog == 0u) {
    r.error = "--tool-backlog needs at least 1 call";
    return r;
  }
  if (vm.count("launcher-args")) {
    std::istringstream words(vm["launcher-args"].as<std::string>());
    for (std::string w; words >> w;) o.launcher_args.push_back(w);
  }
  // A binding of mpiexec's own and vcx's placement would bind the ranks twice.
  if (o.bind_to && o.placement != "none") {
    r.error = "-bind-to " + *o.bind_to + " and --placement " + o.placement +
              " both bind the application ranks; give one of them";
    return r;
  }
  if (vm.count("launcher")) {
    const std::string v = vm["launcher"].as<std::string>();
    if (std::string err = one_of("launcher", v, {"hydra", "slurm", "openmpi"}); !err.empty()) {
      r.error = err;
      return r;
    }
    o.launcher = v == "hydra" ? LauncherKind::Hydra
                 : v == "slurm" ? LauncherKind::Slurm
                                : LauncherKind::OpenMpi;
  }

  if (vm.count("trace")) {
    o.trace_dir = vm["trace"].as<std::string>();
    if (o.trace_dir->empty()) {
      r.error = "--trace needs a directory name";
      return r;
    }
  }
  o.view = vm["view"].as<bool>();
  if (o.view && !o.trace_dir) {
    r.error = "--view draws the run's trace: give --trace DIR too";
    return r;
  }
  if (vm.count("option")) {
    for (const std::string& kv : vm["option"].as<std::vector<std::string>>()) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) {
        r.error = "--option takes KEY=VALUE (vcx-run --help-plugins lists the keys), not '" + kv +
                  "'";
        return r;
      }
      o.plugin_options.push_back(kv);
    }
  }
  for (const auto& name : names_of(vm, "modules")) {
    if (!valid_module_name(name)) {
      r.error = "--modules: '" + name + "' is not a module name (letters, digits, '_', '-', '.')";
      return r;
    }
    o.extra_modules.push_back(name);
  }
  for (const auto& name : names_of(vm, "analysis")) {
    const auto& known = known_analyses();
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      r.error = "--analysis: there is no analysis '" + name + "' (available: " + list + ")";
      return r;
    }
    if (std::find(o.analyses.begin(), o.analyses.end(), name) == o.analyses.end())
      o.analyses.push_back(name);
  }
  if (vm.count("report")) {
    o.report_file = vm["report"].as<std::string>();
    if (o.report_file->empty()) {
      r.error = "--report needs a file name";
      return r;
    }
    if (o.analyses.empty()) {
      r.error = "--report writes the findings of analyses: add one with --analysis (e.g. race)";
      return r;
    }
  }
  {
    std::vector<std::string> items = names_of(vm, "force-match");
    if (vm.count("force-match-file")) {
      const std::string path = vm["force-match-file"].as<std::string>();
      std::ifstream in(path);
      if (!in) {
        r.error = "--force-match-file: cannot read " + path;
        return r;
      }
      std::string item;
      while (in >> item) {
        std::stringstream parts(item);
        std::string one;
        while (std::getline(parts, one, ','))
          if (!(one = trim(one)).empty()) items.push_back(one);
      }
    }
    for (const std::string& item : items) {
      LaunchOptions::ForcedMatch f;
      char tail = 0;
      unsigned long long index = 0;
      if (std::sscanf(item.c_str(), "%d:%llu=%d%c", &f.rank, &index, &f.source, &tail) != 3 ||
          f.rank < 0 || f.source < 0) {
        r.error = "--force-match: '" + item +
                  "' is not R:I=S (rank R's wildcard receive number I matches rank S, e.g. "
                  "1:0=2)";
        return r;
      }
      f.index = index;
      if (f.rank >= o.nprocs || f.source >= o.nprocs) {
        r.error = "--force-match: '" + item + "' names a rank outside the " +
                  std::to_string(o.nprocs) + " of this run";
        return r;
      }
      for (const auto& g : o.forced_matches)
        if (g.rank == f.rank && g.index == f.index && g.source != f.source) {
          r.error = "--force-match: rank " + std::to_string(f.rank) + "'s wildcard receive " +
                    std::to_string(f.index) + " is forced to two sources (" +
                    std::to_string(g.source) + " and " + std::to_string(f.source) + ")";
          return r;
        }
      o.forced_matches.push_back(f);
    }
  }
  if (vm.count("explore")) {
    const std::string v = trim(vm["explore"].as<std::string>());
    char* end = nullptr;
    const long n = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || n < 1 || n > 100000) {
      r.error = "--explore needs how many replays to run at most (1..100000), not '" + v + "'";
      return r;
    }
    // The runs --explore makes (VCX_EXPLORE_CHILD) carry their own --report.
    if (o.report_file && !env.get_nonempty("VCX_EXPLORE_CHILD")) {
      r.error = "--explore writes the reports of its runs itself: leave out --report";
      return r;
    }
    o.explore = static_cast<int>(n);
  }
  if (vm.count("race-exit-code")) {
    const std::string v = trim(vm["race-exit-code"].as<std::string>());
    char* end = nullptr;
    const long n = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || n < 0 || n > 255) {
      r.error = "--race-exit-code must be an exit status 0..255, not '" + v + "'";
      return r;
    }
    if (std::find(o.analyses.begin(), o.analyses.end(), "race") == o.analyses.end()) {
      r.error = "--race-exit-code needs the race analysis: add --analysis race";
      return r;
    }
    o.race_exit_code = static_cast<int>(n);
  }
  if (o.program.empty()) {
    r.error = std::string("no program given: ") + kSynopsis;
    return r;
  }
  return r;
}

std::string usage_text(const std::vector<std::string>& installed_modules) {
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
      << "\n  (trace is also loaded by --trace DIR, race by --analysis race)\n\n"
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

std::vector<std::string> module_list(const LaunchOptions& options) {
  std::vector<std::string> mods{"vclock"};
  if (options.trace_dir) mods.push_back("trace");
  for (const auto& m : options.analyses)
    if (std::find(mods.begin(), mods.end(), m) == mods.end()) mods.push_back(m);
  for (const auto& m : options.extra_modules)
    if (std::find(mods.begin(), mods.end(), m) == mods.end()) mods.push_back(m);
  return mods;
}

std::optional<double> parse_seconds(const std::string& text) {
  const std::string t = trim(text);
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(t.c_str(), &end);
  if (*end != '\0' || errno != 0 || !std::isfinite(v) || v < 0 || v > 1e7) return std::nullopt;
  return v;
}

}  // namespace vcx::launcher
