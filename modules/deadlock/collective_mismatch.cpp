#include "collective_mismatch.h"

#include <algorithm>

#include "state_file.h"

namespace vcx::deadlock {
namespace {

using nlohmann::json;

const char* kind_name(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::AllToAll: return "all-to-all";
    case CollectiveKind::OneToAll: return "one-to-all";
    case CollectiveKind::AllToOne: return "all-to-one";
    case CollectiveKind::Prefix: return "prefix";
    case CollectiveKind::Bipartite: return "bipartite";
  }
  return "?";
}

bool rooted(CollectiveKind k) {
  return k == CollectiveKind::OneToAll || k == CollectiveKind::AllToOne;
}


std::string ordinal(std::uint64_t n) {
  const std::uint64_t tens = n % 100, ones = n % 10;
  const char* suffix = (tens >= 11 && tens <= 13) ? "th"
                       : ones == 1                ? "st"
                       : ones == 2                ? "nd"
                       : ones == 3                ? "rd"
                                                  : "th";
  return std::to_string(n) + suffix;
}

}  // namespace

std::string mismatch_path(const std::string& dir, std::uint32_t rank) {
  return dir + "/mismatch-" + std::to_string(rank) + ".json";
}

void MismatchRecords::add(const CollectiveMismatch& m) {
  json members = json::array();
  for (const Rank r : m.members) members.push_back(r.value);
  json rec{{"group", m.group.value},
           {"instance", m.instance},
           {"members", members},
           {"kind", kind_name(m.kind)},
           {"operation", m.operation_name},
           {"call", m.call_name},
           {"pc", m.call_site}};
  if (rooted(m.kind)) rec["root"] = m.root.value;
  by_group_[m.group.value] = std::move(rec);
}

std::string MismatchRecords::text() const {
  json all = json::array();
  for (const auto& [group, rec] : by_group_) all.push_back(rec);
  return all.dump();
}

MismatchFindings mismatch_findings(const std::string& dir, int ranks, const LineOf& line_of) {
  // Per group: the earliest instance any member reported, and each member's
  // call there.
  struct Group {
    std::uint64_t first = ~std::uint64_t{0};
    json members;
    std::map<std::uint32_t, json> calls;
  };
  std::map<std::uint64_t, Group> groups;
  for (int r = 0; r < ranks; ++r) {
    const std::string text = read_text(mismatch_path(dir, static_cast<std::uint32_t>(r)));
    if (text.empty()) continue;
    json list;
    try {
      list = json::parse(text);
    } catch (const std::exception&) {
      continue;
    }
    for (const json& rec : list) {
      Group& g = groups[rec.at("group").get<std::uint64_t>()];
      const std::uint64_t instance = rec.at("instance").get<std::uint64_t>();
      if (instance < g.first) {
        g.first = instance;
        g.calls.clear();
      }
      if (instance != g.first) continue;
      if (!rec.at("members").empty()) g.members = rec.at("members");
      json call{{"rank", r}, {"operation", rec.value("operation", "")},
                {"call", rec.value("call", "")}, {"kind", rec.value("kind", "")}};
      if (rec.contains("root")) call["root"] = rec["root"];
      call["at"] = line_of(static_cast<std::uint32_t>(r), rec.value("pc", std::uint64_t{0}));
      g.calls[static_cast<std::uint32_t>(r)] = std::move(call);
    }
  }
  MismatchFindings out;
  for (auto& [id, g] : groups) {
    json calls = json::array();
    for (auto& [rank, c] : g.calls) calls.push_back(c);
    std::vector<Rank> members;
    for (const json& m : g.members) members.push_back(Rank{m.get<std::uint32_t>()});
    json f{{"analysis", "deadlock"}, {"kind", "collective-mismatch"}, {"group", id},
           {"members", g.members}, {"instance", g.first}, {"calls", calls}};
    out.findings.push_back(f);
    const bool all = members.size() == static_cast<std::size_t>(ranks);
    out.text += "vcx: collective mismatch: the " + ordinal(g.first) + " collective on " +
                (all ? std::string("the group of all ranks")
                     : "the group of ranks " + rank_words(members)) +
                " is not the same call on every member\n";
    for (const json& c : calls) {
      const std::string op = c.value("operation", "");
      const std::string call = c.value("call", "");
      std::string what = op.empty() ? call : op;
      if (c.contains("root")) what += "(root " + std::to_string(c["root"].get<int>()) + ")";
      if (!op.empty() && call != op) what += ", completed by " + call;
      const std::string at = c.value("at", "");
      out.text += "  rank " + std::to_string(c["rank"].get<int>()) + ": " + what +
                  (at.empty() ? "" : " at " + at) + "\n";
    }
    if (calls.size() < members.size())
      out.text += "  (the other members' calls there are not known: they had completed it "
                  "long before they learnt of the mismatch)\n";
  }
  return out;
}

}  // namespace vcx::deadlock
