#include "zero_buffer.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "state_file.h"
#include "vcx/call_program.h"

namespace vcx::deadlock {
namespace {

// A message between two ranks: the position-th on its queue.
struct MessageKey {
  std::uint32_t from = 0, to = 0;
  std::uint64_t queue_a = 0, queue_b = 0, position = 0;
  bool operator==(const MessageKey&) const = default;
};
struct MessageKeyHash {
  std::size_t operator()(const MessageKey& k) const noexcept {
    std::uint64_t h = k.from * 0x9e3779b97f4a7c15ull ^ k.to;
    for (const std::uint64_t v : {k.queue_a, k.queue_b, k.position})
      h = (h ^ v) * 0x100000001b3ull + (h >> 29);
    return static_cast<std::size_t>(h);
  }
};

// A rank's log as the points it passes in order: a call that completed
// sends without being clocked (a wait), and each clocked call's entry and
// completion. Its progress is how many it passed.
using Progress = std::uint64_t;

struct Need {
  ZeroBufferNeed::Kind kind{};
  std::uint32_t rank = 0;
  Progress at = 0;          // met once `rank` has got this far
  std::uint64_t other = 0;  // that rank's call (ZeroBufferNeed::call)
  // The message was taken by a receive posted for any source: without
  // buffering, another receive or another message could match instead.
  bool wildcard = false;
};

struct Step {
  enum class Kind : std::uint8_t { Wait, Enter, Complete };
  Kind kind{};
  std::uint32_t name = 0;  // the call's (name_key)
  std::uint64_t pc = 0;
  std::vector<Need> needs;
};

// A rank's steps, with where each clocked call's are, and the records
// that name what a step needs (resolved against the other ranks' logs).
struct RankSteps {
  std::vector<Step> steps;
  std::vector<std::size_t> enter;      // clocked call → its Enter step
  std::vector<std::size_t> gap_start;  // clocked call → the first step after the call before it
  // Step, and its Received, Completed or completed Collective record.
  std::vector<std::pair<std::size_t, const LogRecord*>> needs;
};

RankSteps steps_of(const RankLog& log) {
  RankSteps s;
  std::size_t gap = 0;
  for (const LogRecord& x : log.records) {
    if (x.type == LogType::Call) {
      s.gap_start.push_back(gap);
      s.enter.push_back(s.steps.size());
      s.steps.push_back(Step{Step::Kind::Enter, name_key(x.model, x.call), x.b, {}});
      s.steps.push_back(Step{Step::Kind::Complete, name_key(x.model, x.call), x.b, {}});
      gap = s.steps.size();
      continue;
    }
    const bool before = x.type == LogType::Completed && (x.flags & kLogBefore) != 0;
    // A wait's completions follow one another, the first marked.
    if (before && ((x.flags & kLogNewWait) != 0 || s.steps.size() == gap))
      s.steps.push_back(Step{Step::Kind::Wait, name_key(x.model, x.call), x.d, {}});
    const bool completes = x.type == LogType::Received || x.type == LogType::Completed ||
                           (x.type == LogType::Collective && (x.flags & kLogCompleted) != 0);
    if (completes && !s.steps.empty()) s.needs.emplace_back(s.steps.size() - 1, &x);
  }
  return s;
}

// A collective instance's member.
struct MemberKey {
  std::uint64_t group = 0, instance = 0;
  std::uint32_t rank = 0;
  bool operator==(const MemberKey&) const = default;
};
struct MemberKeyHash {
  std::size_t operator()(const MemberKey& k) const noexcept {
    return MessageKeyHash{}(MessageKey{k.rank, 0, k.group, k.instance, 0});
  }
};

// The members whose part of a collective instance reaches `self`'s
// completion (vcx/call_program.h, CollectiveKind).
std::vector<std::uint32_t> feeding(const std::vector<std::uint32_t>& members, std::uint32_t self,
                                   std::uint64_t kind, std::uint32_t root) {
  std::vector<std::uint32_t> out;
  const auto me = std::find(members.begin(), members.end(), self);
  if (me == members.end()) return out;
  switch (static_cast<vcx::CollectiveKind>(kind)) {
    case vcx::CollectiveKind::AllToAll:
      out = members;
      break;
    case vcx::CollectiveKind::OneToAll:
      out.push_back(root);
      break;
    case vcx::CollectiveKind::AllToOne:
      if (self == root) out = members;
      break;
    case vcx::CollectiveKind::Prefix:
      out.assign(members.begin(), me);
      break;
    case vcx::CollectiveKind::Bipartite:
      break;  // intercommunicators: not followed
  }
  std::erase(out, self);
  return out;
}

std::vector<RankSteps> build(const std::vector<RankLog>& logs,
                             const std::set<std::uint64_t>& mismatched) {
  std::vector<RankSteps> ranks;
  for (const RankLog& log : logs) ranks.push_back(steps_of(log));
  // Where each message was sent (the sender's progress once it is) and
  // where its receive was posted (the receiver's), with the calls.
  struct End {
    Progress at = 0;
    std::uint64_t call = 0;
    bool wildcard = false;  // a receive posted for any source
  };
  std::unordered_map<MessageKey, End, MessageKeyHash> sent, posted;
  std::unordered_map<MemberKey, End, MemberKeyHash> entered;  // collective instances
  std::size_t messages = 0;
  for (const RankLog& log : logs)
    for (const LogRecord& x : log.records) messages += x.type == LogType::Sent ? 1 : 0;
  sent.reserve(messages);
  posted.reserve(messages);
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> groups;
  for (std::uint32_t r = 0; r < logs.size(); ++r) {
    const RankSteps& s = ranks[r];
    std::int64_t p = -1;
    std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> mine;
    for (const LogRecord& x : logs[r].records) {
      if (x.type == LogType::Member) {
        auto& m = mine[x.a];
        if (m.size() <= x.c) m.resize(static_cast<std::size_t>(x.c) + 1);
        m[static_cast<std::size_t>(x.c)] = x.peer;
      }
      if (x.type == LogType::Call) ++p;
      if (p < 0) continue;
      const auto call = static_cast<std::size_t>(p);
      if (x.type == LogType::Collective && (x.flags & kLogCompleted) == 0)
        entered.try_emplace(MemberKey{x.a, x.b, r}, End{s.enter[call] + 1, call});
      if (x.type == LogType::Sent)
        sent[MessageKey{r, x.peer, x.a, x.b, x.c}] = End{s.enter[call] + 1, call};
      if (x.type != LogType::Received || x.d >= s.enter.size()) continue;
      // Posted by this call (MPI_Recv): once it entered. Before: once it
      // passed the clocked calls and the waits before the posting.
      const auto k = static_cast<std::size_t>(x.d);
      const Progress at = (x.flags & kLogPostedInCall) != 0
                              ? s.enter[k] + 1
                              : std::min<Progress>(s.gap_start[k] + x.waits, s.enter[k]);
      posted[MessageKey{x.peer, r, x.a, x.b, x.c}] =
          End{at, call, (x.flags & kLogWildcard) != 0};
    }
    for (auto& [g, m] : mine) groups.try_emplace(g, std::move(m));
  }
  for (std::uint32_t r = 0; r < logs.size(); ++r) {
    RankSteps& s = ranks[r];
    for (const auto& [step, x] : s.needs) {
      if (x->peer >= logs.size()) continue;
      // What the other rank's log does not name holds nothing back.
      if (x->type == LogType::Collective) {
        const auto g = groups.find(x->a);
        if (g == groups.end() || mismatched.count(x->a)) continue;
        for (const std::uint32_t m : feeding(g->second, r, x->c, x->peer)) {
          const auto e = entered.find(MemberKey{x->a, x->b, m});
          if (e == entered.end() || m >= logs.size()) continue;
          s.steps[step].needs.push_back(
              Need{ZeroBufferNeed::Kind::Collective, m, e->second.at, e->second.call, false});
        }
      } else if (x->type == LogType::Received) {
        const auto e = sent.find(MessageKey{x->peer, r, x->a, x->b, x->c});
        if (e == sent.end()) continue;
        s.steps[step].needs.push_back(Need{ZeroBufferNeed::Kind::Message, x->peer, e->second.at,
                                           e->second.call, (x->flags & kLogWildcard) != 0});
      } else {
        const auto e = posted.find(MessageKey{r, x->peer, x->a, x->b, x->c});
        if (e == posted.end()) continue;
        s.steps[step].needs.push_back(Need{ZeroBufferNeed::Kind::Receiver, x->peer, e->second.at,
                                           e->second.call, e->second.wildcard});
      }
    }
  }
  return ranks;
}

// Calls that return on one of several completions, or tests: the program
// may take another path when another completes first or a test fails.
bool may_go_elsewhere(const std::string& name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return lower.find("test") != std::string::npos || lower.find("any") != std::string::npos ||
         lower.find("some") != std::string::npos;
}

std::string name_of(const RankLog& log, std::uint32_t key) {
  const auto it = log.names.find(key);
  return it == log.names.end() ? "call " + std::to_string(key & 0xffff) : it->second;
}

}  // namespace

LoggedCall logged_call(const RankLog& log, std::uint64_t index) {
  std::uint64_t seen = 0;
  for (const LogRecord& x : log.records) {
    if (x.type != LogType::Call) continue;
    if (seen++ == index) return LoggedCall{name_of(log, name_key(x.model, x.call)), x.b};
  }
  return LoggedCall{};
}

std::optional<PotentialDeadlock> find_potential_deadlock(const std::vector<RankLog>& logs,
                                                         const std::set<std::uint64_t>& mismatched) {
  const std::vector<RankSteps> ranks = build(logs, mismatched);
  const std::size_t n = logs.size();
  std::vector<Progress> at(n, 0);
  std::vector<std::vector<std::uint32_t>> waiters(n);  // ranks held by each rank
  std::vector<std::uint32_t> ready;
  for (std::uint32_t r = 0; r < n; ++r) ready.push_back(r);

  auto unmet = [&](const Need& need) { return at[need.rank] < need.at; };
  while (!ready.empty()) {
    const std::uint32_t r = ready.back();
    ready.pop_back();
    const std::vector<Step>& steps = ranks[r].steps;
    const Progress from = at[r];
    while (at[r] < steps.size()) {
      const std::vector<Need>& needs = steps[at[r]].needs;
      const auto held = std::find_if(needs.begin(), needs.end(), unmet);
      if (held != needs.end()) {
        waiters[held->rank].push_back(r);
        break;
      }
      ++at[r];
    }
    if (at[r] == from) continue;
    // Ranks held by this one look again; those still held wait on.
    std::vector<std::uint32_t> held;
    held.swap(waiters[r]);
    for (const std::uint32_t w : held) ready.push_back(w);
  }

  PotentialDeadlock d;
  for (std::uint32_t r = 0; r < n; ++r) {
    const std::vector<Step>& steps = ranks[r].steps;
    if (at[r] == steps.size()) continue;
    const Step& step = steps[at[r]];
    ZeroBufferStuck s;
    s.rank = r;
    s.call = name_of(logs[r], step.name);
    s.pc = step.pc;
    for (const Need& need : step.needs) {
      if (!unmet(need)) continue;
      if (need.wildcard) return std::nullopt;
      s.needs.push_back(ZeroBufferNeed{need.kind, need.rank, need.other});
    }
    if (may_go_elsewhere(s.call)) return std::nullopt;
    d.ranks.push_back(std::move(s));
  }
  if (d.ranks.empty()) return std::nullopt;
  return d;
}

std::vector<RankLog> read_logs(const std::string& dir, int ranks) {
  std::vector<RankLog> logs(static_cast<std::size_t>(std::max(ranks, 0)));
  for (std::uint32_t r = 0; r < logs.size(); ++r) {
    std::ifstream in(calls_path(dir, r), std::ios::binary | std::ios::ate);
    const std::streamoff bytes = in ? static_cast<std::streamoff>(in.tellg()) : 0;
    logs[r].records.resize(static_cast<std::size_t>(bytes) / sizeof(LogRecord));
    in.seekg(0);
    in.read(reinterpret_cast<char*>(logs[r].records.data()),
            static_cast<std::streamsize>(logs[r].records.size() * sizeof(LogRecord)));
    logs[r].records.resize(static_cast<std::size_t>(in.gcount()) / sizeof(LogRecord));
    std::istringstream names(read_text(names_path(dir, r)));
    std::uint32_t model = 0, call = 0;
    std::string name;
    while (names >> model >> call >> name)
      logs[r].names[name_key(static_cast<std::uint16_t>(model), static_cast<std::uint16_t>(call))] =
          name;
  }
  return logs;
}

}  // namespace vcx::deadlock
