// Collectives of the exchange: every kind runs over binomial trees (depth
// ceil(log2 n)) of the group's members:
//   AllToAll   combine up to position 0, send the result down;
//   AllToOne   combine full clocks up to the root;
//   OneToAll   send the root's clock down from the root;
//   Bipartite  combine each side up to its first member, swap the two
//              totals between those two, send each down its side;
//   Prefix     a chain: member i passes on the maximum of members 0..i.
// Intermediate tools forward what comes down as soon as it arrives, without
// waiting for their own application to reach the collective. A blocking
// all-to-all sends, per member, only its own entry and the entries of
// non-members: no rank's entry is larger anywhere than at the rank itself,
// so other members' copies add nothing.
//
// Invariants: one state per (group, instance) from its first message or
// contribution until this member has done its part and merged what it waits
// for; messages that come before their group is registered are kept whole
// and routed once it is; at most kMaxAhead contributions ahead are open.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "clock_pool.h"
#include "messages.h"
#include "outbox.h"
#include "vcx/call_program.h"
#include "vcx/vector_clock.h"

namespace vcx::vclock {

class Collectives {
 public:
  Collectives(Rank self, std::uint32_t width, ClockPool& pool, Outbox& out)
      : self_(self), width_(width), pool_(pool), out_(out) {}

  // A group's members in position order; the second side starts at
  // `second_side` (0: one side). True when it is new; registering it again
  // with other members is fatal. Then route_early(id).
  bool add_group(GroupId id, std::span<const Rank> members, std::uint32_t second_side);
  // Routes the messages that came before group `id` was known.
  void route_early(GroupId id);
  // The members of a registered group, or null.
  const std::vector<Rank>* members(GroupId id) const;

  // A blocking all-to-all over every rank, as its call is queued: this
  // member's own entry is `own_entry` (its clocked calls so far), known
  // already, so it contributes now (vclock.ahead).
  void queued(const CollectiveRef& c, ClockValue own_entry);
  // The engine reached the op: CollectiveContribute with this process's
  // clock, CollectiveComplete merging the result into it (false: not here
  // yet).
  void contribute(const Op& op, ClockSpan clock);
  bool complete(const Op& op, VectorClock& clock);

  // CollUp, CollDown, CollCross, CollMismatch from `src`.
  void on_message(Rank src, const CollHeader& h, ClockSpan clock);

  // Whether the collective is one of a group whose members' calls
  // diverged (at or after its first mismatched instance): its contribution
  // and completion are then no-ops, and its completion merges nothing.
  bool mismatched(const CollectiveRef& c) const;
  // The group's first mismatched instance, 0 if none.
  std::uint64_t first_mismatch(GroupId group) const;
  // The completion of `c` has waited a while: tell the group's first member
  // this member's call (kind, root, operation) there. Messages of members
  // that call something else may cross nobody whose call differs (an
  // all-to-all's root waiting for a member that waits for a broadcast's
  // root), so that first member compares every member's call that it hears
  // of with its own.
  void probe(const CollectiveRef& c);
  // The groups found mismatched, or with an earlier first instance, since
  // the last call.
  std::vector<GroupId> take_new_mismatches() { return std::exchange(new_mismatches_, {}); }
  bool has_new_mismatches() const { return !new_mismatches_.empty(); }

  std::size_t live() const { return states_.size(); }

  // Contributions ahead open at once, at most.
  static constexpr std::uint32_t kMaxAhead = 256;

