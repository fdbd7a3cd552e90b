#include "state_file.h"

#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

namespace vcx::deadlock {
namespace {

using nlohmann::json;

const char* status_name(RankWait::Status s) {
  switch (s) {
    case RankWait::Status::Running: return "running";
    case RankWait::Status::Blocked: return "blocked";
    case RankWait::Status::Finished: return "finished";
  }
  return "running";
}

const char* need_name(WaitNeed n) {
  switch (n) {
    case WaitNeed::Message: return "message";
    case WaitNeed::Receiver: return "receiver";
    case WaitNeed::Collective: return "collective";
    case WaitNeed::Write: return "write";
    case WaitNeed::Lock: return "lock";
    case WaitNeed::Unknown: return "unknown";
  }
  return "unknown";
}

WaitNeed need_of(const std::string& s) {
  if (s == "message") return WaitNeed::Message;
  if (s == "receiver") return WaitNeed::Receiver;
  if (s == "collective") return WaitNeed::Collective;
  if (s == "write") return WaitNeed::Write;
  if (s == "lock") return WaitNeed::Lock;
  return WaitNeed::Unknown;
}

json counts_json(const std::vector<MessageCount>& counts) {
  json a = json::array();
  for (const MessageCount& m : counts) a.push_back({m.peer.value, m.comm, m.tag, m.count});
  return a;
}

std::vector<MessageCount> counts_of(const json& a) {
  std::vector<MessageCount> out;
  for (const json& e : a)
    out.push_back(MessageCount{Rank{e.at(0).get<std::uint32_t>()}, e.at(1).get<std::uint64_t>(),
                               e.at(2).get<std::int32_t>(), e.at(3).get<std::uint64_t>()});
  return out;
}

}  // namespace

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string state_path(const std::string& dir, std::uint32_t rank) {
  return dir + "/state-" + std::to_string(rank) + ".json";
}
std::string maps_path(const std::string& dir, std::uint32_t rank) {
  return dir + "/maps-" + std::to_string(rank) + ".txt";
}
std::string confirm_path(const std::string& dir) { return dir + "/confirm.json"; }
std::string confirmed_path(const std::string& dir, std::uint32_t rank) {
  return dir + "/confirmed-" + std::to_string(rank) + ".json";
}
std::string found_path(const std::string& dir) { return dir + "/found.json"; }

std::string rank_words(const std::vector<Rank>& ranks) {
  std::string s;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) s += i + 1 == ranks.size() ? " and " : ", ";
    s += std::to_string(ranks[i].value);
  }
  return s;
}


std::string state_text(const RankView& v, std::uint32_t rank) {
  json j{{"rank", rank}, {"status", status_name(v.status)}, {"pid", v.pid}};
  if (v.status == RankWait::Status::Blocked) {
    j["entered"] = v.entered;
    j["call"] = v.wait.call;
    j["pc"] = v.wait.pc;
    j["all_of"] = v.wait.all_of;
    json conds = json::array();
    for (const WaitCondition& c : v.wait.conditions) {
      json ranks = json::array();
      for (const Rank r : c.ranks) ranks.push_back(r.value);
      conds.push_back({{"need", need_name(c.need)}, {"ranks", ranks}, {"comm", c.comm},
                       {"tag", c.tag}, {"instance", c.instance}, {"call", c.call},
                       {"root", c.root}, {"resource", c.resource}, {"shared", c.shared}});
    }
    j["conditions"] = conds;
    j["sending"] = counts_json(v.wait.sending);
  }
  if (v.status != RankWait::Status::Running) {
    json colls = json::array();
    for (const WaitFacts::Instances& i : v.facts.collectives) {
      json recent = json::array();
      for (const WaitFacts::Operation& o : i.recent) recent.push_back({o.instance, o.call, o.root});
      colls.push_back({i.comm, i.started, recent});
    }
    j["facts"] = {{"sent", counts_json(v.facts.sent)},
                  {"received", counts_json(v.facts.received)},
                  {"pending_receives", v.facts.pending_receives},
                  {"collectives", colls},
                  {"locks_held", v.facts.locks_held},
                  {"locks_held_shared", v.facts.locks_held_shared}};
  }
  return j.dump();
}

std::optional<RankView> parse_state(const std::string& text) {
  try {
    const json j = json::parse(text);
    RankView v;
    const std::string status = j.at("status").get<std::string>();
    v.status = status == "blocked"    ? RankWait::Status::Blocked
               : status == "finished" ? RankWait::Status::Finished
                                      : RankWait::Status::Running;
    v.pid = j.value("pid", 0);
    if (v.status == RankWait::Status::Blocked) {
      v.entered = j.at("entered").get<std::uint64_t>();
      v.wait.call = j.at("call").get<std::string>();
      v.wait.pc = j.at("pc").get<std::uint64_t>();
      v.wait.all_of = j.at("all_of").get<bool>();
      for (const json& c : j.at("conditions")) {
        WaitCondition w;
        w.need = need_of(c.at("need").get<std::string>());
        for (const json& r : c.at("ranks")) w.ranks.push_back(Rank{r.get<std::uint32_t>()});
        w.comm = c.at("comm").get<std::uint64_t>();
        w.tag = c.at("tag").get<std::int32_t>();
        w.instance = c.at("instance").get<std::uint64_t>();
        w.call = c.at("call").get<std::uint16_t>();
        w.root = c.at("root").get<std::int32_t>();
        w.resource = c.value("resource", std::uint64_t{0});
        w.shared = c.value("shared", false);
        v.wait.conditions.push_back(std::move(w));
      }
      v.wait.sending = counts_of(j.value("sending", json::array()));
    }
    if (v.status != RankWait::Status::Running) {
      const json& f = j.at("facts");
      v.facts.sent = counts_of(f.at("sent"));
      v.facts.received = counts_of(f.at("received"));
      v.facts.pending_receives = f.at("pending_receives").get<std::uint64_t>();
      for (const json& i : f.at("collectives")) {
        WaitFacts::Instances in{i.at(0).get<std::uint64_t>(), i.at(1).get<std::uint64_t>(), {}};
        for (const json& o : i.at(2))
          in.recent.push_back(WaitFacts::Operation{o.at(0).get<std::uint64_t>(),
                                                   o.at(1).get<std::uint16_t>(),
                                                   o.at(2).get<std::int32_t>()});
        v.facts.collectives.push_back(std::move(in));
      }
      v.facts.locks_held =
          f.value("locks_held", json::array()).get<std::vector<std::uint64_t>>();
      v.facts.locks_held_shared =
          f.value("locks_held_shared", json::array()).get<std::vector<std::uint64_t>>();
    }
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string confirm_text(const ConfirmRequest& c) {
  json entries = json::array();
  for (const auto& [rank, entry] : c.entries) entries.push_back({rank, entry});
  return json{{"number", c.number}, {"entries", entries}}.dump();
}

std::optional<ConfirmRequest> parse_confirm(const std::string& text) {
  try {
    const json j = json::parse(text);
    ConfirmRequest c;
    c.number = j.at("number").get<std::uint64_t>();
    for (const json& e : j.at("entries"))
      c.entries.emplace_back(e.at(0).get<std::uint32_t>(), e.at(1).get<std::uint64_t>());
    return c;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace vcx::deadlock
