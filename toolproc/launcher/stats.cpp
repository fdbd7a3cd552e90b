#include "launcher/stats.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "launcher/process.h"
#include "vcx/session_layout.h"

namespace vcx::launcher {
namespace fs = std::filesystem;
namespace {

std::string join_ranks(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(ranks[i]);
  }
  return out;
}

std::string rank_word(std::size_t count) { return count == 1 ? "rank" : "ranks"; }

}  // namespace

std::optional<Ending> parse_ending(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  const auto space = text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  Ending e;
  e.kind = std::string(text.substr(0, space));
  if (e.kind != "abort" && e.kind != "exit" && e.kind != "signal" && e.kind != "tool-failed")
    return std::nullopt;
  std::string_view number = text.substr(space + 1);
  if (e.kind == "tool-failed") {
    if (const auto call = number.find(' '); call != std::string_view::npos) {
      e.call = std::string(number.substr(call + 1));
      number = number.substr(0, call);
      if (e.call.empty() || e.call.find_first_of(" \t") != std::string::npos) return std::nullopt;
    }
  }
  const auto [ptr, err] = std::from_chars(number.data(), number.data() + number.size(), e.code);
  if (err != std::errc() || ptr != number.data() + number.size()) return std::nullopt;
  return e;
}

StatsReport read_stats(const std::string& dir) {
  StatsReport report;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return report;
  for (const auto& entry : it) {
    const std::string name = entry.path().filename().string();
    if (const std::string_view ending = session::kEndingPrefix; name.rfind(ending, 0) == 0) {
      int rank = -1;
      const char* first = name.data() + ending.size();
      const auto [ptr, err] = std::from_chars(first, name.data() + name.size(), rank);
      if (err != std::errc() || ptr != name.data() + name.size()) continue;
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      if (auto e = parse_ending(text.str()))
        report.endings[rank] = *e;
      else
        report.problems.push_back("cannot read " + entry.path().string() + ": not an ending");
      continue;
    }
    constexpr std::string_view prefix = session::kStatsPrefix, suffix = session::kStatsSuffix;
    if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string middle =
        name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    int file_rank = -1;
    const auto [ptr, err] =
        std::from_chars(middle.data(), middle.data() + middle.size(), file_rank);
    if (err != std::errc() || ptr != middle.data() + middle.size()) continue;

    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    std::string error;
    auto stats = in ? session::ToolStats::from_json(text.str(), &error) : std::nullopt;
    if (!stats) {
      report.problems.push_back("cannot read " + entry.path().string() + ": " +
                                (error.empty() ? "read error" : error));
      continue;
    }
    RankStats r = std::move(*stats);
    if (r.rank < 0) r.rank = file_rank;
    report.ranks.push_back(std::move(r));
  }
  std::sort(report.ranks.begin(), report.ranks.end(),
            [](const RankStats& a, const RankStats& b) { return a.rank < b.rank; });
  return report;
}