 private:
  struct Key {
    GroupId group{};
    std::uint64_t instance = 0;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept {
      return static_cast<std::size_t>(hash_combine(mix64(k.group.value), k.instance));
    }
  };
  // What a member calls for an instance.
  struct View {
    CollectiveKind kind = CollectiveKind::AllToAll;
    Rank root{};
    std::uint16_t operation = 0;
    bool same(const View& o) const {
      const bool rooted = kind == CollectiveKind::OneToAll || kind == CollectiveKind::AllToOne;
      return kind == o.kind && (!rooted || root == o.root) && operation == o.operation;
    }
  };
  struct Group {
    std::vector<Rank> members;
    std::int64_t self_pos = -1;
    std::uint32_t second_side = 0;  // first position of the second side, 0 if none
    // This member's calls of the last kRecentViews instances it contributed
    // to, in the order it did (persistent collectives' instances need not
    // increase): for messages that come after its own state for the
    // instance went, and for the probes of the others.
    std::deque<std::pair<std::uint64_t, View>> recent;
  };
  static constexpr std::size_t kRecentViews = 64;
  // The part of the group one phase runs over: positions [base, base+size),
  // as a binomial tree rooted at base+root.
  struct Span {
    std::uint32_t base = 0;
    std::uint32_t size = 0;
    std::uint32_t root = 0;  // relative to base
  };
  struct State {
    CollectiveKind kind = CollectiveKind::AllToAll;
    Rank root{};
    std::uint16_t operation = 0;
    bool initialised = false;
    std::uint32_t children_expected = 0;
    std::uint32_t children_received = 0;
    PooledClock up;    // what goes towards the tree root (max)
    PooledClock down;  // what comes from it: result, root's clock, prefix
    bool contributed = false;
    // Contributed as the call was queued: its up message goes aside, and
    // its result goes down only once the engine has reached the call, so
    // that every message that keeps a baseline leaves in program order.
    bool ahead = false;
    bool reached = false;  // the engine ran the contribution
    bool up_done = false;  // sent on, or the result computed
    bool down_ready = false;
    bool down_sent = false;  // passed on down the tree
    bool completed = false;
    std::vector<std::vector<std::uint8_t>> early;  // messages before the group was known
  };
  struct Ahead {
    CollectiveRef ref;
    ClockValue own_entry = 0;
  };

  State& state(const Key& key, CollectiveKind kind, Rank root, std::uint16_t operation);
  // Whether a member's view of an instance (kind, root, operation) is the
  // state's; if not, the group's collectives from this instance on are
  // mismatched, and every other member is told (CollMismatch).
  bool agrees(const Key& key, const State& st, CollectiveKind kind, Rank root,
              std::uint16_t operation);
  void mark_mismatched(GroupId group, std::uint64_t from, bool tell_members);
  void tell_mismatch(const Group& g, GroupId group, std::uint64_t from);
  // This member's own call for `c`; the first member compares it with the
  // probes that came before it. False when they differ.
  bool note_own_view(const CollectiveRef& c);
  // This member's call for an instance it contributed to, if still known.
  static const View* own_view(const Group& g, std::uint64_t instance);
  void on_probe(const Key& key, const View& theirs);
  bool init(const Key& key, State& st);
  Span span(const Group& g, const State& st) const;
  void send_ahead(const CollectiveRef& c, ClockValue own_entry);
  void send_waiting_ahead();
  void progress_up(const Key& key, State& st);
  // Sends the result down once it is here and may leave (State::ahead).
  void maybe_forward_down(const Key& key, State& st);
  void progress_prefix(const Key& key, State& st);
  void send(Rank dst, MsgType type, const Key& key, const State& st, const PooledClock& clock,
            bool aside = false);
  void maybe_erase(const Key& key);
  PooledClock& up_of(State& st);

  Rank self_;
  std::uint32_t width_;
  ClockPool& pool_;
  Outbox& out_;
  std::unordered_map<GroupId, Group> groups_;
  std::unordered_map<Key, State, KeyHash> states_;
  // Contributions ahead: how many are open, and those queued behind the
  // limit, with the own entry each is to carry.
  std::uint32_t ahead_open_ = 0;
  std::deque<Ahead> ahead_waiting_;
  // Groups whose members' calls diverged: the first mismatched instance.
  std::unordered_map<GroupId, std::uint64_t> mismatched_from_;
  std::vector<GroupId> new_mismatches_;
  // The first member: probes for instances it has not contributed to yet.
  std::unordered_map<Key, View, KeyHash> probes_;
};

}  // namespace vcx::vclock
