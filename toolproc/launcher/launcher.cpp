#include "launcher/launcher.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "launcher/process.h"
#include "launcher/session.h"
#include "launcher/stats.h"

namespace vcx::launcher {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// One write per line so that messages do not interleave with the ranks' output.
void write_line(int fd, const std::string& text) {
  const std::string line = text + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

void say(const std::string& text) { write_line(STDERR_FILENO, "vcx: " + text); }

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

// For -v: the commands as a shell would read them back.
std::string shell_quote(const std::vector<std::string>& words) {
  std::vector<std::string> quoted;
  for (const auto& w : words) {
    const bool plain = !w.empty() && std::all_of(w.begin(), w.end(), [](unsigned char c) {
      return std::isalnum(c) ||
             std::string_view("/._-=,:+@%").find(static_cast<char>(c)) != std::string_view::npos;
    });
    if (plain) {
      quoted.push_back(w);
      continue;
    }
    std::string q = "'";
    for (char c : w) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    quoted.push_back(q + "'");
  }
  return join(quoted, " ");
}

std::string seconds_text(milliseconds ms) {
  char buf[32];
  if (ms.count() % 1000 == 0)
    std::snprintf(buf, sizeof buf, "%lld s", static_cast<long long>(ms.count() / 1000));
  else
    std::snprintf(buf, sizeof buf, "%.3g s", static_cast<double>(ms.count()) / 1000.0);
  return buf;
}

milliseconds until(Clock::time_point now, Clock::time_point then) {
  if (then <= now) return milliseconds(0);
  // Round up: waking just before the deadline would only loop once more.
  return std::chrono::ceil<milliseconds>(then - now);
}

// Supervises one run. The Child and Session members clean up on every exit
// path: a job still running is killed with its group, the session removed.
class Supervisor {
 public:
  Supervisor(const Plan& plan, const Environment& env)
      : plan_(plan), env_(env), session_(Session::create(plan.session_parent)) {
    if (plan_.options.keep_session) session_.keep();
  }

  ~Supervisor() { reclaim_terminal(terminal_, app_.pid()); }

  int run() {
    SignalScope signals;
    signals_ = &signals;
    const int early = start_tools();
    if (early >= 0) return finish(early);
    const int ready = wait_ready();
    if (ready >= 0) return finish(ready);
    if (!start_app()) return finish(kExitToolFailure);
    supervise();
    return finish(exit_code());
  }

 private:
  // Returns an exit code when starting failed, else -1.
  int start_tools() {
    SpawnRequest req;
    req.argv = tool_command(plan_, session_.dir());
    req.file = req.argv[0];
    req.env = tool_environment(env_, session_.token()).entries();
    // The terminal's input belongs to the application. Not /dev/null: its end
    // of file is forwarded by mpiexec and can cost it a SIGPIPE (see Stream::Idle).
    req.stdin_mode = Stream::Idle;
    req.stdout_mode = Stream::ToStderr;
    if (plan_.options.verbose) say("tool job: " + shell_quote(req.argv));
    try {
      tool_ = Child::spawn(req);
    } catch (const std::exception& e) {
      say(std::string("cannot start the tool job: ") + e.what());
      return kExitToolFailure;
    }
    return -1;
  }

  int wait_ready() {
    const auto deadline = Clock::now() + plan_.timeouts.start;
    for (;;) {
      if (session_.ready()) return -1;
      if (tool_.poll()) {
        tool_failed_ = true;
        say("the tool job exited before it was ready (" + tool_.status()->describe() +
            "); its messages, if any, are above");
        return kExitToolFailure;
      }
      const auto now = Clock::now();
      if (now >= deadline) {
        tool_failed_ = true;
        say("the tool job was not ready after " + seconds_text(plan_.timeouts.start) + " (no " +
            session_.path("ready") + "); stopping it. Set VCX_START_TIMEOUT to wait longer");
        stop_tool();
        return kExitToolFailure;
      }
      // Short naps: the cores are shared with the tools starting up.
      const int sig = signals_->wait(std::min(milliseconds(10), until(now, deadline)));
      if (SignalScope::is_termination(sig)) {
        interrupted_ = sig;
        tool_.signal_group(sig);
        wait_tool(plan_.timeouts.interrupt_grace);
        if (tool_.running()) {
          tool_.signal_group(SIGKILL);
          tool_.wait();
        }
        return 128 + sig;
      }
    }
  }

  bool start_app() {
    SpawnRequest req;
    req.argv = app_command(plan_, preload_value(plan_.paths.interceptor, env_.get("LD_PRELOAD")));
    req.file = req.argv[0];
    req.env = app_environment(env_, session_.dir(), session_.token()).entries();
    // mpiexec forwards stdin only from the terminal's foreground group.
    terminal_ = foreground_terminal();
    req.terminal_fd = terminal_;
    if (plan_.options.verbose) say("application job: " + shell_quote(req.argv));
    try {
      app_ = Child::spawn(req);
    } catch (const std::exception& e) {
      terminal_ = -1;  // the child never ran: the terminal was not handed over
      say(std::string("cannot start the application job: ") + e.what());
      tool_failed_ = true;
      stop_tool();
      return false;
    }
    return true;
  }

  void supervise() {
    bool app_done = false, tool_done = false;
    // Time points "never" stand for unset deadlines.
    constexpr auto kNever = Clock::time_point::max();
    auto tool_stop_at = kNever, tool_kill_at = kNever, force_kill_at = kNever;
    bool tool_term_sent = false, tool_kill_sent = false;
    for (;;) {
      auto now = Clock::now();
      if (!app_done && terminal_ >= 0 && app_.poll_stopped()) suspend_with_app();
      if (!app_done && app_.poll()) {
        app_done = true;
        reclaim_terminal(terminal_, app_.pid());
        terminal_ = -1;
        tool_stop_at = now + plan_.timeouts.stop;
        mark_app_exited(*app_.status());
        if (plan_.options.verbose)
          say("the application job ended (" + app_.status()->describe() + ")");
      }
      if (!tool_done && tool_.poll()) {
        tool_done = true;
        tool_ended(app_done, tool_term_sent);
      }
      if (app_done && tool_done) return;

      if (app_done && !tool_done) {
        if (!tool_term_sent && now >= tool_stop_at) {
          say("the tool job did not finish within " + seconds_text(plan_.timeouts.stop) +
              " after the application; stopping it. Set VCX_STOP_TIMEOUT to wait longer");
          tool_failed_ = true;
          tool_.signal_group(SIGTERM);
          tool_term_sent = true;
          tool_kill_at = now + plan_.timeouts.kill_grace;
        } else if (tool_term_sent && !tool_kill_sent && now >= tool_kill_at) {
          say("the tool job did not stop within " + seconds_text(plan_.timeouts.kill_grace) +
              " of SIGTERM; killing it");
          tool_.signal_group(SIGKILL);
          tool_kill_sent = true;
        }
      }
      if (now >= force_kill_at) {
        say("the jobs did not end after " + signal_name(interrupted_) + "; killing them");
        kill_everything();
        force_kill_at = kNever;
      }

      // Sleep until a signal (SIGCHLD included) or the nearest deadline; the
      // cap only guards against a lost wake-up.
      auto next = now + milliseconds(250);
      if (app_done && !tool_done) {
        if (!tool_term_sent)
          next = std::min(next, tool_stop_at);
        else if (!tool_kill_sent)
          next = std::min(next, tool_kill_at);
      }
      next = std::min(next, force_kill_at);
      const int sig = signals_->wait(std::max(milliseconds(1), until(now, next)));
      if (!SignalScope::is_termination(sig)) continue;
      now = Clock::now();
      if (interrupted_ == 0) {
        interrupted_ = sig;
        if (plan_.options.verbose) say("got " + signal_name(sig) + "; passing it on to both jobs");
        if (app_.running()) app_.signal_group(sig);
        if (tool_.running()) tool_.signal_group(sig);
        force_kill_at = now + plan_.timeouts.interrupt_grace;
      } else {
        say("got " + signal_name(sig) + " again; killing both jobs");
        kill_everything();
        force_kill_at = kNever;
      }
    }
  }

  // Ctrl-Z stopped the application job: stop with it so that the shell gets
  // its terminal back, and on `fg` (or `bg`) let the application go on.
  void suspend_with_app() {
    reclaim_terminal(terminal_, app_.pid());
    ::kill(0, SIGTSTP);
    if (::tcgetpgrp(terminal_) == ::getpgrp()) give_terminal(terminal_, app_.pid());
    app_.signal_group(SIGCONT);
  }

  void tool_ended(bool app_done, bool stopped_by_us) {
    const ExitStatus status = *tool_.status();
    if (interrupted_ != 0 || stopped_by_us) return;
    if (!app_done) {
      if (!status.success()) {
        tool_failed_ = true;
        say("the tool job failed (" + status.describe() +
            "); the application's interceptors notice it and abort the job or let it run "
            "unanalysed; waiting for the application job");
      } else if (plan_.options.verbose) {
        say("the tool job ended before the application job");
      }
    } else if (!status.success()) {
      tool_failed_ = true;
      say("the tool job failed (" + status.describe() + ") after the application ended");
    }
  }

  // Tells the tools that no more application ranks will attach: a tool
  // still waiting for one (its rank died before MPI_Init) may stop waiting.
  // Written under a temporary name and renamed, so it appears complete.
  void mark_app_exited(const ExitStatus& status) {
    const std::string tmp = session_.path(".app-exited.tmp");
    if (FILE* f = std::fopen(tmp.c_str(), "w")) {
      std::fprintf(f, "%s %d\n", status.signaled ? "signal" : "exit", status.code);
      const bool ok = std::fclose(f) == 0;
      if (ok) std::rename(tmp.c_str(), session_.path("app-exited").c_str());
    }
  }

  void kill_everything() {
    if (app_.running()) app_.signal_group(SIGKILL);
    if (tool_.running()) tool_.signal_group(SIGKILL);
  }

  // Waits up to `limit` for the tool job to end (signals other than SIGCHLD
  // are ignored meanwhile: this is already the way out).
  void wait_tool(milliseconds limit) {
    const auto deadline = Clock::now() + limit;
    while (!tool_.poll()) {
      const auto now = Clock::now();
      if (now >= deadline) return;
      signals_->wait(std::min(milliseconds(250), until(now, deadline)));
    }
  }

  void stop_tool() {
    if (!tool_.running()) return;
    tool_.signal_group(SIGTERM);
    wait_tool(plan_.timeouts.kill_grace);
    if (tool_.running()) {
      tool_.signal_group(SIGKILL);
      tool_.wait();
    }
  }

  int exit_code() const {
    int code = app_.status() ? app_.status()->shell_code() : kExitToolFailure;
    // mpiexec sometimes reports success after a signal cut its ranks short;
    // an interrupted run must not look like a successful one.
    if (code == 0 && interrupted_ != 0) return 128 + interrupted_;
    if (code == 0 && tool_failed_) code = kExitToolFailure;
    return code;
  }

  int finish(int code) {
    // Tool processes that outlived their mpiexec would keep the session busy.
    if (tool_.started() && tool_.group_alive()) {
      if (plan_.options.verbose) say("killing leftover tool processes");
      tool_.signal_group(SIGKILL);
    }
    if (interrupted_ != 0 && app_.started() && app_.group_alive()) app_.signal_group(SIGKILL);

    const StatsReport stats = read_stats(session_.dir());
    const bool trouble = code != 0 || tool_failed_ || interrupted_ != 0 || has_rank_trouble(stats);
    if (plan_.options.verbose || trouble) {
      if (interrupted_ != 0) say("interrupted by " + signal_name(interrupted_));
      if (app_.status() && !app_.status()->success())
        say("the application job ended with " + app_.status()->describe());
      if (app_.started())
        for (const auto& line : summary_lines(stats, plan_.options.nprocs, plan_.trace_dir))
          say(line);
    }
    if (plan_.options.keep_session) {
      say("session directory kept: " + session_.dir());
    } else if (std::string err = session_.remove(); !err.empty()) {
      say(err);
    }
    return code;
  }

  const Plan& plan_;
  const Environment& env_;
  Session session_;
  SignalScope* signals_ = nullptr;
  Child tool_;
  Child app_;
  int terminal_ = -1;
  int interrupted_ = 0;
  bool tool_failed_ = false;
};

}  // namespace

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

std::vector<std::string> tool_command(const Plan& plan, const std::string& session_dir) {
  std::vector<std::string> cmd{plan.paths.mpiexec,
                               "-n",
                               std::to_string(plan.options.nprocs),
                               plan.paths.toolproc,
                               "--session",
                               session_dir,
                               "--plugin-dir",
                               plan.paths.plugin_dir,
                               "--translators",
                               "mpi",
                               "--modules",
                               join(module_list(plan.options), ",")};
  if (plan.trace_dir) {
    cmd.push_back("--option");
    cmd.push_back("trace.dir=" + *plan.trace_dir);
  }
  if (plan.options.no_stall) cmd.push_back("--no-stall");
  return cmd;
}

std::vector<std::string> app_command(const Plan& plan, const std::string& preload) {
  // LD_PRELOAD goes to the ranks only (-genv): mpiexec and its proxies are
  // not MPI programs and must not load the interceptor and MPI with it.
  std::vector<std::string> cmd{
      plan.paths.mpiexec, "-genv", "LD_PRELOAD", preload, "-n", std::to_string(plan.options.nprocs),
      plan.program};
  cmd.insert(cmd.end(), plan.options.program_args.begin(), plan.options.program_args.end());
  return cmd;
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

Environment app_environment(const Environment& base, const std::string& session_dir,
                            const std::string& token) {
  Environment env = base;
  env.set("VCX_SESSION_DIR", session_dir);
  env.set("VCX_SESSION_TOKEN", token);
  return env;
}

int run(const Plan& plan, const Environment& env) {
  Supervisor supervisor(plan, env);
  return supervisor.run();
}

int launcher_main(int argc, char** argv, char** envp) {
  const Environment env(envp);
  const std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);

  const ParseResult parsed = parse_command_line(args);
  if (parsed.options.help) {
    std::string text = usage_text();
    if (!text.empty() && text.back() == '\n') text.pop_back();
    write_line(STDOUT_FILENO, text);
    return 0;
  }
  if (!parsed.ok()) {
    say(parsed.error);
    return kExitUsage;
  }

  Plan plan;
  plan.options = parsed.options;
  if (auto err = read_timeouts(env, &plan.timeouts)) {
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

  if (plan.options.trace_dir) {
    try {
      plan.trace_dir = prepare_output_dir(*plan.options.trace_dir);
    } catch (const std::exception& e) {
      say(std::string("--trace: ") + e.what());
      return kExitUsage;
    }
  }
  plan.session_parent = session_parent(env.get("TMPDIR"));

  try {
    return run(plan, env);
  } catch (const std::exception& e) {
    say(e.what());
    return kExitToolFailure;
  }
}

}  // namespace vcx::launcher
