#include "launcher/explore.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "launcher/launcher.h"
#include "launcher/process.h"
#include "launcher/where_report.h"

namespace vcx::launcher {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// One forced match: rank R's wildcard receive I takes source S.
struct Force {
  int rank = 0;
  std::uint64_t index = 0;
  int source = 0;
  bool operator<(const Force& o) const {
    return std::tie(rank, index, source) < std::tie(o.rank, o.index, o.source);
  }
};

// A replay: the alternative it explores, on top of the matches it pins.
struct Replay {
  std::vector<Force> pins;
  Force alternative;
  int depth = 1;  // alternatives forced, this one included
};

// Reproducing lines longer than this name a file of the forced matches.
constexpr std::size_t kLongestShownLine = 400;

struct Finding {
  int rank = 0;
  std::uint64_t index = 0;
  int matched = 0;
  std::vector<int> alternatives;
};

// What a run's matches analysis recorded (matches.record): every wildcard
// receive's source and k (the tick of its rank's first call known to follow
// its match), and the posting clocks of the receives with alternatives.
struct Decision {
  int rank = 0;
  std::uint64_t index = 0;
  int source = 0;
  std::uint64_t k = 0;
};
struct Record {
  std::vector<Decision> decisions;
  std::map<std::pair<int, std::uint64_t>, std::vector<std::uint64_t>> posted;
};

struct Outcome {
  ExitStatus status;
  bool hung = false;
  bool deadlocked = false;  // the deadlock analysis ended it
  double seconds = 0;
  std::vector<std::string> output;  // stdout, lines sorted (ranks interleave)
  std::string stderr_text;
};

std::string force_line(const std::vector<Force>& forces) {
  std::string out;
  for (const Force& f : forces)
    out += (out.empty() ? "" : ",") + std::to_string(f.rank) + ":" + std::to_string(f.index) +
           "=" + std::to_string(f.source);
  return out;
}

std::vector<Force> forces_of(const Replay& r) {
  std::vector<Force> all = r.pins;
  all.push_back(r.alternative);
  return all;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<Finding> read_findings(const std::string& report) {
  std::vector<Finding> out;
  std::ifstream in(report);
  if (!in) return out;
  try {
    const json doc = json::parse(in);
    for (const json& f : doc.value("findings", json::array())) {
      if (f.value("analysis", "") != "matches") continue;
      Finding x;
      x.rank = f["receive"].value("rank", 0);
      x.index = f["receive"].value("index", std::uint64_t{0});
      x.matched = f.value("matched_source", 0);
      for (const json& a : f.value("alternative_sources", json::array()))
        x.alternatives.push_back(a.get<int>());
      out.push_back(std::move(x));
    }
  } catch (const std::exception&) {
  }
  std::sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
    return std::tie(a.rank, a.index) < std::tie(b.rank, b.index);
  });
  return out;
}

// Whether the run's report has a deadlock (the deadlock analysis ended it).
bool reports_deadlock(const std::string& report) {
  std::ifstream in(report);
  if (!in) return false;
  try {
    const json doc = json::parse(in);
    for (const json& f : doc.value("findings", json::array()))
      if (f.value("analysis", "") == "deadlock" && f.value("kind", "") == "deadlock") return true;
  } catch (const std::exception&) {
  }
  return false;
}

// Reads <dir>/rank-<R>.txt ("p <index> <clock>", "d <index> <source> <k>"
// lines); posting clocks only for the receives in `wanted`.
Record read_record(const std::string& dir, const std::vector<Finding>& wanted) {
  Record out;
  std::set<std::pair<int, std::uint64_t>> want;
  for (const Finding& f : wanted) want.insert({f.rank, f.index});
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    int rank = -1;
    if (std::sscanf(name.c_str(), "rank-%d.txt", &rank) != 1 || rank < 0) continue;
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) {
      std::istringstream words(line);
      char kind = 0;
      std::uint64_t index = 0;
      if (!(words >> kind >> index)) continue;
      if (kind == 'd') {
        Decision d{rank, index, 0, 0};
        if (words >> d.source >> d.k) out.decisions.push_back(d);
      } else if (kind == 'p' && want.count({rank, index}) != 0) {
        std::vector<std::uint64_t> clock;
        for (std::uint64_t v; words >> v;) clock.push_back(v);
        out.posted[{rank, index}] = std::move(clock);
      }
    }
  }
  return out;
}

