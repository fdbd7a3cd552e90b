// vcx-trace: reads the per-rank trace files written by `vcx-run --trace DIR`.
//
// Exit codes: 0 success, 2 the trace cannot be read (missing, not a trace,
// other format version, corrupt), 64 the command line is wrong (EX_USAGE).
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/program_options.hpp>

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
    "  help [CMD]    this text, or the options of CMD\n"
    "\n"
    "options:\n"
    "  -h, --help    show help\n";

const char* const kExportHelp =
    "usage: vcx-trace export [--rank R] DIR\n"
    "\n"
    "Prints one JSON object per clocked call, ranks in order and each rank's calls\n"
    "in program order:\n"
    "  {\"rank\":0,\"seq\":0,\"call\":\"MPI_Send\",\"peers\":[1],\"group\":\"0x..\",\n"
    "   \"queue\":[\"0x..\",\"0x..\"],\"clock\":[1,0,0]}\n"
    "peers, group and queue are left out when empty or zero.\n"
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

class JsonLine {
 public:
  void clear() { s_.clear(); }
  void raw(std::string_view v) { s_.append(v); }
  void number(std::uint64_t v) {
    char b[24];
    auto r = std::to_chars(b, b + sizeof b, v);
    s_.append(b, r.ptr);
  }
  void hex(std::uint64_t v) {
    char b[24];
    auto r = std::to_chars(b, b + sizeof b, v, 16);
    s_.append("\"0x");
    s_.append(b, r.ptr);
    s_.push_back('"');
  }
  void string(std::string_view v) {
    s_.push_back('"');
    for (unsigned char c : v) {
      switch (c) {
        case '"': s_.append("\\\""); break;
        case '\\': s_.append("\\\\"); break;
        case '\n': s_.append("\\n"); break;
        case '\t': s_.append("\\t"); break;
        case '\r': s_.append("\\r"); break;
        default:
          if (c < 0x20) {
            static const char* digits = "0123456789abcdef";
            s_.append("\\u00");
            s_.push_back(digits[c >> 4]);
            s_.push_back(digits[c & 15]);
          } else {
            s_.push_back(static_cast<char>(c));
          }
      }
    }
    s_.push_back('"');
  }
  void write(std::FILE* f) { std::fwrite(s_.data(), 1, s_.size(), f); }

 private:
  std::string s_;
};

void format_record(JsonLine& j, vcx::Rank rank, const vcx::trace::Record& r) {
  j.clear();
  j.raw("{\"rank\":");
  j.number(rank.value);
  j.raw(",\"seq\":");
  j.number(r.seq);
  j.raw(",\"call\":");
  j.string(r.call);
  if (!r.peers.empty()) {
    j.raw(",\"peers\":[");
    for (std::size_t i = 0; i < r.peers.size(); ++i) {
      if (i) j.raw(",");
      j.number(r.peers[i].value);
    }
    j.raw("]");
  }
  if (r.group.value != 0) {
    j.raw(",\"group\":");
    j.hex(r.group.value);
  }
  if (r.queue != vcx::QueueId{}) {
    j.raw(",\"queue\":[");
    j.hex(r.queue.a);
    j.raw(",");
    j.hex(r.queue.b);
    j.raw("]");
  }
  j.raw(",\"clock\":[");
  for (std::size_t i = 0; i < r.clock.size(); ++i) {
    if (i) j.raw(",");
    j.number(r.clock[i]);
  }
  j.raw("]}\n");
}

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

// ------------------------------------------------------------------ commands

int run_export(const std::string& dir, std::optional<std::uint32_t> only_rank) {
  OpenTrace t = list_trace(dir);
  if (only_rank) {
    auto it = std::find_if(t.files.begin(), t.files.end(),
                           [&](const auto& f) { return f.rank.value == *only_rank; });
    if (it == t.files.end())
      throw DataError{dir + " has no trace of rank " + std::to_string(*only_rank)};
    t.files = {*it};
  }
  vcx::trace::Reader reader;
  vcx::trace::Record rec;
  JsonLine line;
  for (const auto& f : t.files) {
    open_rank(reader, f, t);
    std::uint64_t n = 0;
    while (reader.next(rec)) {
      format_record(line, f.rank, rec);
      line.write(stdout);
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
  return nullptr;
}

po::options_description visible_options(const std::string& cmd) {
  po::options_description d("options");
  d.add_options()("help,h", "show help");
  if (cmd == "export")
    d.add_options()("rank", po::value<std::uint32_t>()->value_name("R"), "only this rank");
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
  if (dirs.size() != 1)
    throw UsageError{cmd + (dirs.empty() ? ": no trace directory given"
                                         : ": expected one trace directory")};
  if (cmd == "export") {
    std::optional<std::uint32_t> rank;
    if (vm.count("rank")) rank = vm["rank"].as<std::uint32_t>();
    return run_export(dirs[0], rank);
  }
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
