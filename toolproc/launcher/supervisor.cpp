#include "launcher/supervisor.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "launcher/analysis_watch.h"
#include "launcher/commands.h"
#include "launcher/console.h"
#include "launcher/process.h"
#include "launcher/progress_line.h"
#include "launcher/run_reports.h"
#include "launcher/session.h"
#include "launcher/stats.h"
#include "launcher/where_report.h"
#include "vcx/atomic_file.h"
#include "vcx/session_layout.h"

namespace vcx::launcher {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// How much longer than VCX_START_TIMEOUT a rank waits for its tool to listen.
constexpr milliseconds kAttachSlack{30'000};
// How long vcx-run waits for the tools' answers to "where are the ranks".
constexpr milliseconds kWhereWait{10'000};

const EndingCalls& ending_calls(ProgramModel model) {
  switch (model) {
    case ProgramModel::Shmem:
      return kShmemEndingCalls;
    case ProgramModel::Hybrid:
      return kHybridEndingCalls;
    default:
      return kMpiEndingCalls;
  }
}

// --leave-stopped: what is left running, and how to end it.
std::string left_stopped_text(const RunVerdict& v) {
  std::string who;
  for (std::size_t i = 0; i < v.processes.size(); ++i) {
    const auto& [rank, pid] = v.processes[i];
    who += (i == 0 ? "" : i + 1 == v.processes.size() ? " and " : ", ");
    who += "rank " + std::to_string(rank) +
           (pid > 0 ? " is pid " + std::to_string(pid) : std::string(" (pid unknown)"));
  }
  return "the run is left as it is (--leave-stopped)" + (who.empty() ? "" : ": " + who) +
         "; attach a debugger (gdb -p PID), then end the run with Ctrl-C";
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
      : plan_(plan),
        env_(env),
        session_(Session::create(plan.session_parent)),
        progress_(session_.dir(), plan.options.nprocs) {
    if (plan_.options.keep_session) session_.keep();
  }

  ~Supervisor() { reclaim_terminal(terminal_, app_.pid()); }

  int run() {
    SignalScope signals;
    signals_ = &signals;
    const int early = start_tools();
    if (early >= 0) return finish(early);
    // Both jobs start at once: each rank's interceptor waits in MPI_Init
    // until its tool listens, so the tools' start-up overlaps the
    // application's instead of adding to it.
    if (!start_app()) return finish(kExitToolFailure);
    const int ready = wait_ready();
    if (ready >= 0) return finish(ready);
    supervise();
    return finish(exit_code());
  }

 private:
  // Returns an exit code when starting failed, else -1.
  int start_tools() {
    std::vector<std::string> dirs = plan_.options.analyses;
    if (plan_.matches_record) dirs.emplace_back(session::kMatchesRecord);
    for (const std::string& analysis : dirs) {
      const std::string dir = session_.dir() + "/" + analysis;
      if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
        say("cannot create " + dir + ": " + std::strerror(errno));
        return kExitToolFailure;
      }
    }
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
        stop_app_unattached();
        say("the tool job exited before it was ready (" + tool_.status()->describe() +
            "); its messages, if any, are above");
        return kExitToolFailure;
      }
      const auto now = Clock::now();
      if (now >= deadline) {
        tool_failed_ = true;
        // A tool job that never got ready holds nothing worth saving; SIGKILL
        // also spares the user mpiexec's report of terminated ranks.
        tool_.signal_group(SIGKILL);
        tool_.wait();
        stop_app_unattached();
        say("the tool job (" + plan_.paths.mpiexec + " -n " +
            std::to_string(plan_.options.nprocs) + " " + plan_.paths.toolproc +
            ") was not ready after " + seconds_text(plan_.timeouts.start) +
            "; stopped it. Set VCX_START_TIMEOUT to wait longer");
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
        stop_app_unattached();
        return 128 + sig;
      }
    }
  }

  // The application job, started beside a tool job that never got ready:
  // its ranks wait for their tools in MPI_Init (or never call MPI), so it
  // is stopped without a report of its own.
  void stop_app_unattached() {
    if (!app_.started()) return;
    if (app_.running()) app_.signal_group(SIGKILL);
    app_.wait();
    reclaim_terminal(terminal_, app_.pid());
    terminal_ = -1;
    app_stopped_unattached_ = true;
  }

