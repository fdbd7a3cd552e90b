#include "matches_report.h"

#include <map>
#include <memory>
#include <sstream>

#include "vcx/analysis_files.h"
#include "vcx/symbolizer.h"

namespace vcx::matches {
namespace {

using nlohmann::json;

// Examples shown per source location in the text.
constexpr std::size_t kExamples = 3;

// Wildcard receives of one source location, over every rank.
struct Place {
  std::string call;
  std::uint64_t receives = 0;
  std::uint64_t with_alternatives = 0;
  std::vector<std::string> examples;
};

std::string rank_list(const json& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) out += i + 1 == ranks.size() ? " or " : ", ";
    out += std::to_string(ranks[i].get<int>());
  }
  return out;
}

}  // namespace

MatchesReport build_matches_report(const std::string& dir, int ranks) {
  MatchesReport out;
  out.findings = json::array();
  std::map<std::string, Place> places;  // by "call at file:line", in a stable order
  std::uint64_t unreported = 0;
  std::uint64_t not_listed = 0;  // receives with alternatives beyond what the tools kept
  for (int r = 0; r < ranks; ++r) {
    std::optional<json> file = read_rank_file(dir, r, "matches", "results", out.problems);
    if (!file) continue;
    const json& f = *file;
    Symbolizer symbols(f.value("maps", std::string()));
    auto locate = [&](std::uint64_t pc) {
      return pc == 0 ? SourceLocation{} : symbols.resolve_return_address(pc);
    };
    auto place_of = [&](const std::string& call, std::uint64_t pc, const SourceLocation& at) {
      return pc == 0 ? call : call + " at " + describe(at, pc);
    };
    unreported += f.value("stats", json::object()).value("unreported", std::uint64_t{0});
    not_listed += f.value("stats", json::object()).value("findings_dropped", std::uint64_t{0});
    for (const json& l : f.value("locations", json::array())) {
      const std::uint64_t pc = l.value("pc", std::uint64_t{0});
      const std::string call = l.value("call", std::string("?"));
      Place& p = places[place_of(call, pc, locate(pc))];
      p.call = call;
      p.receives += l.value("receives", std::uint64_t{0});
      p.with_alternatives += l.value("with_alternatives", std::uint64_t{0});
    }
    for (const json& x : f.value("results", json::array())) {
      const std::uint64_t pc = x.value("pc", std::uint64_t{0});
      const std::string call = x.value("call", std::string("?"));
      const SourceLocation at = locate(pc);
      json receive{{"rank", r}, {"index", x.value("index", 0)}, {"call", call}};
      if (at.has_line()) {
        receive["file"] = at.file;
        receive["line"] = at.line;
      } else {
        receive["file"] = nullptr;
        receive["line"] = nullptr;
      }
      receive["seq"] = x.value("seq", 0);
      const json alternatives = x.value("alternative_sources", json::array());
      const int matched = x.value("matched_source", 0);
      out.findings.push_back(json{{"analysis", "matches"},
                                  {"kind", "wildcard-receive"},
                                  {"receive", receive},
                                  {"matched_source", matched},
                                  {"alternative_sources", alternatives}});
      Place& p = places[place_of(call, pc, at)];
      if (p.examples.size() < kExamples)
        p.examples.push_back("rank " + std::to_string(r) + "'s wildcard receive #" +
                             std::to_string(x.value("index", 0)) + " matched rank " +
                             std::to_string(matched) + "; it could have matched rank " +
                             rank_list(alternatives) + " (completed by " +
                             x.value("completed_by", std::string("?")) + ", clocked call " +
                             std::to_string(x.value("seq", 0)) + " of rank " +
                             std::to_string(r) + ")");
    }
  }
  std::ostringstream text;
  for (const auto& [where, p] : places) {
    out.receives += p.receives;
    out.with_alternatives += p.with_alternatives;
    if (p.with_alternatives == 0) continue;
    text << "vcx matches: " << where << ": " << p.with_alternatives << " of " << p.receives
         << " wildcard receive" << (p.receives == 1 ? "" : "s")
         << " could have matched another source\n";
    for (const std::string& e : p.examples) text << "  e.g. " << e << "\n";
  }
  text << "vcx matches: " << out.with_alternatives << " of " << out.receives
       << " wildcard receive" << (out.receives == 1 ? "" : "s")
       << " could have matched a message of another rank";
  if (unreported > 0)
    text << " (" << unreported << " more never completed or whose match stayed unknown)";
  if (not_listed > 0)
    text << "; " << not_listed << " of them counted but not listed in the report (at most "
         << "100000 per rank are)";
  text << ".\n";
  out.text = text.str();
  return out;
}

}  // namespace vcx::matches
