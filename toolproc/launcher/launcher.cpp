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

#include "launcher/analyses.h"
#include "launcher/console.h"
#include "launcher/explore.h"
#include "launcher/planning.h"
#include "launcher/process.h"
#include "launcher/session.h"
#include "vcx/plugin_loader.h"

namespace vcx::launcher {

using std::chrono::milliseconds;

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
    const std::string plugin_dir = bindir.empty() ? std::string() : install_paths(bindir, env).plugin_dir;
    std::string text = usage_text(
        plugin_dir.empty() ? std::vector<std::string>{}
                           : available_plugins(plugin_dir, PluginKind::Module),
        plugin_dir.empty() ? std::vector<InstalledAnalysis>{} : installed_analyses(plugin_dir));
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

  Planned planned = make_plan(parsed.options, env, self_bindir());
  for (const std::string& note : planned.notes) say(note);
  if (!planned.plan) {
    say(planned.error);
    return planned.exit_code;
  }
  Plan& plan = *planned.plan;

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

