// vcx-trace: reads the per-rank trace files written by `vcx-run --trace DIR`.
//
// Exit codes: 0 success, 2 the trace cannot be read (missing, not a trace,
// other format version, corrupt), 64 the command line is wrong (EX_USAGE).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <boost/program_options.hpp>

#include "clock_condition.h"
#include "html_view.h"
#include "otf2_export.h"
#include "record_json.h"
#include "site_names.h"
#include "vcx/trace_format.h"

namespace po = boost::program_options;

namespace {

constexpr int kExitData = 2;
constexpr int kExitUsage = 64;

const char* const kUsage =
    "usage: vcx-trace <command> [options] DIR\n"
    "\n"
    "Reads a trace written by `vcx-run --trace DIR` (one rank-<R>.vcxt per rank).\n"
    "\n"
    "commands:\n"
    "  export DIR    one JSON object per clocked call (JSON Lines) on stdout\n"
    "  summary DIR   per rank: clocked calls, calls by name, final clock\n"
    "  correct DIR   make the physical times respect the happened-before order\n"
    "  otf2 DIR OUT  write the trace as an OTF2 archive in the new directory OUT\n"
    "  view DIR      write a space-time view of the run as one HTML page\n"
    "  help [CMD]    this text, or the options of CMD\n"
    "\n"
    "options:\n"
    "  -h, --help    show help\n";

const char* const kExportHelp =
    "usage: vcx-trace export [--rank R] DIR\n"
    "\n"
    "Prints one JSON object per clocked call, ranks in order and each rank's calls\n"
    "in program order:\n"
    "  {\"rank\":0,\"seq\":0,\"event\":3,\"call\":\"MPI_Send\",\"peers\":[1],\"group\":\"0x..\",\n"
    "   \"queue\":[\"0x..\",\"0x..\"],\"enter_ns\":..,\"leave_ns\":..,\"site\":\"app.c:42\",\n"
    "   \"clock\":[1,0,0]}\n"
    "peers, group and queue are left out when empty or zero; enter_ns, leave_ns\n"
    "(the application's clock) and site (the program's line of the call) when\n"
    "unknown. With --corrected the times are those `vcx-trace correct` computes.\n"
    "\n";

const char* const kCorrectHelp =
    "usage: vcx-trace correct [options] DIR\n"
    "\n"
    "Checks the clock condition on the trace's physical times: a call returns\n"
    "after the enter of every call of another rank it happened after (its vector\n"
    "clock says which). Clocks of different nodes have offsets and drift, so a\n"
    "trace may break it. First each rank's times move onto rank 0's clock by the\n"
    "offsets measured at the start and the end of the run (unless --no-offsets);\n"
    "then the extended controlled logical clock moves the returns still too early\n"
    "forward, spreads each jump over the events before it and lets the clock\n"
    "catch up after it, moving nothing back. Prints the offsets, how many\n"
    "violations each rank had and how far its events moved; `export --corrected`\n"
    "prints the times.\n"
    "\n";

const char* const kOtf2Help =
    "usage: vcx-trace otf2 [--corrected] DIR OUT\n"
    "\n"
    "Writes the trace as an OTF2 archive, OUT/traces.otf2 (open it with Vampir,\n"
    "otf2-print or any OTF2 reader): a location per rank, a region per call, the\n"
    "trace's groups as communicators, point-to-point messages as MpiSend/MpiRecv\n"
    "(attribute vcx::message_position pairs the two ends exactly), collectives\n"
    "as MpiCollectiveBegin/End, window synchronisation as RmaCollectiveBegin/End,\n"
    "and the vector clock of each call on its Leave (attributes vcx::clock[k]).\n"
    "With --corrected the times respect the clock condition (vcx-trace help\n"
    "correct).\n"
    "\n";

const char* const kViewHelp =
    "usage: vcx-trace view [-o FILE] [--measured] DIR\n"
    "\n"
    "Writes one self-contained HTML page (DIR/view.html unless -o says where):\n"
    "a lane per rank, each clocked call a box from its enter to its return,\n"
    "arrows from each message's send to its receive, lines joining the members of\n"
    "each collective. Drag to pan, wheel to zoom, click a call for its source\n"
    "line, vector clock and the calls it happened after. Times are corrected\n"
    "for the clock condition (vcx-trace help correct) unless --measured.\n"
    "\n";

const char* const kSummaryHelp =
    "usage: vcx-trace summary DIR\n"
    "\n"
    "Prints for every rank the number of clocked calls, the calls by name and the\n"
    "final vector clock, and warns about files cut short by a crash.\n"
    "\n";

struct UsageError {
  std::string what;
};
struct DataError {
  std::string what;
};

void warn(const std::string& what) { std::cerr << "vcx-trace: warning: " << what << "\n"; }

// ------------------------------------------------------------------ output

std::string clock_text(const std::vector<vcx::ClockValue>& c) {
  std::string s = "[";
  for (std::size_t i = 0; i < c.size(); ++i) s += (i ? "," : "") + std::to_string(c[i]);
  return s + "]";
}

// ------------------------------------------------------------------ input

// The rank files of `dir`, each opened; checks that they form one trace.
struct OpenTrace {
  std::vector<vcx::trace::RankFile> files;
  std::uint32_t world_size = 0;
};

OpenTrace list_trace(const std::string& dir) {
  OpenTrace t;
  std::string err;
  if (!vcx::trace::list_rank_files(dir, t.files, &err)) throw DataError{err};
  if (t.files.empty())
    throw DataError{dir + " is not a vcx trace (no rank-<R>" + vcx::trace::kFileSuffix +
                    " files in it)"};
  return t;
}

void open_rank(vcx::trace::Reader& reader, const vcx::trace::RankFile& f, OpenTrace& t) {
  std::string err;
  if (!reader.open(f.path, &err)) throw DataError{err};
  if (reader.rank() != f.rank)
    throw DataError{f.path + " holds the trace of rank " + std::to_string(reader.rank().value)};
  if (t.world_size == 0) {
    t.world_size = reader.world_size();
  } else if (reader.world_size() != t.world_size) {
    throw DataError{f.path + " was written for " + std::to_string(reader.world_size()) +
                    " ranks, the other files for " + std::to_string(t.world_size)};
  }
}

void finish_rank(const vcx::trace::Reader& reader, const vcx::trace::RankFile& f,
                 std::uint64_t records) {
  if (!reader.error().empty()) throw DataError{reader.error()};
  if (reader.truncated())
    warn(f.path + " ends in a partial record (the run was cut short); read the " +
         std::to_string(records) + " complete ones before it");
}

// Every rank's calls as time lines, for the clock condition.
vcx::trace::Timelines load_timelines(const std::string& dir, OpenTrace& t, bool aligned) {
  vcx::trace::Reader reader;
  vcx::trace::Record rec;
  open_rank(reader, t.files.front(), t);  // learns the world size
  vcx::trace::Timelines lines(t.world_size);
  std::vector<std::vector<vcx::ClockSync>> syncs(t.world_size);
  bool timed = false;
  for (const auto& f : t.files) {
    open_rank(reader, f, t);
    std::uint64_t n = 0;
    while (reader.next(rec)) {
      lines.add_call(f.rank.value, rec.enter_ns, rec.leave_ns, rec.clock);
      timed = timed || rec.enter_ns != 0;
      ++n;
    }
    finish_rank(reader, f, n);
    syncs[f.rank.value] = reader.syncs();
  }
  if (aligned) lines.align(syncs);
  if (!timed)
    throw DataError{dir + " has no physical times (it was traced by a vcx that did not record "
                          "them); trace the run again"};
  return lines;
}

std::string duration_text(std::int64_t ns) {
  char b[32];
  if (ns < 10'000)
    std::snprintf(b, sizeof b, "%lld ns", static_cast<long long>(ns));
  else if (ns < 10'000'000)
    std::snprintf(b, sizeof b, "%.1f us", static_cast<double>(ns) / 1e3);
  else
    std::snprintf(b, sizeof b, "%.1f ms", static_cast<double>(ns) / 1e6);
  return b;
}

std::string signed_duration(std::int64_t ns) {
  return (ns < 0 ? "-" : "+") + duration_text(ns < 0 ? -ns : ns);
}

// ------------------------------------------------------------------ commands

int run_otf2(const std::string& dir, const std::string& out,
             const vcx::trace::CorrectionOptions* corrected) {
  try {
    vcx::trace::TraceSet t = vcx::trace::TraceSet::load(dir);
    for (const auto& r : t.ranks)
      if (r.truncated)
        warn(r.path + " ends in a partial record (the run was cut short); its complete "
             "records are in the archive");
    if (corrected) {
      if (!t.timed) throw DataError{dir + " has no physical times; trace the run again"};
      t.correct_times(*corrected);
    }
    const vcx::trace::Otf2Summary s = vcx::trace::write_otf2(t, out, dir);
    std::cout << "wrote " << s.anchor << ": " << t.ranks.size() << " locations, " << s.events
              << " events, " << s.messages << " message records\n";
    if (s.messages_left_out)
      warn(std::to_string(s.messages_left_out) +
           " messages on queues that are no communicator (annotations) have no OTF2 record");
  } catch (const vcx::trace::TraceError& e) {
    throw DataError{e.what()};
  }
  return 0;
}

int run_view(const std::string& dir, const std::string& out,
             const vcx::trace::CorrectionOptions* corrected, const std::string& report_file) {
  try {
    vcx::trace::TraceSet t = vcx::trace::TraceSet::load(dir);
    vcx::trace::CorrectionReport report;
    vcx::trace::ViewInput in;
    in.maps_dir = dir;
    in.title = "vcx trace " + dir;
    in.corrected = corrected && t.timed;
    if (in.corrected) t.correct_times(*corrected, &report);
    in.violations_fixed = report.violations_measured;
    if (!report_file.empty()) {
      std::ifstream f(report_file);
      if (!f) throw DataError{"cannot read the report " + report_file};
      std::stringstream text;
      text << f.rdbuf();
      in.report = text.str();
    }
    const vcx::trace::ViewSummary s = vcx::trace::write_view(t, out, in);
    std::cout << "wrote " << out << ": " << t.ranks.size() << " ranks, " << s.calls << " calls, "
              << s.messages << " messages, " << s.collectives << " collectives";
    if (!report_file.empty())
      std::cout << "; " << s.alternatives << " receives with alternative matches, " << s.races
                << " data races, " << s.deadlocks << (s.deadlocks == 1 ? " deadlock" : " deadlocks");
    std::cout << "\n";
  } catch (const vcx::trace::TraceError& e) {
    throw DataError{e.what()};
  }
  return 0;
}

int run_correct(const std::string& dir, const vcx::trace::CorrectionOptions& o) {
  OpenTrace t = list_trace(dir);
  vcx::trace::Timelines lines = load_timelines(dir, t, o.use_offsets);
  const vcx::trace::CorrectionReport r = lines.correct(o);
  const bool aligned = std::any_of(r.ranks.begin(), r.ranks.end(),
                                   [](const auto& k) { return k.aligned; });
  std::cout << "clock condition of " << dir << ": " << r.violations_measured << " violation"
            << (r.violations_measured == 1 ? "" : "s")
            << " (a call returning before the enter of a call it happened after)";
  if (aligned) std::cout << ", " << r.violations << " after the measured offsets";
  std::cout << ", " << r.violations_after << " left after correction\n";
  if (aligned) {
    std::cout << "rank  offset at start  offset at end  drift\n";
    for (std::uint32_t k = 0; k < r.ranks.size(); ++k) {
      const vcx::trace::RankCorrection& a = r.ranks[k];
      if (!a.aligned) continue;
      char row[128];
      if (a.shared_clock)
        std::snprintf(row, sizeof row, "%4u  rank 0's clock (same node): no offset\n", k);
      else
        std::snprintf(row, sizeof row, "%4u  %15s  %13s  %.1f ppm\n", k,
                      signed_duration(a.offset_start_ns).c_str(),
                      signed_duration(a.offset_end_ns).c_str(), a.drift_ppm);
      std::cout << row;
    }
    for (std::uint32_t k = 0; k < r.ranks.size(); ++k)
      if (r.ranks[k].drift_refused_ppm != 0) {
        char text[256];
        std::snprintf(text, sizeof text,
                      "rank %u: the measured offsets drift by %.0f ppm, more than a clock "
                      "does (%.0f ppm); the offset of the measurement with the shorter round "
                      "trip is applied, constant",
                      k, r.ranks[k].drift_refused_ppm, vcx::trace::kMaxDriftPpm);
        warn(text);
      }
  }
  std::cout << "rank  violations  events moved  largest move\n";
  for (std::uint32_t k = 0; k < r.ranks.size(); ++k) {
    char row[96];
    std::snprintf(row, sizeof row, "%4u  %10llu  %12llu  %s\n", k,
                  static_cast<unsigned long long>(r.ranks[k].violations),
                  static_cast<unsigned long long>(r.ranks[k].moved),
                  duration_text(r.ranks[k].max_shift_ns).c_str());
    std::cout << row;
  }
  if (r.unresolved)
    warn(std::to_string(r.unresolved) + " clock entries name calls the trace does not hold "
         "(rank files missing or cut short); those orders are not checked");
  return r.violations_after == 0 ? 0 : kExitData;
}

int run_export(const std::string& dir, std::optional<std::uint32_t> only_rank,
               const vcx::trace::CorrectionOptions* corrected) {
  OpenTrace t = list_trace(dir);
  std::optional<vcx::trace::Timelines> lines;
  if (corrected) {
    lines.emplace(load_timelines(dir, t, corrected->use_offsets));
    lines->correct(*corrected);
  }
  if (only_rank) {
    auto it = std::find_if(t.files.begin(), t.files.end(),
                           [&](const auto& f) { return f.rank.value == *only_rank; });
    if (it == t.files.end())
      throw DataError{dir + " has no trace of rank " + std::to_string(*only_rank)};
    t.files = {*it};
  }
  vcx::trace::Reader reader;
  vcx::trace::Record rec;
  std::string line;
  for (const auto& f : t.files) {
    open_rank(reader, f, t);
    vcx::trace::SiteNames sites(dir, f.rank);
    std::uint64_t n = 0;
    while (reader.next(rec)) {
      if (lines) {
        rec.enter_ns = static_cast<std::uint64_t>(lines->enter(f.rank.value, n));
        rec.leave_ns = static_cast<std::uint64_t>(lines->leave(f.rank.value, n));
      }
      vcx::trace::record_json_line(f.rank, rec, sites, line);
      std::fwrite(line.data(), 1, line.size(), stdout);
      ++n;
    }
    std::fflush(stdout);
    finish_rank(reader, f, n);
  }
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) throw DataError{"writing stdout failed"};
  return 0;
}

int run_summary(const std::string& dir) {
  OpenTrace t = list_trace(dir);
  vcx::trace::Reader reader;
  vcx::trace::Record rec;
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < t.files.size(); ++i) {
    const auto& f = t.files[i];
    open_rank(reader, f, t);
    if (i == 0)
      std::cout << "trace " << dir << ": " << t.files.size() << " rank file(s), world size "
                << t.world_size << "\n";
    std::uint64_t n = 0;
    std::map<std::string, std::uint64_t> by_name;
    std::vector<vcx::ClockValue> last(t.world_size, 0);
    while (reader.next(rec)) {
      ++n;
      ++by_name[rec.call];
      last.swap(rec.clock);
    }
    std::cout << "rank " << f.rank.value << ": " << n << " clocked call" << (n == 1 ? "" : "s")
              << ", final clock " << clock_text(last);
    if (reader.truncated()) std::cout << " (file cut short)";
    std::cout << "\n";
    std::vector<std::pair<std::string, std::uint64_t>> names(by_name.begin(), by_name.end());
    std::stable_sort(names.begin(), names.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    std::size_t width = 0;
    for (const auto& [name, count] : names) width = std::max(width, name.size());
    for (const auto& [name, count] : names)
      std::cout << "  " << name << std::string(width - name.size() + 2, ' ') << count << "\n";
    if (!reader.error().empty()) throw DataError{reader.error()};
    if (reader.truncated())
      problems.push_back(f.path + " ends in a partial record (the run was cut short)");
  }
  if (t.files.size() < t.world_size)
    problems.push_back("only " + std::to_string(t.files.size()) + " of " +
                       std::to_string(t.world_size) + " rank files are present");
  std::cout.flush();
  for (const auto& p : problems) warn(p);
  return 0;
}

// ------------------------------------------------------------------ command line

const char* help_of(const std::string& cmd) {
  if (cmd == "export") return kExportHelp;
  if (cmd == "summary") return kSummaryHelp;
  if (cmd == "correct") return kCorrectHelp;
  if (cmd == "otf2") return kOtf2Help;
  if (cmd == "view") return kViewHelp;
  return nullptr;
}

po::options_description visible_options(const std::string& cmd) {
  po::options_description d("options");
  d.add_options()("help,h", "show help");
  if (cmd == "export")
    d.add_options()("rank", po::value<std::uint32_t>()->value_name("R"), "only this rank");
  if (cmd == "export" || cmd == "otf2")
    d.add_options()("corrected",
                    "times corrected for the clock condition (see vcx-trace help correct)");
  if (cmd == "view")
    d.add_options()("output,o", po::value<std::string>()->value_name("FILE"),
                    "the page to write (default DIR/view.html)")(
        "measured", "times as measured, not corrected for the clock condition")(
        "report", po::value<std::string>()->value_name("FILE"),
        "the analyses' report of the same run (vcx-run --report): marks wildcard receives "
        "with alternative matches, lists data races, draws deadlocks after the ranks' last "
        "calls");
  if (cmd == "export" || cmd == "correct" || cmd == "otf2" || cmd == "view") {
    const vcx::trace::CorrectionOptions o;
    d.add_options()("min-latency",
                    po::value<std::int64_t>()->value_name("NS")->default_value(o.min_latency_ns),
                    "a return comes at least this long after an enter it follows")(
        "gamma", po::value<double>()->value_name("G")->default_value(o.gamma, "0.99"),
        "after a jump, intervals shrink to no less than G of their length")(
        "max-stretch", po::value<double>()->value_name("S")->default_value(o.max_stretch, "0.01"),
        "a jump spreads over the events before it, stretching them by at most S")(
        "no-offsets", "do not first move each rank onto rank 0's clock by the offsets "
                      "measured at the start and the end of the run");
  }
  return d;
}

int run(int argc, char** argv) {
  if (argc < 2) throw UsageError{"no command given"};
  const std::string cmd = argv[1];
  if (cmd == "-h" || cmd == "--help") {
    std::cout << kUsage;
    return 0;
  }
  if (cmd == "help") {
    if (argc == 2) {
      std::cout << kUsage;
      return 0;
    }
    if (argc > 3) throw UsageError{"help takes one command"};
    const char* h = help_of(argv[2]);
    if (!h) throw UsageError{std::string("unknown command '") + argv[2] + "'"};
    std::cout << h << visible_options(argv[2]);
    return 0;
  }
  const char* help = help_of(cmd);
  if (!help) {
    if (!cmd.empty() && cmd[0] == '-') throw UsageError{"unknown option '" + cmd + "'"};
    throw UsageError{"unknown command '" + cmd + "'"};
  }

  const po::options_description visible = visible_options(cmd);
  po::options_description desc;
  desc.add(visible).add_options()("dir", po::value<std::vector<std::string>>());
  po::positional_options_description pos;
  pos.add("dir", -1);
  po::variables_map vm;
  try {
    std::vector<std::string> args(argv + 2, argv + argc);
    po::store(po::command_line_parser(args).options(desc).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError{cmd + ": " + e.what()};
  }
  if (vm.count("help")) {
    std::cout << help << visible;
    return 0;
  }
  const auto dirs = vm.count("dir") ? vm["dir"].as<std::vector<std::string>>()
                                    : std::vector<std::string>{};
  const std::size_t wanted = cmd == "otf2" ? 2 : 1;
  if (dirs.size() != wanted)
    throw UsageError{cmd + (dirs.empty()     ? ": no trace directory given"
                            : wanted == 2 ? ": expected the trace directory and the output "
                                            "directory"
                                          : ": expected one trace directory")};
  vcx::trace::CorrectionOptions correction;
  if (cmd == "export" || cmd == "correct" || cmd == "otf2" || cmd == "view") {
    correction.min_latency_ns = vm["min-latency"].as<std::int64_t>();
    correction.gamma = vm["gamma"].as<double>();
    correction.max_stretch = vm["max-stretch"].as<double>();
    correction.use_offsets = vm.count("no-offsets") == 0;
    if (correction.min_latency_ns < 0) throw UsageError{cmd + ": --min-latency must be >= 0"};
    if (!(correction.gamma > 0 && correction.gamma <= 1))
      throw UsageError{cmd + ": --gamma must be in (0, 1]"};
    if (!(correction.max_stretch >= 1e-6 && correction.max_stretch <= 1e6))
      throw UsageError{cmd + ": --max-stretch must be between 1e-6 and 1e6"};
  }
  if (cmd == "export") {
    std::optional<std::uint32_t> rank;
    if (vm.count("rank")) rank = vm["rank"].as<std::uint32_t>();
    return run_export(dirs[0], rank, vm.count("corrected") ? &correction : nullptr);
  }
  if (cmd == "correct") return run_correct(dirs[0], correction);
  if (cmd == "otf2")
    return run_otf2(dirs[0], dirs[1], vm.count("corrected") ? &correction : nullptr);
  if (cmd == "view")
    return run_view(dirs[0],
                    vm.count("output") ? vm["output"].as<std::string>() : dirs[0] + "/view.html",
                    vm.count("measured") ? nullptr : &correction,
                    vm.count("report") ? vm["report"].as<std::string>() : std::string());
  return run_summary(dirs[0]);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "vcx-trace: " << e.what << " (see vcx-trace --help)\n";
    return kExitUsage;
  } catch (const DataError& e) {
    std::fflush(stdout);
    std::cerr << "vcx-trace: " << e.what << "\n";
    return kExitData;
  } catch (const std::exception& e) {
    std::cerr << "vcx-trace: " << e.what() << "\n";
    return kExitData;
  }
}