  bool start_app() {
    SpawnRequest req;
    req.argv = app_command(plan_, preload_value(interceptor_of(plan_), env_.get("LD_PRELOAD")));
    req.file = req.argv[0];
    Environment app_env = app_environment(env_, session_.dir(), session_.token(), plan_.options);
    // Ranks may reach MPI_Init before their tools listen: they wait for them
    // as long as vcx-run does, and a little longer.
    if (!env_.get_nonempty("VCX_ATTACH_TIMEOUT_MS"))
      app_env.set("VCX_ATTACH_TIMEOUT_MS",
                  std::to_string(plan_.timeouts.start.count() + kAttachSlack.count()));
    req.env = app_env.entries();
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
    AnalysisWatch watch(plan_, session_.dir());
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
        app_ended_at_ = now;
        mark_app_exited(*app_.status());
        if (plan_.options.verbose)
          say("the application job ended (" + app_.status()->describe() + ")");
      }
      if (!tool_done && tool_.poll()) {
        tool_done = true;
        tool_ended_at_ = now;
        tool_ended(app_done, tool_term_sent);
      }
      if (app_done && tool_done) {
        clear_progress();
        return;
      }
      if (plan_.progress && !app_done)
        if (auto line = progress_.due(now)) write_progress_line("\r\033[K" + *line);
      if (!app_done && interrupted_ == 0 && !analysis_ended_)
        if (std::optional<RunVerdict> v = watch.check()) {
          // An analysis found what ends the run (a deadlock): both jobs are
          // told as on Ctrl-C, and the status is the analysis's.
          clear_progress();
          std::fputs(v->text.c_str(), stderr);
          std::fflush(stderr);
          analysis_ended_ = v->exit_status;
          analysis_ended_why_ = v->why;
          write_file_atomically(session::file(session_.dir(), session::kRunEnded), v->why + "\n",
                                nullptr);
          if (plan_.options.leave_stopped) {
            // For a debugger: nothing is ended until the user interrupts.
            say(left_stopped_text(*v));
          } else {
            say("ending the run (exit status " + std::to_string(v->exit_status) + ")");
            if (app_.running()) app_.signal_group(SIGTERM);
            if (tool_.running()) tool_.signal_group(SIGTERM);
            force_kill_at = now + plan_.timeouts.interrupt_grace;
          }
        }

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
      // cap only guards against a lost wake-up (and paces the progress line).
      auto next = now + milliseconds(250);
      if (app_done && !tool_done) {
        if (!tool_term_sent)
          next = std::min(next, tool_stop_at);
        else if (!tool_kill_sent)
          next = std::min(next, tool_kill_at);
      }
      next = std::min(next, force_kill_at);
      const int sig = signals_->wait(std::max(milliseconds(1), until(now, next)));
      if (sig == SIGUSR1 && !app_done) {
        const auto lines =
            where_the_ranks_are(session_.dir(), plan_.options.nprocs, ++where_requests_, kWhereWait);
        clear_progress();
        for (const std::string& line : lines) say(line);
      }
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

  // --explore's record of the wildcard receives, out of the session.
  void copy_matches_record() {
    std::error_code ec;
    const std::filesystem::path from = session::file(session_.dir(), session::kMatchesRecord);
    const std::filesystem::path to = *plan_.matches_record;
    for (const auto& entry : std::filesystem::directory_iterator(from, ec))
      std::filesystem::copy_file(entry.path(), to / entry.path().filename(),
                                 std::filesystem::copy_options::overwrite_existing, ec);
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
    if (interrupted_ != 0 || analysis_ended_ || stopped_by_us) return;
    if (!app_done) {
      if (!status.success()) {
        tool_failed_ = true;
        say("the tool job failed (" + status.describe() + "); " +
            (continue_on_tool_failure()
                 ? "the application runs on unanalysed (--on-tool-failure=continue)"
                 : "the application's interceptors abort it (--on-tool-failure=continue lets "
                   "it run on unanalysed)"));
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
    // Private (mode 0600) like everything in the session: vcx-run keeps the
    // user's umask for the application.
    write_file_atomically(session::file(session_.dir(), session::kAppExited),
                          std::string(status.signaled ? "signal " : "exit ") +
                              std::to_string(status.code) + "\n",
                          nullptr);
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
    if (analysis_ended_) return *analysis_ended_;
    int code = app_.status() ? app_.status()->shell_code() : kExitToolFailure;
    // mpiexec sometimes reports success after a signal cut its ranks short;
    // an interrupted run must not look like a successful one.
    if (code == 0 && interrupted_ != 0) return 128 + interrupted_;
    // Asked to run on unanalysed, the user gets the application's status.
    if (code == 0 && tool_failed_ && !continue_on_tool_failure()) code = kExitToolFailure;
    return code;
  }

  bool continue_on_tool_failure() const {
    return plan_.options.on_tool_failure == OnToolFailure::Continue;
  }

  int finish(int code) {
    // Tool processes that outlived their mpiexec would keep the session busy.
    if (tool_.started() && tool_.group_alive()) {
      if (plan_.options.verbose) say("killing leftover tool processes");
      tool_.signal_group(SIGKILL);
    }
    if ((interrupted_ != 0 || analysis_ended_) && app_.started() && app_.group_alive())
      app_.signal_group(SIGKILL);

    const bool app_ran = app_.started() && !app_stopped_unattached_;
    if (app_ran) code = report_analyses(plan_, session_.dir(), code);
    if (app_ran && plan_.options.view && plan_.trace_dir) write_view(plan_, env_, *plan_.trace_dir);
    if (plan_.matches_record) copy_matches_record();
    StatsReport stats = read_stats(session_.dir());
    if (app_ended_at_ && tool_ended_at_)
      stats.tools_after_app_ns = static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(
              std::max(*tool_ended_at_ - *app_ended_at_, Clock::duration::zero()))
              .count());
    const bool trouble = code != 0 || tool_failed_ || interrupted_ != 0 || has_rank_trouble(stats);
    if (analysis_ended_) say("the run was ended because of " + analysis_ended_why_);
    if (plan_.options.verbose || (trouble && !analysis_ended_)) {
      if (interrupted_ != 0) say("interrupted by " + signal_name(interrupted_));
      if (app_ran && app_.status() && !app_.status()->success())
        say(std::string("the application job ") +
            (app_.status()->signaled ? "was " : "ended with ") + app_.status()->describe());
      if (app_ran)
        for (const auto& line :
             summary_lines(stats, plan_.options.nprocs, plan_.trace_dir,
                           ending_calls(plan_.model)))
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
  // An analysis ended the run (AnalysisWatch): vcx-run's status.
  std::optional<int> analysis_ended_;
  std::string analysis_ended_why_;
  std::uint64_t where_requests_ = 0;
  bool app_stopped_unattached_ = false;  // stopped because the tool job never got ready
  ProgressLine progress_;
  bool tool_failed_ = false;
  // When supervise() saw each job end: the tools' lag at the end of the run.
  std::optional<Clock::time_point> app_ended_at_, tool_ended_at_;
};

}  // namespace

int run(const Plan& plan, const Environment& env) {
  Supervisor supervisor(plan, env);
  return supervisor.run();
}

}  // namespace vcx::launcher
