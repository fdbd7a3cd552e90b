#include "launcher/launcher.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "launcher/process.h"
#include "launcher/explore.h"
#include "launcher/matches_report.h"
#include "launcher/race_report.h"
#include "vcx/chaos_settings.h"
#include "launcher/session.h"
#include "launcher/stats.h"
#include "vcx/atomic_file.h"
#include "vcx/plugin_loader.h"
#include "vcx/session_layout.h"

namespace vcx::launcher {
namespace {

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

// Whether the progress line is on the terminal (it is cleared before any
// other message).
bool g_progress_shown = false;

void clear_progress() {
  if (!g_progress_shown) return;
  const char clear[] = "\r\033[K";
  [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, clear, sizeof clear - 1);
  g_progress_shown = false;
}

void say(const std::string& text) {
  clear_progress();
  write_line(STDERR_FILENO, "vcx: " + text);
}

std::string count_text(double v) {
  char buf[32];
  if (v >= 1e9)
    std::snprintf(buf, sizeof buf, "%.2f G ", v / 1e9);
  else if (v >= 1e6)
    std::snprintf(buf, sizeof buf, "%.2f M ", v / 1e6);
  else if (v >= 1e4)
    std::snprintf(buf, sizeof buf, "%.1f k ", v / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f ", v);
  return buf;
}

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

std::string absolute_path(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char cwd[4096];
  if (!::getcwd(cwd, sizeof cwd)) return path;
  return std::string(cwd) + "/" + path;
}

// Where the tools record wildcard receives for --explore, in the session.
constexpr const char* kMatchesRecordDir = "matches-record";
// How much longer than VCX_START_TIMEOUT a rank waits for its tool to listen.
constexpr milliseconds kAttachSlack{30'000};
// How long vcx-run waits for the tools' answers to "where are the ranks".
constexpr milliseconds kWhereWait{10'000};

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
    if (plan_.matches_record) dirs.push_back(kMatchesRecordDir);
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
      if (plan_.progress && !app_done) show_progress(now);

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
      if (sig == SIGUSR1 && !app_done) report_where();
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
    const std::filesystem::path from = session_.dir() + "/" + kMatchesRecordDir;
    const std::filesystem::path to = *plan_.matches_record;
    for (const auto& entry : std::filesystem::directory_iterator(from, ec))
      std::filesystem::copy_file(entry.path(), to / entry.path().filename(),
                                 std::filesystem::copy_options::overwrite_existing, ec);
  }

  // SIGUSR1: where each rank is. The tools answer a numbered request in the
  // session directory with the last call they read and their rank's stacks.
  void report_where() {
    const std::uint64_t number = ++where_requests_;
    write_file_atomically(session::file(session_.dir(), session::kWhereRequest),
                          std::to_string(number) + "\n", nullptr);
    const int ranks = plan_.options.nprocs;
    std::vector<std::string> answers(static_cast<std::size_t>(ranks));
    std::vector<bool> have(static_cast<std::size_t>(ranks), false);
    const auto give_up = Clock::now() + kWhereWait;
    for (int left = ranks; left > 0 && Clock::now() < give_up;) {
      for (int r = 0; r < ranks; ++r) {
        const auto i = static_cast<std::size_t>(r);
        if (have[i]) continue;
        const std::string path =
            session::where_answer(session_.dir(), static_cast<std::uint32_t>(r), number);
        std::ifstream in(path);
        if (!in) continue;
        std::stringstream text;
        text << in.rdbuf();
        answers[i] = text.str();
        have[i] = true;
        --left;
        std::remove(path.c_str());
      }
      if (left > 0) std::this_thread::sleep_for(milliseconds(50));
    }
    clear_progress();
    say("where the ranks are:");
    for (int r = 0; r < ranks; ++r) {
      const auto i = static_cast<std::size_t>(r);
      if (!have[i]) {
        say("  rank " + std::to_string(r) + ": no answer from its tool within " +
            seconds_text(kWhereWait));
        continue;
      }
      std::istringstream lines(answers[i]);
      for (std::string line; std::getline(lines, line);) say("  " + line);
    }
    say(kWhereEnd);
  }

  // The progress line: from the tools' progress-<rank> files, once a second
  // after the first few, on stderr (a terminal: plan_.progress says so).
  void show_progress(Clock::time_point now) {
    if (progress_start_ == Clock::time_point{}) {
      progress_start_ = now;
      progress_next_ = now + std::chrono::seconds(3);
    }
    if (now < progress_next_) return;
    progress_next_ = now + std::chrono::seconds(1);
    std::uint64_t events = 0;
    int finished = 0;
    for (int r = 0; r < plan_.options.nprocs; ++r) {
      std::ifstream in(session::progress(session_.dir(), static_cast<std::uint32_t>(r)));
      unsigned long long n = 0;
      std::string state;
      if (in >> n >> state) {
        events += n;
        if (state == "finalized" || state == "crashed") ++finished;
      }
    }
    const double secs = std::chrono::duration<double>(now - progress_start_).count();
    const double rate =
        progress_last_time_ > 0 ? static_cast<double>(events - progress_last_events_) /
                                      (secs - progress_last_time_)
                                : 0.0;
    progress_last_events_ = events;
    progress_last_time_ = secs;
    char head[48];
    std::snprintf(head, sizeof head, "\r\033[Kvcx: %.0f s, ", secs);
    const std::string rate_part =
        rate > 0 ? count_text(rate) + "events/s, " : std::string();
    const std::string line = std::string(head) + count_text(static_cast<double>(events)) +
                             "events, " + rate_part + std::to_string(finished) + " of " +
                             std::to_string(plan_.options.nprocs) + " ranks finished";
    [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, line.data(), line.size());
    g_progress_shown = true;
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
    int code = app_.status() ? app_.status()->shell_code() : kExitToolFailure;
    // mpiexec sometimes reports success after a signal cut its ranks short;
    // an interrupted run must not look like a successful one.
    if (code == 0 && interrupted_ != 0) return 128 + interrupted_;
    // Asked to run on unanalysed, the user gets the application's status.
    if (code == 0 && tool_failed_ && !continue_on_tool_failure()) code = kExitToolFailure;
    return code;
  }

  bool continue_on_tool_failure() const { return plan_.options.on_tool_failure == "continue"; }

  int finish(int code) {
    // Tool processes that outlived their mpiexec would keep the session busy.
    if (tool_.started() && tool_.group_alive()) {
      if (plan_.options.verbose) say("killing leftover tool processes");
      tool_.signal_group(SIGKILL);
    }
    if (interrupted_ != 0 && app_.started() && app_.group_alive()) app_.signal_group(SIGKILL);

    const bool app_ran = app_.started() && !app_stopped_unattached_;
    if (app_ran) code = report_analyses(code);
    if (app_ran && plan_.options.view && plan_.trace_dir) write_view(*plan_.trace_dir);
    if (plan_.matches_record) copy_matches_record();
    StatsReport stats = read_stats(session_.dir());
    if (app_ended_at_ && tool_ended_at_)
      stats.tools_after_app_ns = static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(
              std::max(*tool_ended_at_ - *app_ended_at_, Clock::duration::zero()))
              .count());
    const bool trouble = code != 0 || tool_failed_ || interrupted_ != 0 || has_rank_trouble(stats);
    if (plan_.options.verbose || trouble) {
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

  // --view: the trace's page, by vcx-trace beside this program.
  void write_view(const std::string& dir) {
    SpawnRequest req;
    req.file = plan_.paths.trace_tool;
    req.argv = {req.file, "view", dir};
    // The analyses' findings of the run go into the page too.
    if (plan_.options.report_file && !plan_.options.analyses.empty())
      req.argv.insert(req.argv.end(), {"--report", *plan_.options.report_file});
    req.env = env_.entries();
    req.stdin_mode = Stream::DevNull;
    req.stdout_mode = Stream::DevNull;
    try {
      Child view = Child::spawn(req);
      view.wait();
      if (view.status() && view.status()->success())
        say("view of the run: " + dir + "/view.html");
      else
        say("--view: vcx-trace view " + dir + " failed (" +
            (view.status() ? view.status()->describe() : std::string("no status")) +
            "); the trace is there for another try");
    } catch (const std::runtime_error& e) {
      say(std::string("--view: ") + e.what());
    }
  }

  // The analyses' reports: text on stderr, JSON in --report. Returns the
  // exit code, which --race-exit-code replaces when races were found.
  int report_analyses(int code) {
    if (plan_.options.analyses.empty()) return code;
    // Source lines come from the files on this machine, never from a
    // debuginfod server.
    ::unsetenv("DEBUGINFOD_URLS");
    nlohmann::json findings = nlohmann::json::array();
    std::size_t races = 0;
    if (runs_analysis(plan_.options, "race")) {
      const RaceReport race = build_race_report(session_.dir() + "/race", plan_.options.nprocs);
      for (const auto& p : race.problems) say(p);
      std::fputs(race.text.c_str(), stderr);
      findings.insert(findings.end(), race.findings.begin(), race.findings.end());
      races = race.races;
    }
    if (runs_analysis(plan_.options, "matches")) {
      const MatchesReport m =
          build_matches_report(session_.dir() + "/matches", plan_.options.nprocs);
      for (const auto& p : m.problems) say(p);
      std::fputs(m.text.c_str(), stderr);
      findings.insert(findings.end(), m.findings.begin(), m.findings.end());
    }
    std::fflush(stderr);
    if (plan_.options.report_file) {
      std::vector<std::string> program{plan_.options.program};
      program.insert(program.end(), plan_.options.program_args.begin(),
                     plan_.options.program_args.end());
      std::ofstream f(*plan_.options.report_file);
      f << report_document(program, plan_.options.nprocs, findings).dump(2) << '\n';
      if (!f) say("cannot write the report " + *plan_.options.report_file);
    }
    if (races > 0 && plan_.options.race_exit_code && code != kExitToolFailure)
      return *plan_.options.race_exit_code;
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
  std::uint64_t where_requests_ = 0;
  bool app_stopped_unattached_ = false;  // stopped because the tool job never got ready
  Clock::time_point progress_start_{}, progress_next_{};
  std::uint64_t progress_last_events_ = 0;
  double progress_last_time_ = 0;
  bool tool_failed_ = false;
  // When supervise() saw each job end: the tools' lag at the end of the run.
  std::optional<Clock::time_point> app_ended_at_, tool_ended_at_;
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

namespace {

// Hydra's own placement options, the same for both jobs so that tool rank i
// lands on the node of application rank i.
void add_hydra_layout(const Plan& plan, std::vector<std::string>& cmd) {
  if (plan.options.hostfile) {
    cmd.push_back("-f");
    cmd.push_back(*plan.options.hostfile);
  }
  if (plan.options.hosts) {
    cmd.push_back("-hosts");
    cmd.push_back(*plan.options.hosts);
  }
  if (plan.options.ppn > 0) {
    cmd.push_back("-ppn");
    cmd.push_back(std::to_string(plan.options.ppn));
  }
}

void append(std::vector<std::string>& cmd, const std::vector<std::string>& more) {
  cmd.insert(cmd.end(), more.begin(), more.end());
}

}  // namespace

std::vector<std::string> tool_command(const Plan& plan, const std::string& session_dir) {
  // The tool job is always an MPICH job, whoever starts the application.
  std::vector<std::string> cmd{plan.paths.mpiexec};
  add_hydra_layout(plan, cmd);
  cmd.push_back("-n");
  cmd.push_back(std::to_string(plan.options.nprocs));
  append(cmd, binding_args(LauncherKind::Hydra, plan.placement.tool_cores, plan.options.nprocs));
  append(cmd, {plan.paths.toolproc, "--session", session_dir, "--plugin-dir",
               plan.paths.plugin_dir, "--translators",
               translators_of(plan.model), "--modules",
               join(module_list(plan.options), ",")});
  if (plan.trace_dir) {
    cmd.push_back("--option");
    cmd.push_back("trace.dir=" + *plan.trace_dir);
  }
  for (const std::string& analysis : plan.options.analyses)
    append(cmd, {"--option", analysis + ".dir=" + session_dir + "/" + analysis});
  // In the session directory, which every node sees; vcx-run copies it out.
  if (plan.matches_record && runs_analysis(plan.options, "matches"))
    append(cmd, {"--option", "matches.record=" + session_dir + "/" + kMatchesRecordDir});
  if (const auto& mib = plan.options.clock_diff_mib)
    append(cmd, {"--option", "vclock.diff-bytes=" + std::to_string(*mib << 20)});
  for (const std::string& kv : plan.options.plugin_options) append(cmd, {"--option", kv});
  if (!plan.options.stall.empty()) append(cmd, {"--stall", plan.options.stall});
  if (const auto& n = plan.options.tool_backlog)
    append(cmd, {"--max-backlog", std::to_string(*n)});
  if (plan.options.shmem_flags == "off") cmd.push_back("--no-shmem-flags");
  if (tools_share_app_cores(plan.placement)) cmd.push_back("--shared-core");
  if (plan.options.app_yield != "auto") append(cmd, {"--app-yield", plan.options.app_yield});
  if (const auto& ns = plan.options.tool_spin_ns) append(cmd, {"--spin-ns", std::to_string(*ns)});
  if (const auto& ns = plan.options.app_spin_ns) append(cmd, {"--app-spin-ns", std::to_string(*ns)});
  if (plan.progress) cmd.push_back("--progress");
  if (plan.options.channel != "shm") append(cmd, {"--channel", plan.options.channel});
  if (plan.options.transport != "tcp") append(cmd, {"--transport", plan.options.transport});
  // Several nodes: the start-up exchange goes over MPI, not through files
  // a shared file system may show late.
  if (plan.spans_nodes) append(cmd, {"--bind", "0.0.0.0", "--mpi-start"});
  return cmd;
}

std::vector<std::string> app_command(const Plan& plan, const std::string& preload) {
  const std::string n = std::to_string(plan.options.nprocs);
  std::vector<std::string> cmd;
  switch (plan.launcher) {
    case LauncherKind::Hydra:
      // LD_PRELOAD goes to the ranks only (-genv): mpiexec and its proxies
      // are not MPI programs and must not load the interceptor and MPI with it.
      cmd.push_back(plan.paths.mpiexec);
      add_hydra_layout(plan, cmd);
      append(cmd, plan.options.launcher_args);
      for (const auto& [name, value] : plan.options.app_env) append(cmd, {"-genv", name, value});
      if (plan.options.prepend_rank) cmd.push_back("-prepend-rank");
      if (plan.options.bind_to) append(cmd, {"-bind-to", *plan.options.bind_to});
      append(cmd, {"-genv", "LD_PRELOAD", preload, "-n",
                   std::to_string(plan.options.more_programs.empty() ? plan.options.nprocs
                                                                     : plan.options.first_nprocs)});
      append(cmd, binding_args(LauncherKind::Hydra, plan.placement.app_cores, plan.options.nprocs));
      break;
    case LauncherKind::Slurm:
      // --export: the tasks get LD_PRELOAD, srun itself does not.
      append(cmd, {plan.launcher_program, "-n", n});
      append(cmd, plan.options.launcher_args);
      if (plan.options.prepend_rank) cmd.push_back("--label");
      if (plan.options.bind_to) cmd.push_back("--cpu-bind=" + *plan.options.bind_to);
      if (plan.options.ppn > 0) cmd.push_back("--ntasks-per-node=" + std::to_string(plan.options.ppn));
      append(cmd, binding_args(LauncherKind::Slurm, plan.placement.app_cores, plan.options.nprocs));
      {
        std::string exports = "--export=ALL";
        for (const auto& [name, value] : plan.options.app_env) exports += "," + name + "=" + value;
        cmd.push_back(exports + ",LD_PRELOAD=" + preload);
      }
      break;
    case LauncherKind::OpenMpi: {
      cmd.push_back(plan.launcher_program);
      // oshrun refuses to start as root unless told; vcx-run runs as whoever
      // calls it, in containers often root.
      if (plan.as_root) cmd.push_back("--allow-run-as-root");
      // Like hydra, start as many ranks as asked whatever the core count.
      cmd.push_back("--oversubscribe");
      // Open MPI 4.1's rdma one-sided component crashes shmem_finalize in
      // its memory hooks; UCX's does not.
      append(cmd, {"--mca", "osc", "ucx"});
      {
        std::string err;
        append(cmd, openmpi_hosts(plan.options, &err));
      }
      if (plan.options.ppn > 0) append(cmd, {"--npernode", std::to_string(plan.options.ppn)});
      append(cmd, plan.options.launcher_args);
      for (const auto& [name, value] : plan.options.app_env) append(cmd, {"-x", name + "=" + value});
      if (plan.options.prepend_rank) cmd.push_back("--tag-output");
      // -x NAME exports the variable's value to the ranks (only those on
      // this node inherit the environment); the token stays off the command
      // line. LD_PRELOAD goes to the ranks only, not to oshrun's daemons.
      if (!plan.options.forced_matches.empty()) append(cmd, {"-x", "VCX_FORCE_MATCH"});
      append(cmd, {"-x", "VCX_SESSION_DIR", "-x", "VCX_SESSION_TOKEN", "-x",
                   "VCX_ON_TOOL_FAILURE", "-x", "LD_PRELOAD=" + preload, "-n", n});
      const int per_node = plan.options.ppn > 0 ? plan.options.ppn : plan.options.nprocs;
      std::vector<std::string> binding =
          binding_args(LauncherKind::OpenMpi, plan.placement.app_cores, per_node);
      if (binding.empty()) binding = {"--bind-to", plan.options.bind_to.value_or("none")};
      append(cmd, binding);
      break;
    }
  }
  cmd.push_back(plan.program);
  cmd.insert(cmd.end(), plan.options.program_args.begin(), plan.options.program_args.end());
  // MPMD (hydra only): each further program with its ranks and variables.
  for (std::size_t i = 0; i < plan.options.more_programs.size(); ++i) {
    const AppSegment& seg = plan.options.more_programs[i];
    append(cmd, {":", "-n", std::to_string(seg.nprocs)});
    for (const auto& [name, value] : seg.env) append(cmd, {"-env", name, value});
    cmd.push_back(i < plan.more_programs.size() ? plan.more_programs[i] : seg.program);
    cmd.insert(cmd.end(), seg.program_args.begin(), seg.program_args.end());
  }
  return cmd;
}

const char* translators_of(ProgramModel model) {
  switch (model) {
    case ProgramModel::Shmem:
      return "shmem";
    case ProgramModel::Hybrid:
      return "mpi,shmem";
    default:
      return "mpi";
  }
}

const std::string& interceptor_of(const Plan& plan) {
  switch (plan.model) {
    case ProgramModel::Shmem:
      return plan.paths.shmem_interceptor;
    case ProgramModel::Hybrid:
      return plan.paths.hybrid_interceptor;
    default:
      return plan.paths.interceptor;
  }
}

bool spans_nodes(const LaunchOptions& options, const Environment& env, std::string* error) {
  if (options.hostfile || options.hosts) {
    const HostList hosts = hosts_of(options);
    if (!hosts.error.empty()) {
      *error = hosts.error;
      return false;
    }
    return hosts.hosts.size() > 1;
  }
  for (const char* var : {"SLURM_JOB_NUM_NODES", "SLURM_NNODES"}) {
    if (auto v = env.get_nonempty(var)) return std::atoi(v->c_str()) > 1;
  }
  return false;
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

// The longest --force-match list passed in the environment itself.
constexpr std::size_t kForceMatchInline = 4096;

Environment app_environment(const Environment& base, const std::string& session_dir,
                            const std::string& token, const LaunchOptions& options) {
  Environment env = base;
  // The interceptor reads what to do when its tool fails from here.
  env.set("VCX_ON_TOOL_FAILURE", options.on_tool_failure);
  env.set("VCX_SESSION_DIR", session_dir);
  env.set("VCX_SESSION_TOKEN", token);
  // The interceptor of each rank applies the matches forced on it.
  std::string forced;
  for (const auto& f : options.forced_matches)
    forced += (forced.empty() ? "" : ",") + std::to_string(f.rank) + ":" +
              std::to_string(f.index) + "=" + std::to_string(f.source);
  // A long list (a replay pinning many receives) goes through a file: one
  // environment string may not exceed 128 KiB.
  if (forced.empty()) {
    env.unset("VCX_FORCE_MATCH");
  } else if (forced.size() <= kForceMatchInline) {
    env.set("VCX_FORCE_MATCH", forced);
  } else {
    const std::string path = session::file(session_dir, session::kForceMatch);
    std::ofstream(path) << forced << '\n';
    env.set("VCX_FORCE_MATCH", "@" + path);
  }
  return env;
}

int run(const Plan& plan, const Environment& env) {
  Supervisor supervisor(plan, env);
  return supervisor.run();
}

namespace {

// The tools load modules by name from the plugin directory; a name without
// a file there is a usage error, said once here rather than by every tool.
// vclock is the exchange engine, a plugin of another kind.
std::optional<std::string> check_modules(const LaunchOptions& options,
                                         const std::string& plugin_dir) {
  for (const auto& name : module_list(options)) {
    const std::string file = plugin_dir + "/" + plugin_file_name(PluginKind::Module, name);
    if (name == "vclock" || ::access(file.c_str(), R_OK) == 0) continue;
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
  std::vector<LoadedPlugin> loaded;
  std::vector<DeclaredOptions> declared;
  for (const PluginKind kind : {PluginKind::Engine, PluginKind::Translator, PluginKind::Module})
    for (const std::string& name : available_plugins(plugin_dir, kind)) {
      try {
        loaded.push_back(load_plugin(plugin_dir, kind, name));
        declared.push_back({name, loaded.back().descriptor->options});
      } catch (const std::exception&) {
        // Not loadable here: the tools say why if the run needs it.
      }
    }
  const std::string error = apply_option_specs(given, declared);
  for (LoadedPlugin& p : loaded) unload_plugin(p);
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
