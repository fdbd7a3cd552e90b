#include "collectives.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "vcx/binomial_tree.h"

namespace vcx::vclock {

bool Collectives::add_group(GroupId id, std::span<const Rank> members, std::uint32_t second_side) {
  auto [it, inserted] = groups_.try_emplace(id);
  if (!inserted) {
    if (!std::equal(members.begin(), members.end(), it->second.members.begin(),
                    it->second.members.end()) ||
        it->second.second_side != second_side)
      out_.fatal("vclock: group " + std::to_string(id.value) +
                 " registered twice with different members");
    return false;
  }
  if (second_side >= members.size()) second_side = 0;
  Group& g = it->second;
  // A mismatch found before the group was known here: its members are told
  // now (below, once they are known).
  const auto found = mismatched_from_.find(id);
  g.members.assign(members.begin(), members.end());
  g.second_side = second_side;
  for (std::size_t i = 0; i < g.members.size(); ++i)
    if (g.members[i] == self_) g.self_pos = static_cast<std::int64_t>(i);
  if (found != mismatched_from_.end()) tell_mismatch(g, id, found->second);
  return true;
}

void Collectives::route_early(GroupId id) {
  std::vector<Key> waiting;
  for (auto& [key, st] : states_)
    if (key.group == id && !st.early.empty()) waiting.push_back(key);
  for (const Key& key : waiting) {
    auto it = states_.find(key);
    if (it != states_.end()) init(key, it->second);
  }
}

const std::vector<Rank>* Collectives::members(GroupId id) const {
  auto it = groups_.find(id);
  return it == groups_.end() ? nullptr : &it->second.members;
}

Collectives::Span Collectives::span(const Group& g, const State& st) const {
  // Every kind sends down over the tree it combined up.
  const auto n = static_cast<std::uint32_t>(g.members.size());
  const auto pos = static_cast<std::uint32_t>(g.self_pos);
  switch (st.kind) {
    case CollectiveKind::AllToAll:
      return Span{0, n, 0};
    case CollectiveKind::AllToOne:
    case CollectiveKind::OneToAll: {
      std::uint32_t root = 0;
      for (std::uint32_t i = 0; i < n; ++i)
        if (g.members[i] == st.root) root = i;
      return Span{0, n, root};
    }
    case CollectiveKind::Bipartite: {
      const std::uint32_t s = g.second_side;
      return pos < s ? Span{0, s, 0} : Span{s, n - s, 0};
    }
    case CollectiveKind::Prefix:
      return Span{0, n, 0};
  }
  return Span{0, n, 0};
}

Collectives::State& Collectives::state(const Key& key, CollectiveKind kind, Rank root,
                                       std::uint16_t operation) {
  auto [it, inserted] = states_.try_emplace(key);
  if (inserted) {
    it->second.kind = kind;
    it->second.root = root;
    it->second.operation = operation;
  }
  return it->second;
}

bool Collectives::mismatched(const CollectiveRef& c) const {
  const auto it = mismatched_from_.find(c.group);
  return it != mismatched_from_.end() && c.instance >= it->second;
}

std::uint64_t Collectives::first_mismatch(GroupId group) const {
  const auto it = mismatched_from_.find(group);
  return it == mismatched_from_.end() ? 0 : it->second;
}

bool Collectives::agrees(const Key& key, const State& st, CollectiveKind kind, Rank root,
                         std::uint16_t operation) {
  const bool rooted = kind == CollectiveKind::OneToAll || kind == CollectiveKind::AllToOne;
  if (st.kind == kind && (!rooted || st.root == root) && st.operation == operation) return true;
  mark_mismatched(key.group, key.instance, true);
  return false;
}

// Once members' calls diverge, later instance numbers pair calls that do not
// belong together either: the group's collectives from there on complete
// without edges. Their states go (with what they held for contributions
// ahead), and messages for them are dropped as they come.
void Collectives::mark_mismatched(GroupId group, std::uint64_t from, bool tell_members) {
  auto [it, inserted] = mismatched_from_.try_emplace(group, from);
  if (!inserted) {
    if (it->second <= from) return;
    it->second = from;
  }
  new_mismatches_.push_back(group);
  for (auto s = states_.begin(); s != states_.end();) {
    if (s->first.group == group && s->first.instance >= from) {
      if (s->second.ahead && !s->second.reached) --ahead_open_;
      s = states_.erase(s);
    } else {
      ++s;
    }
  }
  std::erase_if(ahead_waiting_, [&](const Ahead& a) {
    return a.ref.group == group && a.ref.instance >= from;
  });
  std::erase_if(probes_, [&](const auto& p) {
    return p.first.group == group && p.first.instance >= from;
  });
  send_waiting_ahead();
  const auto git = groups_.find(group);
  if (tell_members && git != groups_.end()) tell_mismatch(git->second, group, from);
}

void Collectives::tell_mismatch(const Group& g, GroupId group, std::uint64_t from) {
  CollHeader h{};
  h.type = MsgType::CollMismatch;
  h.group = group.value;
  h.instance = from;
  // Aside: the zero clock leaves the pairs' differential baselines alone.
  const PooledClock zero = pool_.take_zeroed();
  for (const Rank m : g.members)
    if (m != self_) out_.send_coll(m, h, zero.data(), true);
}

PooledClock& Collectives::up_of(State& st) {
  if (!st.up) st.up = pool_.take_zeroed();
  return st.up;
}

bool Collectives::init(const Key& key, State& st) {
  if (st.initialised) return true;
  auto git = groups_.find(key.group);
  if (git == groups_.end()) return false;
  const Group& g = git->second;
  if (g.self_pos < 0)
    out_.fatal("vclock: collective on group " + std::to_string(key.group.value) +
               " which does not contain this rank");
  if (st.kind == CollectiveKind::Bipartite && g.second_side == 0)
    out_.fatal("vclock: a two-sided collective on a group with one side");
  st.initialised = true;
  const auto pos = static_cast<std::uint32_t>(g.self_pos);
  switch (st.kind) {
    case CollectiveKind::AllToAll:
    case CollectiveKind::AllToOne:
    case CollectiveKind::Bipartite: {
      const Span sp = span(g, st);
      st.children_expected = BinomialTree(sp.size, sp.root).child_count(pos - sp.base);
      break;
    }
    case CollectiveKind::OneToAll:
      break;
    case CollectiveKind::Prefix:
      if (pos == 0) st.down_ready = true;  // nothing below the first member
      break;
  }
  // Replay what came before the group was known: header, whole clock, source
  // (decoded on arrival already, against the pair's baseline then).
  auto early = std::move(st.early);
  st.early.clear();
  for (auto& bytes : early) {
    CollHeader h;
    std::uint32_t src = 0;
    std::memcpy(&h, bytes.data(), sizeof h);
    std::memcpy(&src, bytes.data() + bytes.size() - 4, 4);
    PooledClock clock = pool_.take();
    std::memcpy(clock.mutable_view().data(), bytes.data() + sizeof h,
                std::size_t{width_} * sizeof(ClockValue));
    on_message(Rank{src}, h, clock.view());
  }
  return true;
}

// A blocking all-to-all needs of each member only its own entry and its
// entries of non-members (contribute). Over a group of every rank there are
// no non-members, and the own entry is the member's count of clocked calls
// up to this one, known as soon as the call is queued: sent then, the
// contributions and the result of a run of such collectives (fences,
// barriers, allreduces) travel while the engines are still behind, instead
// of one round trip between the tools per collective once each engine
// reaches it. The clocks are the same.
//
// At most kMaxAhead of them are open (contributed, not yet reached by the
// engine) at a time; later ones wait in program order and go as earlier ones
// are reached. That bounds what the tools hold for the instances in between
// (partial up clocks at the parents, results below), which without stalls
// could otherwise be a clock per collective of the whole backlog.
void Collectives::probe(const CollectiveRef& c) {
  if (mismatched(c)) return;
  const auto git = groups_.find(c.group);
  if (git == groups_.end() || git->second.members.empty()) return;
  const Rank first = git->second.members.front();
  if (first == self_) return;
  CollHeader h{};
  h.type = MsgType::CollProbe;
  h.kind = static_cast<std::uint8_t>(c.kind);
  h.group = c.group.value;
  h.instance = c.instance;
  h.root = c.root.value;
  h.operation = c.operation;
  const PooledClock zero = pool_.take_zeroed();
  out_.send_coll(first, h, zero.data(), true);
}

bool Collectives::note_own_view(const CollectiveRef& c) {
  const auto git = groups_.find(c.group);
  if (git == groups_.end()) return true;
  Group& g = git->second;
  const View mine{c.kind, c.root, c.operation};
  // The engine contributes to each instance once.
  g.recent.emplace_back(c.instance, mine);
  if (g.recent.size() > kRecentViews) g.recent.pop_front();
  if (probes_.empty()) return true;
  const auto it = probes_.find(Key{c.group, c.instance});
  if (it == probes_.end()) return true;
  const bool same = it->second.same(mine);
  probes_.erase(it);
  if (same) return true;
  mark_mismatched(c.group, c.instance, true);
  return false;
}

void Collectives::on_probe(const Key& key, const View& theirs) {
  const auto git = groups_.find(key.group);
  const View* mine = git == groups_.end() ? nullptr : own_view(git->second, key.instance);
  if (mine) {
    if (!mine->same(theirs)) mark_mismatched(key.group, key.instance, true);
    return;
  }
  // Not here yet (or long ago): compared when this member contributes
  // (note_own_view), and with the other probes meanwhile. Two that differ
  // make a mismatch even before the group is known here (add_group then
  // tells its members).
  auto [it, inserted] = probes_.try_emplace(key, theirs);
  if (inserted || it->second.same(theirs)) return;
  probes_.erase(it);
  mark_mismatched(key.group, key.instance, true);
}

const Collectives::View* Collectives::own_view(const Group& g, std::uint64_t instance) {
  for (auto it = g.recent.rbegin(); it != g.recent.rend(); ++it)
    if (it->first == instance) return &it->second;
  return nullptr;
}

void Collectives::queued(const CollectiveRef& c, ClockValue own_entry) {
  if (mismatched(c)) return;
  const auto git = groups_.find(c.group);
  if (git == groups_.end() || git->second.members.size() != width_ ||
      git->second.second_side != 0)
    return;
  if (ahead_open_ >= kMaxAhead || !ahead_waiting_.empty()) {
    ahead_waiting_.push_back(Ahead{c, own_entry});
    return;
  }
  send_ahead(c, own_entry);
}

void Collectives::send_ahead(const CollectiveRef& c, ClockValue own_entry) {
  const Key key{c.group, c.instance};
  if (mismatched(c)) return;
  State& st = state(key, c.kind, c.root, c.operation);
  // (Messages replayed by init may find a mismatch, which drops the state.)
  if (!init(key, st) || mismatched(c)) return;
  if (!agrees(key, st, c.kind, c.root, c.operation) || st.contributed) return;
  st.contributed = true;
  st.ahead = true;
  ++ahead_open_;
  PooledClock& up = up_of(st);
  up[self_.value] = std::max(up[self_.value], own_entry);
  progress_up(key, st);
}

void Collectives::send_waiting_ahead() {
  while (ahead_open_ < kMaxAhead && !ahead_waiting_.empty()) {
    const Ahead next = ahead_waiting_.front();
    ahead_waiting_.pop_front();
    send_ahead(next.ref, next.own_entry);
  }
}

void Collectives::contribute(const Op& op, ClockSpan clock) {
  const CollectiveRef& c = op.collective;
  const Key key{c.group, c.instance};
  if (mismatched(c) || !note_own_view(c)) return;
  // Roles without a part in this half: nothing to do, and no state to keep.
  const bool is_root = c.root == self_;
  if (c.kind == CollectiveKind::AllToOne && is_root) return;
  if (c.kind == CollectiveKind::OneToAll && !is_root) return;

  State& st = state(key, c.kind, c.root, c.operation);
  if (!init(key, st)) out_.fatal("vclock: collective on an unregistered group");
  if (mismatched(c) || !agrees(key, st, c.kind, c.root, c.operation)) return;
  const Group& g = groups_.at(key.group);

  // Still waiting to go ahead: the engine contributes it itself.
  if (!ahead_waiting_.empty() && ahead_waiting_.front().ref.group == c.group &&
      ahead_waiting_.front().ref.instance == c.instance)
    ahead_waiting_.pop_front();
  st.reached = true;
  if (st.contributed) {
    if (st.ahead) {
      --ahead_open_;
      send_waiting_ahead();
    }
    maybe_forward_down(key, st);  // a result that waited for this engine
    return;
  }
  st.contributed = true;
  switch (c.kind) {
    case CollectiveKind::OneToAll:
      st.down = pool_.take_copy(clock);
      st.down_ready = true;
      maybe_forward_down(key, st);
      break;
    case CollectiveKind::AllToAll:
      if (op.flags & kCollectiveBlocking) {
        // Own entry plus the entries of non-members: every other member's
        // entry is largest at that member, which contributes it itself.
        PooledClock mine = pool_.take_copy(clock);
        for (const Rank m : g.members)
          if (m != self_) mine[m.value] = 0;
        up_of(st).merge(mine.view());
      } else {
        // A member that contributes late may know more of an earlier
        // contributor than that contributor had: send everything.
        up_of(st).merge(clock);
      }
      progress_up(key, st);
      break;
    case CollectiveKind::AllToOne:
    case CollectiveKind::Bipartite:
      // The other side (or the root) needs what this member knows of
      // everyone, including its own side.
      up_of(st).merge(clock);
      progress_up(key, st);
      break;
    case CollectiveKind::Prefix:
      up_of(st).merge(clock);
      progress_prefix(key, st);
      break;
  }
  maybe_erase(key);
}

bool Collectives::complete(const Op& op, VectorClock& clock) {
  const CollectiveRef& c = op.collective;
  const Key key{c.group, c.instance};
  if (mismatched(c)) return true;
  const bool is_root = c.root == self_;
  if (c.kind == CollectiveKind::AllToOne && !is_root) return true;
  if (c.kind == CollectiveKind::OneToAll && is_root) return true;

  State& st = state(key, c.kind, c.root, c.operation);
  if (!init(key, st)) out_.fatal("vclock: collective on an unregistered group");
  if (mismatched(c) || !agrees(key, st, c.kind, c.root, c.operation)) return true;
  switch (c.kind) {
    case CollectiveKind::AllToOne:
      progress_up(key, st);  // a root without children has nothing to wait for
      if (!st.up_done) return false;
      if (st.up) clock.merge(st.up.view());
      break;
    case CollectiveKind::OneToAll:
    case CollectiveKind::AllToAll:
    case CollectiveKind::Bipartite:
    case CollectiveKind::Prefix:
      if (!st.down_ready) return false;
      if (st.down) clock.merge(st.down.view());
      break;
  }
  st.completed = true;
  maybe_erase(key);
  return true;
}

void Collectives::progress_up(const Key& key, State& st) {
  if (st.up_done || st.children_received < st.children_expected) return;
  const bool is_root = st.root == self_;
  const bool own_part_needed = !(st.kind == CollectiveKind::AllToOne && is_root);
  if (own_part_needed && !st.contributed) return;
  const Group& g = groups_.at(key.group);
  const Span sp = span(g, st);
  const auto local = static_cast<std::uint32_t>(g.self_pos) - sp.base;
  st.up_done = true;
  if (auto parent = BinomialTree(sp.size, sp.root).parent(local)) {
    send(g.members[sp.base + *parent], MsgType::CollUp, key, st, st.up, st.ahead);
    st.up.reset();
    return;
  }
  switch (st.kind) {
    case CollectiveKind::AllToAll:
      // The tree root holds the result: send it down.
      st.down = std::move(st.up);
      st.down_ready = true;
      maybe_forward_down(key, st);
      break;
    case CollectiveKind::Bipartite: {
      // This side's total goes to the other side's first member.
      const std::uint32_t other = sp.base == 0 ? g.second_side : 0;
      send(g.members[other], MsgType::CollCross, key, st, st.up);
      st.up.reset();
      break;
    }
    default:
      break;  // AllToOne: the root keeps the total for its completion
  }
}

void Collectives::progress_prefix(const Key& key, State& st) {
  if (st.up_done || !st.contributed || !st.down_ready) return;
  const Group& g = groups_.at(key.group);
  const auto pos = static_cast<std::uint32_t>(g.self_pos);
  st.up_done = true;
  if (pos + 1 < g.members.size()) {
    // Members above get everything below them, this member included.
    if (st.down) st.up.merge(st.down.view());
    send(g.members[pos + 1], MsgType::CollDown, key, st, st.up);
  }
  st.up.reset();
}

void Collectives::maybe_forward_down(const Key& key, State& st) {
  if (!st.down_ready || st.down_sent || (st.ahead && !st.reached)) return;
  st.down_sent = true;
  const Group& g = groups_.at(key.group);
  const Span sp = span(g, st);
  const auto local = static_cast<std::uint32_t>(g.self_pos) - sp.base;
  BinomialTree(sp.size, sp.root).for_each_child_largest_first(local, [&](std::uint32_t child) {
    send(g.members[sp.base + child], MsgType::CollDown, key, st, st.down);
  });
}

void Collectives::on_message(Rank src, const CollHeader& h, ClockSpan clock) {
  const Key key{GroupId{h.group}, h.instance};
  if (h.type == MsgType::CollMismatch) {
    mark_mismatched(key.group, key.instance, false);
    return;
  }
  const CollectiveRef ref{key.group, key.instance, static_cast<CollectiveKind>(h.kind),
                          Rank{h.root}, h.operation};
  if (mismatched(ref)) return;
  if (h.type == MsgType::CollProbe) {
    on_probe(key, View{ref.kind, ref.root, ref.operation});
    return;
  }
  State& st = state(key, ref.kind, ref.root, ref.operation);
  if (!init(key, st)) {
    // Keep the header, the whole clock and the source until the group is
    // known.
    std::vector<std::uint8_t> raw(sizeof h + clock.size_bytes() + 4);
    std::memcpy(raw.data(), &h, sizeof h);
    std::memcpy(raw.data() + sizeof h, clock.data(), clock.size_bytes());
    std::memcpy(raw.data() + sizeof h + clock.size_bytes(), &src.value, 4);
    st.early.push_back(std::move(raw));
    return;
  }
  if (mismatched(ref) || !agrees(key, st, ref.kind, ref.root, ref.operation)) return;
  // A member whose state for the instance went (it had everything it waits
  // for) gets no more messages for it but those of members that call
  // something else.
  const View* mine = own_view(groups_.at(key.group), key.instance);
  if (mine && !mine->same(View{ref.kind, ref.root, ref.operation})) {
    mark_mismatched(key.group, key.instance, true);
    return;
  }
  switch (h.type) {
    case MsgType::CollUp:
      up_of(st).merge(clock);
      ++st.children_received;
      progress_up(key, st);
      break;
    case MsgType::CollDown:
    case MsgType::CollCross:
      if (st.down_ready) out_.fatal("vclock: duplicate collective result");
      st.down = pool_.take_copy(clock);
      st.down_ready = true;
      if (st.kind == CollectiveKind::Prefix) {
        progress_prefix(key, st);
      } else {
        maybe_forward_down(key, st);
      }
      break;
    default:
      out_.fatal("vclock: unexpected collective message");
  }
  maybe_erase(key);
}

void Collectives::send(Rank dst, MsgType type, const Key& key, const State& st,
                       const PooledClock& clock, bool aside) {
  CollHeader h{};
  h.type = type;
  h.kind = static_cast<std::uint8_t>(st.kind);
  h.group = key.group.value;
  h.instance = key.instance;
  h.root = st.root.value;
  h.operation = st.operation;
  out_.send_coll(dst, h, clock.data(), aside);
}

void Collectives::maybe_erase(const Key& key) {
  auto it = states_.find(key);
  if (it == states_.end()) return;
  const State& st = it->second;
  const bool is_root = st.root == self_;
  bool done = false;
  switch (st.kind) {
    case CollectiveKind::AllToOne:
      done = is_root ? st.completed : st.up_done;
      break;
    case CollectiveKind::OneToAll:
      done = is_root ? st.contributed : (st.down_ready && st.completed);
      break;
    case CollectiveKind::AllToAll:
    case CollectiveKind::Bipartite:
      done = st.up_done && st.down_ready && st.completed;
      break;
    case CollectiveKind::Prefix:
      done = st.up_done && st.completed;
      break;
  }
  if (done) states_.erase(it);
}

}  // namespace vcx::vclock
