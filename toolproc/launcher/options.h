// The vcx-run command line: mpiexec-like, everything from the program name on
// belongs to the program.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace vcx::launcher {

// Exit codes of vcx-run itself (otherwise it returns the application's).
inline constexpr int kExitUsage = 64;        // bad command line or environment setting
inline constexpr int kExitToolFailure = 70;  // vcx could not do its part
inline constexpr int kExitNotFound = 127;    // the program cannot be run

struct LaunchOptions {
  int nprocs = 0;
  std::optional<std::string> trace_dir;  // as given
  bool no_stall = false;
  bool keep_session = false;
  bool verbose = false;
  bool help = false;
  std::vector<std::string> extra_modules;  // from --modules, in order, split at commas
  std::string program;
  std::vector<std::string> program_args;
};

struct ParseResult {
  LaunchOptions options;
  std::string error;  // one line, empty on success
  bool ok() const { return error.empty(); }
};

// `args` excludes argv[0].
ParseResult parse_command_line(const std::vector<std::string>& args);

// The full --help text.
std::string usage_text();

// The tool modules to load: vclock, trace when tracing, then --modules,
// without duplicates.
std::vector<std::string> module_list(const LaunchOptions& options);

// A duration in seconds from the environment ("60", "0.5"); nullopt when
// `text` is not a non-negative number.
std::optional<double> parse_seconds(const std::string& text);

}  // namespace vcx::launcher
