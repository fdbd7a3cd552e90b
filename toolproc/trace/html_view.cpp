#include "html_view.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "site_names.h"
#include "vcx/atomic_file.h"
#include "view_assets.h"

namespace vcx::trace {
namespace {

// Indices into a table of distinct strings.
class StringTable {
 public:
  int index(const std::string& s) {
    auto [it, added] = index_.try_emplace(s, static_cast<int>(items_.size()));
    if (added) items_.push_back(s);
    return it->second;
  }
  const std::vector<std::string>& items() const { return items_; }

 private:
  std::map<std::string, int> index_;
  std::vector<std::string> items_;
};

std::string hex(std::uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

// `text` with every "{{KEY}}" of `values` replaced, once each, in order.
std::string fill(std::string_view text,
                 const std::vector<std::pair<std::string, std::string>>& values) {
  std::string out;
  out.reserve(text.size());
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t open = text.find("{{", at);
    if (open == std::string_view::npos) break;
    const std::size_t close = text.find("}}", open);
    if (close == std::string_view::npos) break;
    out.append(text.substr(at, open - at));
    const std::string key(text.substr(open + 2, close - open - 2));
    bool found = false;
    for (const auto& [k, v] : values)
      if (k == key) {
        out.append(v);
        found = true;
      }
    if (!found) out.append(text.substr(open, close + 2 - open));
    at = close + 2;
  }
  out.append(text.substr(at));
  return out;
}

// JSON inside <script>: "</" would end the element.
std::string script_safe(std::string json) {
  for (std::size_t p = 0; (p = json.find("</", p)) != std::string::npos; p += 3)
    json.replace(p, 2, "<\\/");
  return json;
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

// A report's findings as the page shows them: alternative matches on the
// receives' calls (rank, index in the rank's calls), races as text,
// deadlocks as each stuck rank's call, line and the ranks it waits for (the
// calls never returned, so they are drawn after each rank's last call).
nlohmann::json findings_of(const TraceSet& trace, const std::string& report,
                           ViewSummary& summary) {
  using nlohmann::json;
  json out = {{"alternatives", json::array()}, {"races", json::array()}, {"deadlocks", json::array()}};
  if (report.empty()) return out;
  json doc;
  try {
    doc = json::parse(report);
  } catch (const json::exception& e) {
    throw TraceError(std::string("the report is not JSON: ") + e.what());
  }
  // seq -> index of the call in its rank's trace.
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::size_t> index_of;
  for (const RankTrace& r : trace.ranks)
    for (std::size_t i = 0; i < r.calls.size(); ++i) index_of[{r.rank.value, r.calls[i].seq}] = i;
  auto place = [](const json& site) {
    std::string s = site.value("call", std::string("?"));
    if (site.contains("file") && site["file"].is_string())
      s += " at " + site["file"].get<std::string>() + ":" +
           std::to_string(site.value("line", 0));
    return s;
  };
  for (const json& f : doc.value("findings", json::array())) {
    const std::string kind = f.value("kind", std::string());
    if (kind == "wildcard-receive") {
      const json& rec = f.value("receive", json::object());
      const auto rank = rec.value("rank", 0u);
      const auto it = index_of.find({rank, rec.value("seq", std::uint64_t{0})});
      if (it == index_of.end()) continue;  // not in this trace
      out["alternatives"].push_back({rank, it->second, f.value("matched_source", -1),
                                     f.value("alternative_sources", json::array())});
      ++summary.alternatives;
    } else if (kind == "data-race") {
      const json& a = f.value("accesses", json::array());
      if (a.size() != 2) continue;
      out["races"].push_back("rank " + std::to_string(a[0].value("rank", 0)) + " " +
                             a[0].value("access", std::string("access")) + " in " + place(a[0]) +
                             " races with rank " + std::to_string(a[1].value("rank", 0)) + " " +
                             a[1].value("access", std::string("access")) + " in " +
                             place(a[1]) + " (" + std::to_string(f.value("count", 1)) +
                             (f.value("count", 1) == 1 ? " time)" : " times)"));
      ++summary.races;
    } else if (kind == "deadlock" && f.value("analysis", std::string()) == "deadlock") {
      json stuck = json::array();
      for (const json& c : f.value("calls", json::array()))
        stuck.push_back({c.value("rank", 0u), c.value("call", std::string("?")),
                         c.value("at", std::string()), c.value("waits_for", json::array())});
      json finished = f.value("finished", json::array());
      out["deadlocks"].push_back({{"ranks", std::move(stuck)}, {"finished", std::move(finished)}});
      ++summary.deadlocks;
    }
  }
  auto& alternatives = out["alternatives"];
  std::sort(alternatives.begin(), alternatives.end(), [](const json& a, const json& b) {
    return std::make_pair(a[0].get<std::uint32_t>(), a[1].get<std::size_t>()) <
           std::make_pair(b[0].get<std::uint32_t>(), b[1].get<std::size_t>());
  });
  return out;
}

ViewSummary write_view(const TraceSet& trace, const std::string& out, const ViewInput& in) {
  using nlohmann::json;
  ViewSummary summary;
  json findings = findings_of(trace, in.report, summary);
  StringTable names, sites, groups;
  // Times relative to the run's first enter, so that they stay exact as
  // JavaScript numbers (doubles) whatever the clock's origin.
  std::uint64_t origin = UINT64_MAX;
  for (const RankTrace& r : trace.ranks)
    for (const Record& c : r.calls)
      if (c.enter_ns) origin = std::min(origin, c.enter_ns);
  if (origin == UINT64_MAX) origin = 0;

  // A message's two ends: (source, destination, queue, position).
  using MessageKey = std::tuple<std::uint32_t, std::uint32_t, std::uint64_t, std::uint64_t,
                                std::uint64_t>;
  std::map<MessageKey, std::pair<std::uint32_t, std::size_t>> sent;
  std::vector<std::tuple<std::uint32_t, std::size_t, MessageKey, bool>> received;
  // A collective's instance: the n-th call on a group at each member.
  using Member = std::pair<std::uint32_t, std::size_t>;  // rank, index of its call
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::vector<Member>> instances;

  json ranks = json::array();
  for (const RankTrace& r : trace.ranks) {
    SiteNames site_names(in.maps_dir, r.rank);
    json t = json::array(), name = json::array(), site = json::array(), group = json::array(),
         clock = json::array();
    std::vector<ClockValue> last(trace.world_size, 0);
    std::map<std::uint64_t, std::uint64_t> occurrences;
    std::uint64_t previous_ns = origin;
    for (std::size_t i = 0; i < r.calls.size(); ++i) {
      const Record& c = r.calls[i];
      // A call without times (cut off by a crash) stands after the one before.
      std::uint64_t enter_ns = c.enter_ns, leave_ns = c.leave_ns;
      if (enter_ns == 0) enter_ns = leave_ns = previous_ns;
      previous_ns = std::max(enter_ns, leave_ns);
      // Without physical times, calls stand in program order.
      const std::uint64_t enter = trace.timed ? enter_ns - std::min(enter_ns, origin) : 1000 * i;
      const std::uint64_t leave =
          trace.timed ? std::max(leave_ns, enter_ns) - std::min(enter_ns, origin)
                      : 1000 * i + 800;
      t.push_back(enter);
      t.push_back(leave);
      name.push_back(names.index(c.call));
      site.push_back(c.call_site ? sites.index(site_names.name(c.call_site)) : -1);
      if (c.group.value != 0) {
        group.push_back(groups.index(hex(c.group.value)));
        // The n-th collective a member initiates on a group is the n-th of
        // every member (MPI's rule); a wait completing one is no instance.
        if (!completes_requests(c.call))
          instances[{c.group.value, occurrences[c.group.value]++}].emplace_back(r.rank.value, i);
      } else {
        group.push_back(-1);
      }
      json delta = json::array();
      for (std::size_t k = 0; k < c.clock.size() && k < last.size(); ++k)
        if (c.clock[k] != last[k]) {
          delta.push_back(k);
          delta.push_back(c.clock[k]);
          last[k] = c.clock[k];
        }
      clock.push_back(std::move(delta));
      for (const MessageEnd& m : c.messages) {
        if (m.sent)
          sent[{r.rank.value, m.peer.value, m.queue.a, m.queue.b, m.position}] = {r.rank.value, i};
        else
          received.emplace_back(r.rank.value, i,
                                MessageKey{m.peer.value, r.rank.value, m.queue.a, m.queue.b,
                                           m.position},
                                m.wildcard);
      }
      ++summary.calls;
    }
    ranks.push_back({{"rank", r.rank.value}, {"t", std::move(t)}, {"name", std::move(name)},
                     {"site", std::move(site)}, {"group", std::move(group)},
                     {"clock", std::move(clock)}});
  }
  json messages = json::array();
  for (const auto& [rank, index, key, wildcard] : received)
    if (auto it = sent.find(key); it != sent.end()) {
      messages.push_back({it->second.first, it->second.second, rank, index, wildcard ? 1 : 0});
      ++summary.messages;
      summary.wildcard += wildcard;
    }
  json collectives = json::array();
  for (const auto& [key, members] : instances) {
    if (members.size() < 2) continue;
    json c = json::array({groups.index(hex(key.first))});
    for (const auto& [rank, index] : members) {
      c.push_back(rank);
      c.push_back(index);
    }
    collectives.push_back(std::move(c));
    ++summary.collectives;
  }
  const json data = {{"world", trace.world_size},  {"timed", trace.timed},
                     {"corrected", in.corrected},  {"violations", in.violations_fixed},
                     {"findings", std::move(findings)},
                     {"names", names.items()},     {"sites", sites.items()},
                     {"groups", groups.items()},   {"ranks", std::move(ranks)},
                     {"messages", std::move(messages)}, {"collectives", std::move(collectives)}};
  const std::string page =
      fill(view::k_view_html, {{"TITLE", html_escape(in.title)},
                               {"CSS", std::string(view::k_view_css)},
                               {"DATA", script_safe(data.dump())},
                               {"JS", std::string(view::k_view_js)}});
  std::string error;
  if (!write_file_atomically(out, page, &error)) throw TraceError(error);
  return summary;
}

}  // namespace vcx::trace
