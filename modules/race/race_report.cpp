#include "race_report.h"

#include <algorithm>
#include <map>
#include <memory>
#include <sstream>

#include "vcx/analysis_files.h"
#include "vcx/symbolizer.h"

namespace vcx::race {
namespace {

using nlohmann::json;

// One access as the report shows it.
struct Site {
  int rank = 0;
  std::string call, access, completed_at;
  bool local = false;  // a load or store of the program: complete at once
  SourceLocation where;
  std::uint64_t pc = 0;
  SourceLocation completed_where;  // of the call that completed it
  std::uint64_t completed_pc = 0;
  json clock;
  std::string place() const { return describe(where, pc); }
  // Orders the two sites of a finding.
  std::string key() const { return place() + "|" + call + "|" + access; }
};

struct Merged {
  Site a, b;
  json memory;
  std::string memory_text;
  std::uint64_t count = 0;
};

json site_json(const Site& s) {
  json j{{"rank", s.rank}, {"thread", 0}, {"call", s.call}, {"access", s.access}};
  if (s.where.has_line()) {
    j["file"] = s.where.file;
    j["line"] = s.where.line;
  } else {
    j["file"] = nullptr;
    j["line"] = nullptr;
  }
  j["function"] = s.where.function.empty() ? json(nullptr) : json(s.where.function);
  if (!s.where.object.empty()) {
    j["object"] = s.where.object;
    j["object_offset"] = s.where.offset;
  }
  j["local"] = s.local;
  if (!s.local) j["completed_at"] = s.completed_at;
  if (!s.local && s.completed_where.has_line()) {
    j["completed_at_file"] = s.completed_where.file;
    j["completed_at_line"] = s.completed_where.line;
  }
  j["clock"] = s.clock;
  return j;
}

// "MPI_Win_fence (a.c:60)", or the call alone where its line is unknown.
std::string completion(const Site& s) {
  if (s.completed_pc == 0 || s.completed_pc == s.pc) return s.completed_at;
  return s.completed_at + " (" + describe(s.completed_where, s.completed_pc) + ")";
}

std::string site_text(const Site& s) {
  std::string t = "  " + s.access + " by rank " + std::to_string(s.rank) + ": " + s.call + " at " +
                  s.place();
  if (!s.where.function.empty()) t += " in " + s.where.function;
  t += "\n";
  if (!s.local) t += "    complete at " + completion(s) + "\n";
  return t;
}

// Why the two race: neither completion happened before the other's start
// (a load or store is complete where it happens).
std::string why_text(const Site& a, const Site& b) {
  auto clause = [](const Site& s, const Site& other) {
    const std::string before = "did not happen before rank " + std::to_string(other.rank) +
                               "'s " + other.call + " started";
    if (s.local) return "rank " + std::to_string(s.rank) + "'s " + s.call + " " + before;
    return "rank " + std::to_string(s.rank) + "'s " + s.call + " was complete only at " +
           (s.completed_pc == s.pc ? std::string("its return") : completion(s)) + ", which " +
           before;
  };
  return "  nothing orders them: " + clause(a, b) + "; and " + clause(b, a) + "\n";
}

// What the report could not check: the loads and stores of ranks whose
// program was not built with the vcx compiler wrappers.
std::string unchecked_text(const std::vector<int>& ranks_without, int ranks) {
  if (ranks_without.empty()) return "Local loads and stores checked on every rank.";
  if (static_cast<int>(ranks_without.size()) == ranks)
    return "Not checked: local loads and stores (build with vcx-mpicc, vcx-oshcc, ... to check "
           "them).";
  std::string list;
  for (std::size_t i = 0; i < ranks_without.size() && i < 8; ++i)
    list += (i ? ", " : "") + std::to_string(ranks_without[i]);
  if (ranks_without.size() > 8) list += ", ...";
  return "Not checked: local loads and stores of rank" +
         std::string(ranks_without.size() == 1 ? " " : "s ") + list +
         " (not built with the vcx compiler wrappers).";
}

}  // namespace

RaceReport build_race_report(const std::string& dir, int ranks) {
  RaceReport out;
  out.findings = json::array();
  std::vector<json> files(static_cast<std::size_t>(ranks));
  std::vector<std::unique_ptr<Symbolizer>> symbolizers(static_cast<std::size_t>(ranks));
  std::uint64_t checked = 0, incomplete = 0, unknown = 0, dropped = 0, peak = 0;
  std::uint64_t overflows = 0;
  std::vector<int> uninstrumented;  // ranks whose loads and stores were not reported
  for (int r = 0; r < ranks; ++r) {
    std::optional<json> file = read_rank_file(dir, r, "race", "findings", out.problems);
    if (!file) continue;
    files[static_cast<std::size_t>(r)] = std::move(*file);
    const json& f = files[static_cast<std::size_t>(r)];
    symbolizers[static_cast<std::size_t>(r)] =
        std::make_unique<Symbolizer>(f.value("maps", std::string()));
    const json& st = f.value("stats", json::object());
    checked += st.value("accesses_checked", std::uint64_t{0});
    incomplete += st.value("incomplete", std::uint64_t{0});
    unknown += st.value("unknown_memory", std::uint64_t{0});
    dropped += st.value("findings_dropped", std::uint64_t{0});
    peak = std::max(peak, st.value("peak_stored", std::uint64_t{0}));
    overflows += st.value("local_overflows", std::uint64_t{0});
    if (!st.value("local_accesses", false)) uninstrumented.push_back(r);
  }
  auto locate = [&](int rank, std::uint64_t pc) {
    if (rank < 0 || rank >= ranks || !symbolizers[static_cast<std::size_t>(rank)] || pc == 0)
      return SourceLocation{};
    return symbolizers[static_cast<std::size_t>(rank)]->resolve_return_address(pc);
  };

  std::map<std::string, Merged> merged;  // by the pair of sites, in a stable order
  for (const json& f : files) {
    if (!f.is_object()) continue;
    for (const json& finding : f.value("findings", json::array())) {
      const json& acc = finding.value("accesses", json::array());
      if (acc.size() != 2) continue;
      Site s[2];
      for (int i = 0; i < 2; ++i) {
        const json& a = acc[static_cast<std::size_t>(i)];
        s[i].rank = a.value("rank", 0);
        s[i].call = a.value("call", std::string("?"));
        s[i].access = a.value("access", std::string("?"));
        s[i].completed_at = a.value("completed_at", std::string("?"));
        s[i].local = a.value("local", false);
        s[i].pc = a.value("pc", std::uint64_t{0});
        s[i].where = locate(s[i].rank, s[i].pc);
        s[i].completed_pc = a.value("completed_pc", std::uint64_t{0});
        s[i].completed_where = locate(s[i].rank, s[i].completed_pc);
        s[i].clock = a.value("clock", json::array());
      }
      if (s[1].key() < s[0].key()) std::swap(s[0], s[1]);
      // One race per pair of source locations (not per rank, time, or
      // access on a line: `x += 1` loads and stores), shown by its writes
      // where a line has both.
      const std::string key = s[0].place() + "||" + s[1].place();
      Merged& m = merged[key];
      if (m.count > 0) {
        if (m.a.access != "write" && s[0].access == "write" && m.a.place() == s[0].place())
          m.a = s[0];
        if (m.b.access != "write" && s[1].access == "write" && m.b.place() == s[1].place())
          m.b = s[1];
      }
      if (m.count == 0) {
        m.a = s[0];
        m.b = s[1];
        const json& mem = finding.value("memory", json::object());
        const int owner = mem.value("owner", 0);
        const SourceLocation made = locate(owner, mem.value("created_pc", std::uint64_t{0}));
        const std::uint64_t offset = mem.value("offset", std::uint64_t{0});
        const std::uint64_t bytes = mem.value("bytes", std::uint64_t{0});
        const std::string kind = mem.value("kind", std::string("memory"));
        m.memory = json{{"kind", kind},
                        {"owner", owner},
                        {"ordinal", mem.value("ordinal", 0)},
                        {"offset", offset},
                        {"bytes", bytes}};
        if (made.has_line()) m.memory["created_at"] = made.file + ":" + std::to_string(made.line);
        // Dynamic windows are addressed by address, the others from their start.
        const bool by_address = kind == "MPI dynamic window" || kind == "symmetric memory" ||
                                kind == "local memory";
        auto number = [&](std::uint64_t v) {
          if (!by_address) return std::to_string(v);
          std::ostringstream h;
          h << "0x" << std::hex << v;
          return h.str();
        };
        const std::string name = kind == "symmetric memory" || kind == "local memory"
                                     ? kind
                                     : kind + " " + std::to_string(mem.value("ordinal", 0));
        m.memory_text = name + " of rank " +
                        std::to_string(owner) + ", bytes " + number(offset) + ".." +
                        number(offset + (bytes > 0 ? bytes - 1 : 0)) +
                        (by_address ? "" : " from its start") +
                        (made.has_line() ? " (created at " + made.file + ":" +
                                               std::to_string(made.line) + ")"
                                         : "");
      }
      m.count += finding.value("count", std::uint64_t{1});
    }
  }

  std::ostringstream text;
  for (const auto& [key, m] : merged) {
    text << "==================\n"
         << "vcx: data race on " << m.memory_text << "\n"
         << site_text(m.a) << site_text(m.b) << why_text(m.a, m.b);
    if (m.count > 1) text << "  seen " << m.count << " times\n";
    json finding{{"analysis", "race"},
                 {"kind", "data-race"},
                 {"memory", m.memory},
                 {"accesses", json::array({site_json(m.a), site_json(m.b)})},
                 {"count", m.count}};
    out.findings.push_back(std::move(finding));
  }
  out.races = merged.size();
  if (out.races > 0) text << "==================\n";
  text << "vcx: ";
  if (out.races == 0)
    text << "no data race found";
  else
    text << out.races << " data race" << (out.races == 1 ? "" : "s") << " found";
  text << " (race analysis: " << checked << " accesses to exposed memory compared, at most "
       << peak << " kept by one tool";
  if (dropped > 0) text << "; " << dropped << " further findings not kept";
  if (incomplete > 0) text << "; " << incomplete << " accesses never completed";
  if (unknown > 0) text << "; " << unknown << " accesses to memory never seen created";
  text << ")";
  if (overflows > 0)
    text << "; some local loads and stores went unreported (more than 1024 buffers of operations "
            "in flight)";
  text << ". " << unchecked_text(uninstrumented, ranks) << "\n";
  out.text = text.str();
  return out;
}

}  // namespace vcx::race
