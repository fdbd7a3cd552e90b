#include "deadlock_watch.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include "collective_mismatch.h"
#include "state_file.h"
#include "vcx/atomic_file.h"
#include "vcx/symbolizer.h"
#include "zero_buffer.h"

namespace vcx::deadlock {
namespace {

using nlohmann::json;

// What the watch keeps between calls (vcx-run keeps the plugin loaded).
struct Watch {
  ConfirmRequest asked;  // the candidate being confirmed (number 0: none)
  bool found = false;
};
Watch& the_watch() {
  static Watch w;
  return w;
}

std::vector<RankView> read_states(const std::string& dir, int ranks) {
  std::vector<RankView> views(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    const std::string text = read_text(state_path(dir, static_cast<std::uint32_t>(r)));
    if (text.empty()) continue;  // never blocked: running
    if (std::optional<RankView> v = parse_state(text)) views[static_cast<std::size_t>(r)] = *v;
  }
  return views;
}

bool confirmed(const std::string& dir, const ConfirmRequest& c) {
  for (const auto& [rank, entry] : c.entries) {
    try {
      const json j = json::parse(read_text(confirmed_path(dir, rank)));
      if (j.at("number").get<std::uint64_t>() != c.number ||
          j.at("entered").get<std::uint64_t>() != entry)
        return false;
    } catch (const std::exception&) {
      return false;
    }
  }
  return true;
}

// Source lines of each rank's call, from its memory map.
class Lines {
 public:
  Lines(const std::string& dir) : dir_(dir) {}
  std::string at(std::uint32_t rank, std::uint64_t pc) {
    if (pc == 0) return {};
    auto& s = symbolizers_[rank];
    if (!s) s = std::make_unique<Symbolizer>(read_text(maps_path(dir_, rank)));
    const std::vector<SourceLocation> chain = s->resolve_inlined_return_address(pc);
    if (chain.empty()) return describe(SourceLocation{}, pc);
    // The outermost line that is the program's: through inlined code.
    return describe(chain.back(), pc);
  }