std::string format_duration_ns(std::uint64_t ns) {
  char buf[64];
  if (ns < 1'000'000'000ULL)
    std::snprintf(buf, sizeof buf, "%.1f ms", static_cast<double>(ns) / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.2f s", static_cast<double>(ns) / 1e9);
  return buf;
}

namespace {

std::string format_kib(std::uint64_t kib) {
  char buf[32];
  if (kib >= 10 * 1024)
    std::snprintf(buf, sizeof buf, "%.0f MiB", static_cast<double>(kib) / 1024.0);
  else
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(kib) / 1024.0);
  return buf;
}

// Stall per rank (each rank up to 8 ranks; the spread beyond) and the
// tools' peak memory.
std::string per_rank_line(const std::vector<RankStats>& ranks) {
  std::string line = "stall per rank: ";
  if (ranks.size() <= 8) {
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      if (i > 0) line += ", ";
      line += std::to_string(ranks[i].rank) + ": " + format_duration_ns(ranks[i].stall_ns);
    }
  } else {
    std::vector<const RankStats*> by_stall;
    for (const auto& r : ranks) by_stall.push_back(&r);
    std::sort(by_stall.begin(), by_stall.end(),
              [](const RankStats* a, const RankStats* b) { return a->stall_ns < b->stall_ns; });
    const RankStats& lo = *by_stall.front();
    const RankStats& mid = *by_stall[by_stall.size() / 2];
    const RankStats& hi = *by_stall.back();
    line += "min " + format_duration_ns(lo.stall_ns) + " (rank " + std::to_string(lo.rank) +
            "), median " + format_duration_ns(mid.stall_ns) + ", max " +
            format_duration_ns(hi.stall_ns) + " (rank " + std::to_string(hi.rank) + ")";
  }
  const auto most = std::max_element(ranks.begin(), ranks.end(), [](const auto& a, const auto& b) {
    return a.max_rss_kb < b.max_rss_kb;
  });
  std::uint64_t total = 0;
  for (const auto& r : ranks) total += r.max_rss_kb;
  line += "; tool memory " + format_kib(most->max_rss_kb) + " at most (rank " +
          std::to_string(most->rank) + "), " + format_kib(total) + " in all";
  return line;
}

// How far the tools lagged: how long they ran on after the application, and
// the most calls one of them held ahead of its engine. Empty when unknown.
std::string lag_line(const StatsReport& report) {
  const auto most = std::max_element(
      report.ranks.begin(), report.ranks.end(),
      [](const auto& a, const auto& b) { return a.peak_backlog < b.peak_backlog; });
  if (!report.tools_after_app_ns && most->peak_backlog == 0) return "";
  std::string line = "tools";
  if (!most->stall.empty()) line += " (--stall " + most->stall + ")";
  line += ": ";
  if (report.tools_after_app_ns)
    line += "done " + format_duration_ns(*report.tools_after_app_ns) +
            " after the application, ";
  std::uint64_t cpu = 0;
  for (const auto& r : report.ranks) cpu += r.cpu_ns;
  if (cpu > 0) line += "CPU " + format_duration_ns(cpu) + " in all, ";
  line += "backlog at most " + std::to_string(most->peak_backlog) +
          (most->peak_backlog == 1 ? " call" : " calls") + " (rank " +
          std::to_string(most->rank) + ")";
  return line;
}

}  // namespace

