// Collective primitives of the vclock engine.
//
// Every kind runs over binomial trees (depth ceil(log2 n)):
//   AllToAll   combine up to position 0, send the result down;
//   AllToOne   combine full clocks up to the root;
//   OneToAll   send the root's clock down from the root;
//   Bipartite  combine each side up to its first member, swap the two
//              totals between those two, send each down its side;
//   Prefix     a chain: member i passes on the maximum of members 0..i.
// Intermediate tools forward what comes down as soon as it arrives, without
// waiting for their own application to reach the collective.
#include <algorithm>
#include <cstring>

#include "vcx/binomial_tree.h"
#include "vclock_engine.h"

namespace vcx::vclock {

void VclockEngine::register_group(GroupId id, std::span<const Rank> members,
                                  std::uint32_t second_side) {
  auto [it, inserted] = groups_.try_emplace(id);
  if (!inserted) {
    if (!std::equal(members.begin(), members.end(), it->second.members.begin(),
                    it->second.members.end()) ||
        it->second.second_side != second_side)
      host_.fatal("vclock: group " + std::to_string(id.value) +
                  " registered twice with different members");
    return;
  }
  if (second_side >= members.size()) second_side = 0;
  GroupInfo& g = it->second;
  g.members.assign(members.begin(), members.end());
  g.second_side = second_side;
  for (std::size_t i = 0; i < g.members.size(); ++i)
    if (g.members[i] == self_) g.self_pos = static_cast<std::int64_t>(i);
  for (ClockedCallObserver* o : observers_) o->on_group(id, g.members);
  // Messages that arrived before the group was known can be routed now.
  std::vector<CollKey> waiting;
  for (auto& [key, st] : collectives_)
    if (key.group == id && !st.early.empty()) waiting.push_back(key);
  for (const CollKey& key : waiting) {
    auto cit = collectives_.find(key);
    if (cit != collectives_.end()) init_coll(key, cit->second);
  }
}

ClockValue* VclockEngine::zeroed_clock() {
  ClockValue* p = pool_.acquire();
  std::fill_n(p, width_, 0);
  return p;
}

VclockEngine::Span VclockEngine::up_span(const GroupInfo& g, const CollState& st) const {
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

VclockEngine::Span VclockEngine::down_span(const GroupInfo& g, const CollState& st) const {
  return up_span(g, st);  // every kind sends down over the tree it combined up
}

VclockEngine::CollState& VclockEngine::coll_state(const CollKey& key, CollectiveKind kind,
                                                  Rank root) {
  auto [it, inserted] = collectives_.try_emplace(key);
  if (inserted) {
    it->second.kind = kind;
    it->second.root = root;
  }
  return it->second;
}

bool VclockEngine::init_coll(const CollKey& key, CollState& st) {
  if (st.initialised) return true;
  auto git = groups_.find(key.group);
  if (git == groups_.end()) return false;
  const GroupInfo& g = git->second;
  if (g.self_pos < 0)
    host_.fatal("vclock: collective on group " + std::to_string(key.group.value) +
                " which does not contain this rank");
  if (st.kind == CollectiveKind::Bipartite && g.second_side == 0)
    host_.fatal("vclock: a two-sided collective on a group with one side");
  st.initialised = true;
  const auto pos = static_cast<std::uint32_t>(g.self_pos);
  switch (st.kind) {
    case CollectiveKind::AllToAll:
    case CollectiveKind::AllToOne:
    case CollectiveKind::Bipartite: {
      const Span sp = up_span(g, st);
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
    ClockValue* tmp = pool_.acquire();
    std::memcpy(tmp, bytes.data() + sizeof h, std::size_t{width_} * sizeof(ClockValue));
    on_collective(Rank{src}, h, pool_.view(tmp));
    pool_.release(tmp);
  }
  return true;
}

// A blocking all-to-all needs of each member only its own entry and its
// entries of non-members (exec_collective). Over a group of every rank
// there are no non-members, and the own entry is the member's count of
// clocked calls up to this one, known as soon as the call is queued: sent
// then, the contributions and the result of a run of such collectives
// (fences, barriers, allreduces) travel while the engines are still behind,
// instead of one round trip between the tools per collective once each
// engine reaches it. The clocks are the same.
//
// At most kMaxAhead of them are open (contributed, not yet reached by the
// engine) at a time; later ones wait in program order and go as earlier ones
// are reached. That bounds what the tools hold for the instances in between
// (partial up clocks at the parents, results below), which without stalls
// could otherwise be a clock per collective of the whole backlog.
void VclockEngine::contribute_ahead(const CollectiveRef& c) {
  const auto git = groups_.find(c.group);
  if (git == groups_.end() || git->second.members.size() != width_ ||
      git->second.second_side != 0)
    return;
  if (ahead_open_ >= kMaxAhead || !ahead_waiting_.empty()) {
    ahead_waiting_.push_back(AheadContribution{c, queued_tick_});
    return;
  }
  send_ahead(c, queued_tick_);
}

void VclockEngine::send_ahead(const CollectiveRef& c, ClockValue own_entry) {
  const CollKey key{c.group, c.instance};
  CollState& st = coll_state(key, c.kind, c.root);
  if (!init_coll(key, st) || st.contributed) return;
  st.contributed = true;
  st.ahead = true;
  ++ahead_open_;
  if (!st.up) st.up = zeroed_clock();
  st.up[self_.value] = std::max(st.up[self_.value], own_entry);
  progress_up(key, st);
}

void VclockEngine::send_waiting_ahead() {
  while (ahead_open_ < kMaxAhead && !ahead_waiting_.empty()) {
    const AheadContribution next = ahead_waiting_.front();
    ahead_waiting_.pop_front();
    send_ahead(next.ref, next.own_entry);
  }
}

bool VclockEngine::exec_collective(const Op& op, bool complete) {
  const CollectiveRef& c = op.collective;
  const CollKey key{c.group, c.instance};
  const bool is_root = c.root == self_;
  call_group_ = c.group;
  // Roles without a part in this half: nothing to do, and no state to keep.
  if (!complete && c.kind == CollectiveKind::AllToOne && is_root) return true;
  if (!complete && c.kind == CollectiveKind::OneToAll && !is_root) return true;
  if (complete && c.kind == CollectiveKind::AllToOne && !is_root) return true;
  if (complete && c.kind == CollectiveKind::OneToAll && is_root) return true;

  CollState& st = coll_state(key, c.kind, c.root);
  if (!init_coll(key, st)) host_.fatal("vclock: collective on an unregistered group");
  const GroupInfo& g = groups_.at(key.group);

  if (!complete) {
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
      return true;
    }
    st.contributed = true;
    switch (c.kind) {
      case CollectiveKind::OneToAll:
        st.down = pool_.acquire_copy(clock_.view());
        st.down_ready = true;
        maybe_forward_down(key, st);
        break;
      case CollectiveKind::AllToAll:
        if (!st.up) st.up = zeroed_clock();
        if (op.flags & kCollectiveBlocking) {
          // Own entry plus the entries of non-members: every other member's
          // entry is largest at that member, which contributes it itself.
          ClockValue* mine = pool_.acquire_copy(clock_.view());
          for (const Rank m : g.members)
            if (m != self_) mine[m.value] = 0;
          clock_merge(pool_.view(st.up), pool_.view(mine));
          pool_.release(mine);
        } else {
          // A member that contributes late may know more of an earlier
          // contributor than that contributor had: send everything.
          clock_merge(pool_.view(st.up), clock_.view());
        }
        progress_up(key, st);
        break;
      case CollectiveKind::AllToOne:
      case CollectiveKind::Bipartite:
        // The other side (or the root) needs what this member knows of
        // everyone, including its own side.
        if (!st.up) st.up = zeroed_clock();
        clock_merge(pool_.view(st.up), clock_.view());
        progress_up(key, st);
        break;
      case CollectiveKind::Prefix:
        if (!st.up) st.up = zeroed_clock();
        clock_merge(pool_.view(st.up), clock_.view());
        progress_prefix(key, st);
        break;
    }
    coll_maybe_erase(key);
    return true;
  }

  // Completion: merge what this member waits for.
  switch (c.kind) {
    case CollectiveKind::AllToOne:
      progress_up(key, st);  // a root without children has nothing to wait for
      if (!st.up_done) return false;
      if (st.up) clock_.merge(pool_.view(st.up));
      break;
    case CollectiveKind::OneToAll:
    case CollectiveKind::AllToAll:
    case CollectiveKind::Bipartite:
    case CollectiveKind::Prefix:
      if (!st.down_ready) return false;
      if (st.down) clock_.merge(pool_.view(st.down));
      break;
  }
  st.completed = true;
  coll_maybe_erase(key);
  return true;
}

void VclockEngine::progress_up(const CollKey& key, CollState& st) {
  if (st.up_done || st.children_received < st.children_expected) return;
  const bool is_root = st.root == self_;
  const bool own_part_needed = !(st.kind == CollectiveKind::AllToOne && is_root);
  if (own_part_needed && !st.contributed) return;
  const GroupInfo& g = groups_.at(key.group);
  const Span sp = up_span(g, st);
  const auto local = static_cast<std::uint32_t>(g.self_pos) - sp.base;
  st.up_done = true;
  if (auto parent = BinomialTree(sp.size, sp.root).parent(local)) {
    send_coll(g.members[sp.base + *parent], MsgType::CollUp, key, st, st.up, st.ahead);
    pool_.release(st.up);
    st.up = nullptr;
    return;
  }
  switch (st.kind) {
    case CollectiveKind::AllToAll:
      // The tree root holds the result: send it down.
      st.down = st.up;
      st.up = nullptr;
      st.down_ready = true;
      maybe_forward_down(key, st);
      break;
    case CollectiveKind::Bipartite: {
      // This side's total goes to the other side's first member.
      const std::uint32_t other = sp.base == 0 ? g.second_side : 0;
      send_coll(g.members[other], MsgType::CollCross, key, st, st.up);
      pool_.release(st.up);
      st.up = nullptr;
      break;
    }
    default:
      break;  // AllToOne: the root keeps the total for its completion
  }
}

void VclockEngine::progress_prefix(const CollKey& key, CollState& st) {
  if (st.up_done || !st.contributed || !st.down_ready) return;
  const GroupInfo& g = groups_.at(key.group);
  const auto pos = static_cast<std::uint32_t>(g.self_pos);
  st.up_done = true;
  if (pos + 1 < g.members.size()) {
    // Members above get everything below them, this member included.
    if (st.down) clock_merge(pool_.view(st.up), pool_.view(st.down));
    send_coll(g.members[pos + 1], MsgType::CollDown, key, st, st.up);
  }
  pool_.release(st.up);
  st.up = nullptr;
}

void VclockEngine::maybe_forward_down(const CollKey& key, CollState& st) {
  if (!st.down_ready || st.down_sent || (st.ahead && !st.reached)) return;
  st.down_sent = true;
  forward_down(key, st);
}

void VclockEngine::forward_down(const CollKey& key, const CollState& st) {
  const GroupInfo& g = groups_.at(key.group);
  const Span sp = down_span(g, st);
  const auto local = static_cast<std::uint32_t>(g.self_pos) - sp.base;
  BinomialTree(sp.size, sp.root).for_each_child_largest_first(local, [&](std::uint32_t child) {
    send_coll(g.members[sp.base + child], MsgType::CollDown, key, st, st.down);
  });
}

void VclockEngine::on_collective(Rank src, const CollHeader& h, ClockSpan clock) {
  const CollKey key{GroupId{h.group}, h.instance};
  CollState& st = coll_state(key, static_cast<CollectiveKind>(h.kind), Rank{h.root});
  if (!init_coll(key, st)) {
    // Keep the header, the whole clock and the source until the group is
    // known.
    std::vector<std::uint8_t> raw(sizeof h + clock.size_bytes() + 4);
    std::memcpy(raw.data(), &h, sizeof h);
    std::memcpy(raw.data() + sizeof h, clock.data(), clock.size_bytes());
    std::memcpy(raw.data() + sizeof h + clock.size_bytes(), &src.value, 4);
    st.early.push_back(std::move(raw));
    return;
  }
  switch (h.type) {
    case MsgType::CollUp:
      if (!st.up) st.up = zeroed_clock();
      clock_merge(pool_.view(st.up), clock);
      ++st.children_received;
      progress_up(key, st);
      break;
    case MsgType::CollDown:
    case MsgType::CollCross:
      if (st.down_ready) host_.fatal("vclock: duplicate collective result");
      st.down = pool_.acquire_copy(clock);
      st.down_ready = true;
      if (st.kind == CollectiveKind::Prefix) {
        progress_prefix(key, st);
      } else {
        maybe_forward_down(key, st);
      }
      break;
    default:
      host_.fatal("vclock: unexpected collective message");
  }
  coll_maybe_erase(key);
}

void VclockEngine::send_coll(Rank dst, MsgType type, const CollKey& key, const CollState& st,
                             const ClockValue* clock, bool aside) {
  CollHeader h{};
  h.type = type;
  h.kind = static_cast<std::uint8_t>(st.kind);
  h.group = key.group.value;
  h.instance = key.instance;
  h.root = st.root.value;
  send_clock_message(dst, h, clock, aside);
}

void VclockEngine::coll_maybe_erase(const CollKey& key) {
  auto it = collectives_.find(key);
  if (it == collectives_.end()) return;
  CollState& st = it->second;
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
  if (!done) return;
  pool_.release(st.up);
  pool_.release(st.down);
  collectives_.erase(it);
}

}  // namespace vcx::vclock
