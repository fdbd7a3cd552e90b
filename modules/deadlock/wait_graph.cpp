#include "wait_graph.h"

#include <algorithm>

namespace vcx::deadlock {
namespace {

using Status = RankWait::Status;

bool tag_matches(std::int32_t wanted, std::int32_t tag) {
  return wanted == WaitCondition::kAnyTag || wanted == tag;
}

// Messages counted in `counts` with `peer` on comm, tags matching `tag`.
std::uint64_t count_of(const std::vector<MessageCount>& counts, Rank peer, std::uint64_t comm,
                       std::int32_t tag) {
  std::uint64_t n = 0;
  for (const MessageCount& m : counts)
    if (m.peer == peer && m.comm == comm && tag_matches(tag, m.tag)) n += m.count;
  return n;
}

const WaitFacts::Instances* instances_on(const WaitFacts& f, std::uint64_t comm) {
  for (const WaitFacts::Instances& i : f.collectives)
    if (i.comm == comm) return &i;
  return nullptr;
}

// m called another operation (or root) than c's in c's instance.
bool called_other(const WaitFacts& m, const WaitCondition& c) {
  const WaitFacts::Instances* i = instances_on(m, c.comm);
  if (!i) return false;
  for (const WaitFacts::Operation& o : i->recent)
    if (o.instance == c.instance) return o.call != c.call || o.root != c.root;
  return false;  // not known: as if the same
}

class Reduction {
 public:
  explicit Reduction(const std::vector<RankView>& ranks) : ranks_(ranks), can_(ranks.size()) {
    for (std::size_t r = 0; r < ranks.size(); ++r) can_[r] = ranks[r].status == Status::Running;
  }

  void run() {
    for (bool changed = true; changed;) {
      changed = false;
      for (std::size_t r = 0; r < ranks_.size(); ++r) {
        if (can_[r] || ranks_[r].status != Status::Blocked) continue;
        if (call_can_return(Rank{static_cast<std::uint32_t>(r)})) can_[r] = changed = true;
      }
    }
  }

  bool can(Rank r) const { return r.value < can_.size() && can_[r.value]; }

  // Whether a condition of r can be met; `blockers`, `mismatched`: who
  // keeps it from it.
  bool satisfiable(Rank r, const WaitCondition& c, std::vector<Rank>* blockers = nullptr,
                   std::vector<Rank>* mismatched = nullptr) const {
    switch (c.need) {
      case WaitNeed::Unknown:
        return true;
      case WaitNeed::Message:
        for (const Rank s : c.ranks) {
          if (!known(s) || can(s) || pending(s, r, c.comm, c.tag)) return true;
          if (blockers) blockers->push_back(s);
        }
        return false;
      case WaitNeed::Receiver:
        for (const Rank d : c.ranks) {
          if (!known(d) || can(d) || takes(d, r, c.comm, c.tag)) return true;
          if (blockers) blockers->push_back(d);
        }
        return false;
      case WaitNeed::Collective: {
        bool ok = true;
        for (const Rank m : c.ranks) {
          if (m == r || !known(m) || can(m)) continue;
          const RankView& v = ranks_[m.value];
          const WaitFacts::Instances* i = instances_on(v.facts, c.comm);
          if (in_other_operation(v, c) || called_other(v.facts, c)) {
            if (mismatched) mismatched->push_back(m);
            ok = false;
          } else if ((!i || i->started < c.instance) && !in_instance(v, c)) {
            if (blockers) blockers->push_back(m);
            ok = false;
          }
        }
        return ok;
      }
      case WaitNeed::Write:
        for (const Rank w : c.ranks) {
          if (w == r) continue;  // blocked here: it writes nothing
          if (!known(w) || can(w)) return true;
          if (blockers) blockers->push_back(w);
        }
        return false;
      case WaitNeed::Lock: {
        // Held by a rank that cannot go on: never released. Held by one
        // that can, or by nobody this view knows of (free, or held by a
        // running rank): it can be had.
        bool ok = true;
        for (const Rank h : c.ranks) {
          if (!known(h) || can(h)) continue;
          const WaitFacts& f = ranks_[h.value].facts;
          const auto holds = [&](const std::vector<std::uint64_t>& held) {
            return std::find(held.begin(), held.end(), c.resource) != held.end();
          };
          if (!holds(f.locks_held) && (c.shared || !holds(f.locks_held_shared))) continue;
          if (blockers) blockers->push_back(h);
          ok = false;
        }
        return ok;
      }
    }
    return true;
  }