 private:
  std::string dir_;
  std::map<std::uint32_t, std::unique_ptr<Symbolizer>> symbolizers_;
};


// The finding as JSON, and its text.
json finding_of(const Deadlock& d, const std::vector<RankView>& views, Lines& lines) {
  json ranks = json::array();
  json calls = json::array();
  for (const StuckRank& s : d.ranks) {
    const RankView& v = views[s.rank.value];
    json waits = json::array();
    for (const Rank r : s.waits_for) waits.push_back(r.value);
    json mismatched = json::array();
    for (const Rank r : s.mismatched) mismatched.push_back(r.value);
    ranks.push_back(s.rank.value);
    calls.push_back({{"rank", s.rank.value},
                     {"call", v.wait.call},
                     {"at", lines.at(s.rank.value, v.wait.pc)},
                     {"waits_for", waits},
                     {"mismatched", mismatched}});
  }
  json finished = json::array();
  for (std::size_t r = 0; r < views.size(); ++r)
    if (views[r].status == RankWait::Status::Finished) finished.push_back(r);
  return json{{"analysis", "deadlock"}, {"kind", "deadlock"}, {"ranks", ranks},
              {"calls", calls}, {"finished", finished}};
}

std::string call_at(const json& c) {
  const std::string at = c.value("at", std::string());
  return c.value("call", std::string("?")) + (at.empty() ? "" : " at " + at);
}

// The wait-for chain in words, from the first rank until it closes (a
// cycle) or ends at a finished rank.
std::string chain_text(const json& finding) {
  std::map<std::uint32_t, json> by_rank;
  for (const json& c : finding.at("calls")) by_rank[c.at("rank").get<std::uint32_t>()] = c;
  std::vector<std::uint32_t> finished;
  for (const json& r : finding.at("finished")) finished.push_back(r.get<std::uint32_t>());
  std::uint32_t r = by_rank.begin()->first;
  std::vector<std::uint32_t> seen;
  std::string text;
  for (;;) {
    const json& c = by_rank.at(r);
    const json& waits = c.at("waits_for");
    text += (seen.empty() ? "rank " : ", which waits in ");
    if (seen.empty()) text += std::to_string(r) + " waits in ";
    text += call_at(c);
    seen.push_back(r);
    // The next: a stuck rank it waits for, seen ones last.
    std::optional<std::uint32_t> next;
    for (const json& w : waits) {
      const auto n = w.get<std::uint32_t>();
      if (by_rank.count(n) && (!next || std::count(seen.begin(), seen.end(), *next))) next = n;
    }
    if (!next) {
      if (!waits.empty()) {
        const auto n = waits.at(0).get<std::uint32_t>();
        text += " for rank " + std::to_string(n) +
                (std::count(finished.begin(), finished.end(), n) ? ", which has finished"
                                                                 : "");
      } else if (!c.at("mismatched").empty()) {
        text += ", a collective that rank " +
                std::to_string(c.at("mismatched").at(0).get<std::uint32_t>()) +
                " calls with another operation or root";
      }
      return text;
    }
    text += " for rank " + std::to_string(*next);
    if (std::count(seen.begin(), seen.end(), *next)) return text;
    r = *next;
  }
}

std::string finding_text(const json& finding) {
  std::vector<Rank> ranks;
  for (const json& r : finding.at("ranks")) ranks.push_back(Rank{r.get<std::uint32_t>()});
  std::string text = "vcx: deadlock: rank" + std::string(ranks.size() > 1 ? "s " : " ") +
                     rank_words(ranks) + (ranks.size() > 1 ? " wait" : " waits") +
                     " in calls that can never return\n";
  for (const json& c : finding.at("calls")) {
    text += "  rank " + std::to_string(c.at("rank").get<std::uint32_t>()) + ": " + call_at(c);
    std::vector<Rank> waits;
    for (const json& w : c.at("waits_for")) waits.push_back(Rank{w.get<std::uint32_t>()});
    if (!waits.empty()) text += ", waits for rank" + std::string(waits.size() > 1 ? "s " : " ") +
                                rank_words(waits);
    std::vector<Rank> other;
    for (const json& w : c.at("mismatched")) other.push_back(Rank{w.get<std::uint32_t>()});
    if (!other.empty())
      text += "; rank" + std::string(other.size() > 1 ? "s " : " ") + rank_words(other) +
              " called this collective with another operation or root";
    text += "\n";
  }
  text += "  " + chain_text(finding) + "\n";
  return text;
}

const char* need_kind(ZeroBufferNeed::Kind k) {
  switch (k) {
    case ZeroBufferNeed::Kind::Message: return "message";
    case ZeroBufferNeed::Kind::Receiver: return "receive";
    case ZeroBufferNeed::Kind::Collective: return "collective";
  }
  return "message";
}

// A potential deadlock as a finding: the ranks' calls as the deadlock's,
// each with what it needs and never gets.
json potential_finding(const PotentialDeadlock& d, const std::vector<RankLog>& logs,
                       Lines& lines) {
  json ranks = json::array();
  json calls = json::array();
  for (const ZeroBufferStuck& s : d.ranks) {
    json waits = json::array();
    json needs = json::array();
    for (const ZeroBufferNeed& n : s.needs) {
      if (std::find(waits.begin(), waits.end(), json(n.rank)) == waits.end())
        waits.push_back(n.rank);
      const LoggedCall other = logged_call(logs[n.rank], n.call);
      needs.push_back({{"rank", n.rank},
                       {"kind", need_kind(n.kind)},
                       {"call", other.name},
                       {"at", lines.at(n.rank, other.pc)}});
    }
    ranks.push_back(s.rank);
    calls.push_back({{"rank", s.rank},
                     {"call", s.call},
                     {"at", lines.at(s.rank, s.pc)},
                     {"waits_for", waits},
                     {"mismatched", json::array()},
                     {"needs", needs}});
  }
  return json{{"analysis", "deadlock"}, {"kind", "potential-deadlock"}, {"ranks", ranks},
              {"calls", calls}, {"finished", json::array()}};
}

std::string potential_text(const json& finding) {
  std::vector<Rank> ranks;
  for (const json& r : finding.at("ranks")) ranks.push_back(Rank{r.get<std::uint32_t>()});
  std::string text = "vcx: potential deadlock: rank" + std::string(ranks.size() > 1 ? "s " : " ") +
                     rank_words(ranks) + " would wait" +
                     " for ever in these calls if MPI did not buffer standard sends (the run "
                     "finished only because it did)\n";
  for (const json& c : finding.at("calls")) {
    text += "  rank " + std::to_string(c.at("rank").get<std::uint32_t>()) + ": " + call_at(c);
    std::string needs;
    for (const json& n : c.at("needs")) {
      const std::string other = call_at(n);
      const std::string peer = "rank " + std::to_string(n.at("rank").get<std::uint32_t>());
      needs += (needs.empty() ? ", needs " : " and ");
      const std::string kind = n.at("kind").get<std::string>();
      needs += kind == "message"    ? peer + "'s message, sent by its " + other
               : kind == "receive" ? peer + " to post the receive of its " + other
                                   : peer + " to enter the collective of its " + other;
    }
    text += needs + "\n";
  }
  text += "  " + chain_text(finding) + "\n";
  return text;
}

}  // namespace

void watch_for_deadlock(const ReportRequest& request, RunVerdict* out) {
  Watch& w = the_watch();
  if (w.found) return;
  const std::vector<RankView> views = read_states(request.dir, request.ranks);
  const std::optional<Deadlock> d = find_deadlock(views);
  if (!d) {
    w.asked = ConfirmRequest{w.asked.number, {}};
    return;
  }
  ConfirmRequest candidate{w.asked.number, {}};
  for (const StuckRank& s : d->ranks)
    candidate.entries.emplace_back(s.rank.value, views[s.rank.value].entered);
  if (w.asked.entries != candidate.entries) {
    // A new candidate: the tools confirm that their ranks are still there.
    candidate.number = w.asked.number + 1;
    w.asked = candidate;
    write_file_atomically(confirm_path(request.dir), confirm_text(candidate), nullptr);
    return;
  }
  if (!confirmed(request.dir, w.asked)) return;
  // Every rank of it was in its call from before its state was read until
  // its tool answered: all at once, with nothing left that can release them.
  w.found = true;
  Lines lines(request.dir);
  const json finding = finding_of(*d, views, lines);
  write_file_atomically(found_path(request.dir), json::array({finding}).dump(), nullptr);
  out->stop = true;
  for (const StuckRank& s : d->ranks)
    out->processes.emplace_back(s.rank.value, views[s.rank.value].pid);
  out->exit_status = kExitDeadlock;
  out->why = "a deadlock";
  out->text = finding_text(finding);
}

void build_deadlock_report(const ReportRequest& request, AnalysisReport* out) {
  Lines lines(request.dir);
  const MismatchFindings mismatches = mismatch_findings(
      request.dir, request.ranks,
      [&](std::uint32_t rank, std::uint64_t pc) { return lines.at(rank, pc); });
  const std::string text = read_text(found_path(request.dir));
  json findings = text.empty() ? json::array() : json::parse(text);
  const std::size_t deadlocks = findings.size(), mismatched = mismatches.findings.size();
  out->text = mismatches.text;
  // A run that deadlocked needs no replay to show what could have.
  std::size_t potential = 0;
  if (deadlocks == 0) {
    const std::vector<RankLog> logs = read_logs(request.dir, request.ranks);
    std::set<std::uint64_t> mismatched;
    for (const json& f : mismatches.findings) mismatched.insert(f.value("group", std::uint64_t{0}));
    if (const std::optional<PotentialDeadlock> d = find_potential_deadlock(logs, mismatched)) {
      const json f = potential_finding(*d, logs, lines);
      out->text += potential_text(f);
      findings.push_back(f);
      potential = 1;
    }
  }
  for (const json& f : mismatches.findings) findings.push_back(f);
  out->findings = findings.dump();
  out->counted = findings.size();
  if (deadlocks == 0 && mismatched == 0 && potential == 0) {
    out->text += "vcx: deadlock analysis: no deadlock\n";
    return;
  }
  std::string sum;
  if (deadlocks > 0)
    sum = std::to_string(deadlocks) + " deadlock" + (deadlocks == 1 ? "" : "s") +
          " (reported above)";
  else if (potential > 0)
    sum = "no deadlock, 1 potential deadlock";
  else
    sum = "no deadlock";
  if (mismatched > 0)
    sum += ", " + std::to_string(mismatched) + " collective mismatch" +
           (mismatched == 1 ? "" : "es");
  out->text += "vcx: deadlock analysis: " + sum + "\n";
}

}  // namespace vcx::deadlock