std::vector<std::string> summary_lines(const StatsReport& report, int nprocs,
                                       const std::optional<std::string>& trace_dir,
                                       const EndingCalls& calls) {
  std::vector<std::string> lines;
  const std::string trace_part = trace_dir ? "; trace in " + *trace_dir : "";
  if (report.ranks.empty()) {
    lines.push_back(std::to_string(nprocs) + " " + rank_word(static_cast<std::size_t>(nprocs)) +
                    ", no statistics from the tool job" + trace_part);
  } else {
    std::uint64_t events = 0, clocked = 0, stall = 0, backpressure = 0;
    for (const auto& r : report.ranks) {
      events += r.events;
      clocked += r.clocked_calls;
      stall += r.stall_ns;
      backpressure += r.backpressure_ns;
    }
    std::string head =
        static_cast<int>(report.ranks.size()) == nprocs
            ? std::to_string(nprocs) + " " + rank_word(static_cast<std::size_t>(nprocs))
            : std::to_string(report.ranks.size()) + " of " + std::to_string(nprocs) +
                  " ranks reported";
    std::string line = head + ", " + std::to_string(events) + (events == 1 ? " event, " : " events, ") +
                       std::to_string(clocked) + (clocked == 1 ? " clocked call" : " clocked calls") +
                       ", stall " +
                       format_duration_ns(stall) + " total";
    if (backpressure > 0) line += ", backpressure " + format_duration_ns(backpressure);
    lines.push_back(line + trace_part);
  }

  std::vector<int> crashed, detached;
  std::set<int> seen;
  for (const auto& r : report.ranks) {
    seen.insert(r.rank);
    if (r.app == "crashed") crashed.push_back(r.rank);
    if (r.app == "never-attached") detached.push_back(r.rank);
  }
  // Why the tools stopped the analysis: the first stop's reason (the others
  // were told the same, or stopped on its consequences, such as a tool that
  // had gone or a rank aborted, before the news reached them).
  std::string tool_reason;
  std::uint64_t first_stop = 0;
  for (const auto& r : report.ranks) {
    if (!r.aborted || r.reason.empty()) continue;
    // A stop of unknown time counts after every known one.
    const std::uint64_t at = r.stopped_at_ns ? r.stopped_at_ns : UINT64_MAX;
    if (tool_reason.empty() || at < first_stop) {
      tool_reason = r.reason;
      first_stop = at;
    }
  }
  bool reason_told = false;
  // Ranks whose interceptor said how they ended, grouped by how.
  std::vector<std::pair<Ending, std::vector<int>>> causes;
  for (const auto& [rank, e] : report.endings) {
    auto same = std::find_if(causes.begin(), causes.end(), [&](const auto& c) {
      return c.first.kind == e.kind && c.first.code == e.code && c.first.call == e.call;
    });
    if (same == causes.end()) {
      causes.push_back({e, {rank}});
    } else {
      same->second.push_back(rank);
    }
  }
  for (const auto& [e, ranks] : causes) {
    const bool one = ranks.size() == 1;
    std::string line = "application " + rank_word(ranks.size()) + " " + join_ranks(ranks) + " ";
    if (e.kind == "signal")
      line += std::string(one ? "was" : "were") + " killed by signal " + std::to_string(e.code) +
              " (" + signal_name(e.code) + ")";
    else if (e.kind == "exit")
      // exit() keeps the low 8 bits (MPICH's fatal errors pass a whole
      // error code): the status as the shell sees it, and what was passed.
      line += "exited with status " + std::to_string(e.code & 0xff) +
              ((e.code & ~0xff) != 0 ? " (exit(" + std::to_string(e.code) + "))" : "") +
              " without calling " + calls.finalize;
    else if (e.kind == "abort")
      line += std::string("called ") + calls.abort + " with " + calls.abort_code + " " +
              std::to_string(e.code);
    else {
      line += std::string(one ? "was" : "were") + " aborted by vcx with status " +
              std::to_string(e.code) + (e.call.empty() ? "" : " in " + e.call) +
              " because the tool process failed" +
              (tool_reason.empty() ? "" : " (" + tool_reason + ")") +
              "; --on-tool-failure=continue lets the application run on unanalysed";
      reason_told = reason_told || !tool_reason.empty();
    }
    lines.push_back(line);
  }
  if (!tool_reason.empty() && !reason_told)
    lines.push_back("the analysis stopped early: " + tool_reason);
  // The tools saw these end without MPI_Finalize, and nothing said how:
  // SIGKILL leaves no trace, and mpiexec kills the others with it.
  std::vector<int> silent;
  for (int r : crashed)
    if (!report.endings.count(r)) silent.push_back(r);
  if (!silent.empty())
    lines.push_back("application " + rank_word(silent.size()) + " " + join_ranks(silent) +
                    " ended without notice (" +
                    (report.endings.empty()
                         ? std::string("killed by a signal that cannot be caught, such as "
                                       "SIGKILL, or by ") +
                               calls.starter + " after another rank failed"
                         : std::string(calls.starter) + " kills the other ranks when one fails") +
                    ")");
  if (!detached.empty())
    lines.push_back("application " + rank_word(detached.size()) + " " + join_ranks(detached) +
                    " never attached to " + (detached.size() == 1 ? "its tool" : "their tools"));
  if (!report.ranks.empty()) {
    std::vector<int> missing;
    for (int r = 0; r < nprocs; ++r)
      if (!seen.count(r)) missing.push_back(r);
    if (!missing.empty())
      lines.push_back("no statistics from tool " + rank_word(missing.size()) + " " +
                      join_ranks(missing));
  }
  for (const auto& p : report.problems) lines.push_back(p);
  if (!report.ranks.empty()) {
    lines.push_back(per_rank_line(report.ranks));
    if (std::string lag = lag_line(report); !lag.empty()) lines.push_back(std::move(lag));
  }
  return lines;
}

bool has_rank_trouble(const StatsReport& report) {
  if (!report.endings.empty()) return true;
  return std::any_of(report.ranks.begin(), report.ranks.end(), [](const RankStats& r) {
    return r.app == "crashed" || r.app == "never-attached";
  });
}

}  // namespace vcx::launcher