 private:
  bool known(Rank r) const { return r.value < ranks_.size(); }

  bool call_can_return(Rank r) const {
    const WaitState& w = ranks_[r.value].wait;
    if (w.conditions.empty()) return true;
    if (w.all_of) {
      return std::all_of(w.conditions.begin(), w.conditions.end(),
                         [&](const WaitCondition& c) { return satisfiable(r, c); });
    }
    return std::any_of(w.conditions.begin(), w.conditions.end(),
                       [&](const WaitCondition& c) { return satisfiable(r, c); });
  }

  // s sent r a message on comm with a matching tag that r has not received.
  bool pending(Rank s, Rank r, std::uint64_t comm, std::int32_t tag) const {
    const RankView& sender = ranks_[s.value];
    const RankView& receiver = ranks_[r.value];
    // Sent: what its events told, and what the call it is blocked in sends.
    auto sent = [&](std::int32_t t) {
      std::uint64_t n = count_of(sender.facts.sent, r, comm, t);
      if (sender.status == Status::Blocked) n += count_of(sender.wait.sending, r, comm, t);
      return n;
    };
    if (tag != WaitCondition::kAnyTag) return sent(tag) > count_of(receiver.facts.received, s, comm, tag);
    // Any tag: some tag with more sent than received.
    for (const auto* list : {&sender.facts.sent, &sender.wait.sending}) {
      for (const MessageCount& m : *list) {
        if (m.peer != r || m.comm != comm) continue;
        if (sent(m.tag) > count_of(receiver.facts.received, s, comm, m.tag)) return true;
      }
    }
    return false;
  }

  // d, blocked or finished, would take a message of s on comm and tag.
  bool takes(Rank d, Rank s, std::uint64_t comm, std::int32_t tag) const {
    const RankView& v = ranks_[d.value];
    if (v.facts.pending_receives > 0) return true;
    if (v.status != Status::Blocked) return false;
    for (const WaitCondition& c : v.wait.conditions) {
      if (c.need != WaitNeed::Message || c.comm != comm || !tag_matches(c.tag, tag)) continue;
      if (std::find(c.ranks.begin(), c.ranks.end(), s) != c.ranks.end()) return true;
    }
    return false;
  }

  // m is blocked in c's instance itself: it entered it, even where its
  // facts do not count it yet (an OpenSHMEM call's event comes after it).
  static bool in_instance(const RankView& m, const WaitCondition& c) {
    if (m.status != Status::Blocked) return false;
    return std::any_of(m.wait.conditions.begin(), m.wait.conditions.end(),
                       [&](const WaitCondition& o) {
                         return o.need == WaitNeed::Collective && o.comm == c.comm &&
                                o.instance == c.instance;
                       });
  }

  // m is blocked in the same instance of c's collective with another
  // operation or root.
  static bool in_other_operation(const RankView& m, const WaitCondition& c) {
    if (m.status != Status::Blocked) return false;
    for (const WaitCondition& o : m.wait.conditions) {
      if (o.need != WaitNeed::Collective || o.comm != c.comm || o.instance != c.instance) continue;
      if (o.call != c.call || o.root != c.root) return true;
    }
    return false;
  }

  const std::vector<RankView>& ranks_;
  std::vector<bool> can_;
};

void add_unique(std::vector<Rank>* to, const std::vector<Rank>& from) {
  for (const Rank r : from)
    if (std::find(to->begin(), to->end(), r) == to->end()) to->push_back(r);
}

}  // namespace

std::optional<Deadlock> find_deadlock(const std::vector<RankView>& ranks) {
  Reduction reduction(ranks);
  reduction.run();
  Deadlock d;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const Rank r{static_cast<std::uint32_t>(i)};
    if (ranks[i].status != Status::Blocked || reduction.can(r)) continue;
    StuckRank s;
    s.rank = r;
    for (const WaitCondition& c : ranks[i].wait.conditions) {
      std::vector<Rank> blockers, mismatched;
      if (reduction.satisfiable(r, c, &blockers, &mismatched)) continue;
      add_unique(&s.waits_for, blockers);
      add_unique(&s.mismatched, mismatched);
    }
    std::sort(s.waits_for.begin(), s.waits_for.end());
    std::sort(s.mismatched.begin(), s.mismatched.end());
    d.ranks.push_back(std::move(s));
  }
  if (d.ranks.empty()) return std::nullopt;
  return d;
}

}  // namespace vcx::deadlock