// Runs vcx-run once with `extra` options before the user's arguments;
// stdout and stderr go to files. A run past `deadline` counts as hung and
// is stopped (SIGINT to vcx-run, which takes its jobs down; then SIGKILL).
Outcome run_once(const std::string& self, const std::vector<std::string>& extra,
                 const std::vector<std::string>& args, const Environment& env,
                 const std::string& base, std::chrono::seconds deadline) {
  const std::string out_path = base + ".out", err_path = base + ".err";
  std::vector<std::string> argv{self};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  Environment run_env = env;
  ::mkdir((base + ".record").c_str(), 0700);
  run_env.set(kExploreRecordVariable, base + ".record");
  std::vector<std::string> envs = run_env.entries();
  std::vector<char*> cenv;
  for (std::string& e : envs) cenv.push_back(e.data());
  cenv.push_back(nullptr);

  Outcome o;
  const auto start = Clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int in = ::open("/dev/null", O_RDONLY);
    if (out < 0 || err < 0 || in < 0) ::_exit(127);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::setpgid(0, 0);
    ::execve(self.c_str(), cargv.data(), cenv.data());
    ::_exit(127);
  }
  int status = 0;
  bool asked_where = false, interrupted = false;
  for (;;) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    const auto waited = Clock::now() - start;
    if (!asked_where && waited > deadline) {
      // Hung: first where the ranks are (vcx-run answers SIGUSR1), then stop.
      o.hung = true;
      asked_where = true;
      ::kill(pid, SIGUSR1);
    } else if (asked_where && !interrupted &&
               (waited > deadline + std::chrono::seconds(15) ||
                read_file(err_path).find(kWhereEnd) != std::string::npos)) {
      interrupted = true;
      ::kill(pid, SIGINT);
    } else if (interrupted && waited > deadline + std::chrono::seconds(45)) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  o.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  o.status = ExitStatus::from_wait_status(status);
  std::istringstream lines(read_file(out_path));
  for (std::string line; std::getline(lines, line);) o.output.push_back(line);
  std::sort(o.output.begin(), o.output.end());
  o.stderr_text = read_file(err_path);
  return o;
}

// How a replay's outcome differs from the first run's ("" when it does not).
std::string difference(const Outcome& first, const Outcome& r) {
  std::string d;
  if (r.hung) {
    d = "did not finish (hung)";
  } else if (r.deadlocked) {
    d = "deadlocked";
  } else if (r.status.shell_code() != first.status.shell_code()) {
    d = r.status.describe() + " instead of " + first.status.describe();
  }
  if (!r.hung && !r.deadlocked && r.output != first.output)
    d += std::string(d.empty() ? "" : "; ") + "output differs";
  return d;
}

// The --force-match watchdog's or the program's own last words; for a hung
// run, where its ranks were.
std::string last_words(const std::string& stderr_text) {
  std::istringstream lines(stderr_text);
  std::string keep, where, deadlock;
  bool in_where = false, in_deadlock = false;
  for (std::string line; std::getline(lines, line);) {
    // The deadlock analysis's finding: its first line, and the indented ones.
    if (line.rfind("vcx: deadlock: ", 0) == 0) {
      in_deadlock = true;
      deadlock = "  " + line.substr(5);
      continue;
    }
    if (in_deadlock) {
      if (line.rfind("  ", 0) == 0) {
        deadlock += "\n  " + line;
        continue;
      }
      in_deadlock = false;
    }
    if (line.find("vcx: where the ranks are") == 0) {
      in_where = true;
      where.clear();
      continue;
    }
    if (in_where) {
      if (line.find(kWhereEnd) != std::string::npos) {
        in_where = false;
      } else {
        const std::size_t skip = line.rfind("vcx: ", 0) == 0 ? 5 : 0;  // indented instead
        where += (where.empty() ? "  " : "\n  ") + line.substr(skip);
      }
      continue;
    }
    if (line.find("made no MPI call") != std::string::npos ||
        line.find("MPI_Abort") != std::string::npos ||
        line.find("Fatal error") != std::string::npos)
      keep = line;
  }
  if (!deadlock.empty()) return deadlock;
  return where.empty() ? keep : where;
}

}  // namespace

