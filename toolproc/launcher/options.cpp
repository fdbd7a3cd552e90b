#include "launcher/options.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace vcx::launcher {
namespace po = boost::program_options;
namespace {

constexpr int kMaxProcs = 1 << 20;

po::options_description option_table() {
  po::options_description d("Options", 80, 40);
  // clang-format off
  d.add_options()
    ("help,h", "print this help and exit")
    ("np,n", po::value<std::string>()->value_name("N"),
     "number of application ranks (required; -np N works too); the tool job gets as many")
    ("trace", po::value<std::string>()->value_name("DIR"),
     "record every clocked call with its vector clock in DIR (created if missing); "
     "read it with 'vcx-trace export DIR'")
    ("no-stall", po::bool_switch(),
     "offline mode: never stall the application; the tools catch up and compute the same clocks")
    ("modules", po::value<std::vector<std::string>>()->composing()->value_name("a,b"),
     "further tool modules to load, comma-separated (e.g. race,matches); may be repeated")
    ("keep-session", po::bool_switch(),
     "keep the session directory (sockets, statistics) and print its path")
    ("verbose,v", po::bool_switch(), "print the commands started and a summary at the end");
  // clang-format on
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
    if (a == "-np" || a.rfind("-np=", 0) == 0) a = "-" + a;  // mpiexec's spelling
    if (a == "--help" || a == "-h") s.help = true;
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

const char* const kSynopsis = "vcx-run -n N [options] [--] PROGRAM [ARGS...]";

}  // namespace

ParseResult parse_command_line(const std::vector<std::string>& args) {
  ParseResult r;
  LaunchOptions& o = r.options;
  const po::options_description table = option_table();
  const Split split = split_arguments(table, args);
  if (split.help) {
    o.help = true;
    return r;
  }

  po::variables_map vm;
  try {
    const int style = po::command_line_style::unix_style & ~po::command_line_style::allow_guessing;
    po::store(po::command_line_parser(split.own).options(table).style(style).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    r.error = std::string(e.what()) + " (see 'vcx-run --help')";
    return r;
  }

  if (split.program_index < args.size()) {
    o.program = args[split.program_index];
    o.program_args.assign(args.begin() + static_cast<std::ptrdiff_t>(split.program_index) + 1,
                          args.end());
  }
  o.no_stall = vm["no-stall"].as<bool>();
  o.keep_session = vm["keep-session"].as<bool>();
  o.verbose = vm["verbose"].as<bool>();

  if (!vm.count("np")) {
    const bool misplaced =
        std::any_of(o.program_args.begin(), o.program_args.end(),
                    [](const std::string& a) { return a == "-n" || a == "-np"; });
    r.error = std::string("the number of ranks is missing: ") + kSynopsis +
              (misplaced ? " (vcx-run's options go before the program name)" : "");
    return r;
  }
  const std::string n = vm["np"].as<std::string>();
  char* end = nullptr;
  errno = 0;
  const long value = n.empty() ? 0 : std::strtol(n.c_str(), &end, 10);
  if (n.empty() || *end != '\0' || errno != 0 || value < 1 || value > kMaxProcs) {
    r.error = "-n needs a positive whole number of ranks, not '" + n + "'";
    return r;
  }
  o.nprocs = static_cast<int>(value);

  if (vm.count("trace")) {
    o.trace_dir = vm["trace"].as<std::string>();
    if (o.trace_dir->empty()) {
      r.error = "--trace needs a directory name";
      return r;
    }
  }
  if (vm.count("modules")) {
    for (const auto& item : vm["modules"].as<std::vector<std::string>>()) {
      std::stringstream parts(item);
      std::string name;
      while (std::getline(parts, name, ',')) {
        name = trim(name);
        if (name.empty()) continue;
        if (!valid_module_name(name)) {
          r.error =
              "--modules: '" + name + "' is not a module name (letters, digits, '_', '-', '.')";
          return r;
        }
        o.extra_modules.push_back(name);
      }
    }
  }
  if (o.program.empty()) {
    r.error = std::string("no program given: ") + kSynopsis;
    return r;
  }
  return r;
}

std::string usage_text() {
  std::ostringstream out;
  out << "Usage: " << kSynopsis << "\n\n"
      << "Runs the MPI program PROGRAM with N ranks under MPICH's mpiexec, unchanged, while one\n"
         "vcx tool process per rank computes the happened-before order of its MPI calls as\n"
         "vector clocks. Everything from PROGRAM on belongs to the program; use -- when its\n"
         "name starts with '-'.\n\n"
      << option_table() << "\n"
      << "Exit status:\n"
         "  the application's exit status, as mpiexec reports it; otherwise\n"
         "  64     usage error: bad option, missing -n or PROGRAM, bad VCX_* value,\n"
         "         --trace directory that cannot be made\n"
         "  70     vcx failed: one of its files is missing, the tool job did not get ready,\n"
         "         or it failed or had to be stopped while the application succeeded\n"
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
         "  TMPDIR             where the private session directory is made (default /tmp)\n";
  return out.str();
}

std::vector<std::string> module_list(const LaunchOptions& options) {
  std::vector<std::string> mods{"vclock"};
  if (options.trace_dir) mods.push_back("trace");
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
