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
#include "launcher/option_table.h"

namespace vcx::launcher {
namespace po = boost::program_options;
namespace {

constexpr int kMaxProcs = 1 << 20;

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


}  // namespace

namespace {

bool is_bool_key(const std::string& key) {
  return key == "no-stall" || key == "keep-session" || key == "verbose" ||
         key == "leave-stopped";
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

constexpr session::Spelling<std::optional<LauncherKind>> kLauncherNames[] = {
    {LauncherKind::Hydra, "hydra"}, {LauncherKind::Slurm, "slurm"},
    {LauncherKind::OpenMpi, "openmpi"}};
// On/off settings; "auto" leaves the choice to vcx.
constexpr session::Spelling<bool> kSwitchNames[] = {{true, "on"}, {false, "off"}};
constexpr session::Spelling<std::optional<bool>> kAutoSwitchNames[] = {
    {std::nullopt, "auto"}, {true, "on"}, {false, "off"}};

// Sets `*field` from the value of `key`, if given; the error otherwise.
template <class E, std::size_t N>
std::string choose(const po::variables_map& vm, const char* key,
                   const session::Spelling<E> (&names)[N], E* field) {
  if (!vm.count(key)) return {};
  const std::string v = vm[key].as<std::string>();
  if (auto value = session::parse_choice(v, names)) {
    *field = *value;
    return {};
  }
  return std::string("--") + key + " must be one of " + session::choices_of(names) + ", not '" +
         v + "'";
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
  return session::name_of(std::optional<LauncherKind>(k), kLauncherNames).data();
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
  if (std::string err = choose(vm, "stall", session::kStallNames, &o.stall); !err.empty()) {
    r.error = err;
    return r;
  }
  // --no-stall is the old spelling of --stall never. Given both, a setting
  // from the command line or environment wins over one from the config file.
  if (vm["no-stall"].as<bool>()) {
    const bool waits = o.stall == session::Stall::Waits;
    if (waits && set_by_config("no-stall") == set_by_config("stall")) {
      r.error = "--no-stall and --stall waits contradict each other: give one";
      return r;
    }
    if (!waits || set_by_config("stall")) o.stall = session::Stall::Never;
  }
  o.keep_session = vm["keep-session"].as<bool>();
  o.leave_stopped = vm["leave-stopped"].as<bool>();
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
  std::optional<bool> app_yield = o.app_yield;
  for (std::string err :
       {choose(vm, "channel", session::kChannelNames, &o.channel),
        choose(vm, "transport", session::kTransportNames, &o.transport),
        choose(vm, "on-tool-failure", kOnToolFailureNames, &o.on_tool_failure),
        choose(vm, "shmem-flags", kSwitchNames, &o.shmem_flags),
        choose(vm, "app-yield", kAutoSwitchNames, &app_yield)}) {
    if (!err.empty()) {
      r.error = err;
      return r;
    }
  }
  o.app_yield = app_yield;
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
  if (std::string err = choose(vm, "launcher", kLauncherNames, &o.launcher); !err.empty()) {
    r.error = err;
    return r;
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
  // Which analyses are installed is known to the plan (make_plan).
  for (const auto& name : names_of(vm, "analysis")) {
    if (!valid_module_name(name)) {
      r.error = "--analysis: '" + name + "' is not an analysis name (letters, digits, '_', '-', '.')";
      return r;
    }
    if (std::find(o.analyses.begin(), o.analyses.end(), name) == o.analyses.end())
      o.analyses.push_back(name);
  }
  for (const auto& name : names_of(vm, "no-analysis")) {
    if (!valid_module_name(name)) {
      r.error =
          "--no-analysis: '" + name + "' is not an analysis name (letters, digits, '_', '-', '.')";
      return r;
    }
    if (std::find(o.analyses.begin(), o.analyses.end(), name) != o.analyses.end()) {
      r.error = "--analysis and --no-analysis both name '" + name + "': leave out one of them";
      return r;
    }
    if (std::find(o.analyses_off.begin(), o.analyses_off.end(), name) == o.analyses_off.end())
      o.analyses_off.push_back(name);
  }
  // Whether --report has analyses to write is known once the ones on by
  // default are (make_plan).
  if (vm.count("report")) {
    o.report_file = vm["report"].as<std::string>();
    if (o.report_file->empty()) {
      r.error = "--report needs a file name";
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

std::vector<std::string> module_list(const LaunchOptions& options) {
  std::vector<std::string> mods;
  if (options.trace_dir) mods.push_back("trace");
  auto add = [&](const std::string& m) {
    // The exchange engine is always loaded, and is no module.
    if (m != session::kDefaultEngine && std::find(mods.begin(), mods.end(), m) == mods.end()) mods.push_back(m);
  };
  for (const auto& m : options.analyses) add(m);
  for (const auto& m : options.extra_modules) add(m);
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