int explore(const std::vector<std::string>& args, const LaunchOptions& options,
            const Environment& env) {
  const int budget = options.explore;
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) {
    std::fprintf(stderr, "vcx: --explore: cannot tell where vcx-run is (/proc/self/exe)\n");
    return 70;
  }
  const std::string self(exe, static_cast<std::size_t>(n));
  std::string tmpl = (env.get_nonempty("TMPDIR").value_or("/tmp")) + "/vcx-explore-XXXXXX";
  if (!::mkdtemp(tmpl.data())) {
    std::fprintf(stderr, "vcx: --explore: cannot create a directory under %s\n",
                 env.get_nonempty("TMPDIR").value_or("/tmp").c_str());
    return 70;
  }
  const std::string dir = tmpl;
  Environment child_env = env;
  child_env.set(kExploreChildVariable, "1");
  const bool tty = ::isatty(STDERR_FILENO) == 1;

  // The first run, shown to the user as it would be without --explore.
  const Outcome first =
      run_once(self, {"--analysis", "matches", "--report", dir + "/run-0.json"}, args, child_env,
               dir + "/run-0", std::chrono::hours(24 * 365));
  std::fputs(read_file(dir + "/run-0.out").c_str(), stdout);
  std::fflush(stdout);
  std::fputs(first.stderr_text.c_str(), stderr);
  const std::vector<Finding> found = read_findings(dir + "/run-0.json");

  // Replays, depth first: each alternative of the first run, with the
  // matches it pins: every wildcard receive known to have matched before the
  // forced one was posted (the same rank's earlier ones, and those of other
  // ranks whose k is within its posting clock), as that run had them. Then,
  // to a depth of 2, the alternatives that show up in those replays after it.
  std::deque<Replay> todo;
  auto push_alternatives = [&](const std::vector<Finding>& findings, const Record& record,
                               const Replay* base) {
    std::vector<Replay> add;
    for (const Finding& f : findings) {
      if (base) {
        const Force& b = base->alternative;
        if (f.rank == b.rank && f.index <= b.index) continue;
        bool pinned = false;
        for (const Force& p : base->pins) pinned |= p.rank == f.rank && p.index == f.index;
        if (pinned) continue;
      }
      const auto posted = record.posted.find({f.rank, f.index});
      for (const int alt : f.alternatives) {
        Replay r;
        if (base) {
          r.pins = forces_of(*base);
          r.depth = base->depth + 1;
        }
        std::set<std::pair<int, std::uint64_t>> have;
        for (const Force& p : r.pins) have.insert({p.rank, p.index});
        auto pin = [&](int rank, std::uint64_t index, int source) {
          if (rank == f.rank && index == f.index) return;
          if (have.insert({rank, index}).second) r.pins.push_back(Force{rank, index, source});
        };
        for (const Finding& e : findings)
          if (e.rank == f.rank && e.index < f.index) pin(e.rank, e.index, e.matched);
        for (const Decision& d : record.decisions) {
          const bool before =
              d.rank == f.rank
                  ? d.index < f.index
                  : posted != record.posted.end() &&
                        static_cast<std::size_t>(d.rank) < posted->second.size() &&
                        d.k <= posted->second[static_cast<std::size_t>(d.rank)];
          if (before) pin(d.rank, d.index, d.source);
        }
        std::sort(r.pins.begin(), r.pins.end());
        r.alternative = Force{f.rank, f.index, alt};
        add.push_back(std::move(r));
      }
    }
    for (auto it = add.rbegin(); it != add.rend(); ++it) todo.push_front(*it);
  };
  push_alternatives(found, read_record(dir + "/run-0.record", found), nullptr);
  const std::size_t alternatives = todo.size();

  // A replay taking far longer than the first run is taken for hung.
  auto deadline = std::chrono::seconds(std::max<long>(60, static_cast<long>(10 * first.seconds)));
  if (const auto t = env.get_nonempty(kExploreTimeoutVariable)) {
    const long seconds = std::atol(t->c_str());
    if (seconds <= 0) {
      std::fprintf(stderr, "vcx: %s=%s: give a number of seconds\n", kExploreTimeoutVariable,
                   t->c_str());
      return 64;
    }
    deadline = std::chrono::seconds(seconds);
  }
  Environment replay_env = child_env;
  if (!env.get_nonempty("VCX_FORCE_MATCH_TIMEOUT"))
    replay_env.set("VCX_FORCE_MATCH_TIMEOUT",
                   std::to_string(std::max<long>(10, static_cast<long>(5 * first.seconds))));
  struct Result {
    Replay replay;
    std::string difference;
    std::string last_words;
    bool replay_hung = false;
    bool replay_deadlocked = false;
  };
  std::vector<Result> results;
  std::set<std::string> done;
  int runs = 0;
  while (!todo.empty() && runs < budget) {
    const Replay r = todo.front();
    todo.pop_front();
    const std::string line = force_line(forces_of(r));
    if (!done.insert(line).second) continue;
    ++runs;
    std::fprintf(stderr, "%svcx: exploring: replay %d of at most %d: --force-match %s%s",
                 tty ? "\r\033[K" : "", runs, budget, line.c_str(), tty ? "" : "\n");
    std::fflush(stderr);
    const std::string base = dir + "/run-" + std::to_string(runs);
    std::ofstream(base + ".force") << line << '\n';
    Outcome o = run_once(self, {"--analysis", "matches", "--report", base + ".json",
                                "--force-match-file", base + ".force"},
                         args, replay_env, base, deadline);
    o.deadlocked = !o.hung && reports_deadlock(base + ".json");
    results.push_back(
        Result{r, difference(first, o), last_words(o.stderr_text), o.hung, o.deadlocked});
    if (r.depth < 2 && !o.hung) {
      const std::vector<Finding> next = read_findings(base + ".json");
      push_alternatives(next, read_record(base + ".record", next), &r);
    }
  }
  if (tty) std::fputs("\r\033[K", stderr);

  // The summary.
  std::size_t differing = 0;
  for (const Result& x : results) differing += x.difference.empty() ? 0 : 1;
  std::fprintf(stderr,
               "vcx explore: %zu wildcard receive(s) with alternatives in the first run, %zu "
               "alternative match(es); %d replay(s) run, %zu with another outcome\n",
               found.size(), alternatives, runs, differing);
  if (!results.empty()) std::fprintf(stderr, "  %-6s %-32s %s\n", "replay", "forced", "outcome");
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Result& x = results[i];
    const std::string forced = force_line({x.replay.alternative});
    std::fprintf(stderr, "  %-6zu %-32s %s\n", i + 1, forced.c_str(),
                 x.difference.empty() ? "same as the first run" : x.difference.c_str());
  }
  // The user's command without --explore.
  std::string program;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--explore" && i + 1 < args.size()) {
      ++i;
      continue;
    }
    if (args[i].rfind("--explore=", 0) == 0) continue;
    program += " " + args[i];
  }
  int saved = 0;
  for (const Result& x : results) {
    if (x.difference.empty()) continue;
    // Long lines (many pinned receives) are saved to a file instead.
    std::string forced = "--force-match " + force_line(forces_of(x.replay));
    if (forced.size() > kLongestShownLine) {
      const std::string file = "vcx-explore-" + std::to_string(::getpid()) + "-" +
                               std::to_string(++saved) + ".txt";
      std::ofstream(file) << force_line(forces_of(x.replay)) << '\n';
      forced = "--force-match-file " + file;
    }
    std::fprintf(stderr, "vcx explore: %s when %s; reproduce with:\n  vcx-run %s%s\n",
                 x.difference.c_str(), force_line({x.replay.alternative}).c_str(),
                 forced.c_str(), program.c_str());
    if (x.replay_deadlocked) {
      std::fprintf(stderr, "  the deadlock:\n%s\n", x.last_words.c_str());
    } else if (x.replay_hung && x.last_words.empty()) {
      std::fprintf(stderr, "  (vcx-run gave no answer on where the ranks were)\n");
    } else if (x.last_words.find('\n') != std::string::npos || x.replay_hung) {
      std::fprintf(stderr, "  where the ranks were:\n%s\n", x.last_words.c_str());
    } else if (!x.last_words.empty()) {
      std::fprintf(stderr, "  (%s)\n", x.last_words.c_str());
    }
  }
  if (todo.empty() && runs < budget)
    std::fprintf(stderr, "vcx explore: every alternative found was replayed.\n");
  else if (!todo.empty())
    std::fprintf(stderr, "vcx explore: %zu more replay(s) left (raise --explore to run them).\n",
                 todo.size());
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (differing > 0) return 1;
  return first.status.shell_code();
}

}  // namespace vcx::launcher
