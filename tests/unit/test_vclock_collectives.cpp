// Collectives (engines/vclock/collectives.h), alone: one instance per rank,
// each with its own pool and an outbox that posts into an in-memory network.
// Messages are delivered in random orders (each (src, dst) pair FIFO, the
// pairs interleaved by a seeded generator) while the members contribute and
// complete, and each completion is checked against the kinds' definitions
// (vcx/call_program.h, CollectiveKind):
//   AllToAll   every member merges the maximum of every member's contribution;
//   AllToOne   the root merges the maximum of every member's;
//   OneToAll   every member merges the root's;
//   Prefix     member i merges the maximum of members 0..i;
//   Bipartite  each member merges the maximum of the OTHER side's members.
// The completions merge into the member's own contribution, as the engine's
// clock at a completion is at least what it contributed.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "clock_pool.h"
#include "collectives.h"
#include "messages.h"
#include "outbox.h"
#include "vcx/call_program.h"
#include "vcx/vector_clock.h"

using namespace vcx;
using namespace vcx::vclock;

namespace {

using Values = std::vector<ClockValue>;

struct ProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct CollMsg {
  Rank src, dst;
  CollHeader h;
  Values clock;
  bool aside;
};

class Net;

class NetOutbox final : public Outbox {
 public:
  NetOutbox(Net& net, Rank self) : net_(net), self_(self) {}
  void send_p2p(Rank, MsgType, std::uint16_t, QueueId, std::uint64_t, const ClockValue*) override {
    throw std::logic_error("collectives sent a point-to-point message");
  }
  inline void send_coll(Rank dst, const CollHeader& h, const ClockValue* clock,
                        bool aside) override;
  [[noreturn]] void fatal(const std::string& why) override { throw ProtocolError(why); }

 private:
  Net& net_;
  Rank self_;
};

// N ranks, each pair of them a FIFO channel.
class Net {
 public:
  explicit Net(std::uint32_t n) : n_(n) {
    for (std::uint32_t r = 0; r < n; ++r) {
      pools_.push_back(std::make_unique<ClockPool>(n));
      outs_.push_back(std::make_unique<NetOutbox>(*this, Rank{r}));
      colls_.push_back(std::make_unique<Collectives>(Rank{r}, n, *pools_[r], *outs_[r]));
    }
  }
  std::uint32_t size() const { return n_; }
  Collectives& at(std::uint32_t r) { return *colls_[r]; }
  ClockPool& pool(std::uint32_t r) { return *pools_[r]; }

  void post(Rank src, Rank dst, const CollHeader& h, const ClockValue* clock, bool aside) {
    REQUIRE(clock != nullptr);  // collective messages always carry a clock
    REQUIRE(dst.value < n_);
    CollMsg m{src, dst, h, Values(clock, clock + n_), aside};
    log.push_back(m);
    channels_[{src.value, dst.value}].push_back(std::move(m));
  }
  bool idle() const {
    for (const auto& [k, q] : channels_)
      if (!q.empty()) return false;
    return true;
  }
  // Delivers the oldest message of a random non-empty pair; false if none.
  bool deliver_one(std::mt19937& rng) {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> ready;
    for (const auto& [k, q] : channels_)
      if (!q.empty()) ready.push_back(k);
    if (ready.empty()) return false;
    auto& q = channels_[ready[rng() % ready.size()]];
    const CollMsg m = std::move(q.front());
    q.pop_front();
    colls_[m.dst.value]->on_message(m.src, m.h, m.clock);
    return true;
  }
  void drain(std::mt19937& rng) {
    while (deliver_one(rng)) {
    }
  }
  // Messages to `dst` only, in their pairs' order.
  void deliver_to(std::uint32_t dst) {
    for (auto& [k, q] : channels_)
      while (k.second == dst && !q.empty()) {
        const CollMsg m = std::move(q.front());
        q.pop_front();
        colls_[dst]->on_message(m.src, m.h, m.clock);
      }
  }

  std::vector<CollMsg> log;  // everything sent, in sending order

 private:
  std::uint32_t n_;
  // Pools first: the collectives, declared last, go first.
  std::vector<std::unique_ptr<ClockPool>> pools_;
  std::vector<std::unique_ptr<NetOutbox>> outs_;
  std::vector<std::unique_ptr<Collectives>> colls_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::deque<CollMsg>> channels_;
};

void NetOutbox::send_coll(Rank dst, const CollHeader& h, const ClockValue* clock, bool aside) {
  net_.post(self_, dst, h, clock, aside);
}

Values max_of(Values a, const Values& b) {
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = std::max(a[i], b[i]);
  return a;
}
Values values(const VectorClock& c) { return Values(c.view().begin(), c.view().end()); }

Op coll_op(GroupId g, std::uint64_t instance, CollectiveKind kind, Rank root,
           std::uint16_t flags = 0) {
  Op op;
  op.kind = OpKind::CollectiveContribute;
  op.flags = flags;
  op.collective = CollectiveRef{g, instance, kind, root};
  return op;
}

struct GroupDef {
  GroupId id;
  std::vector<Rank> members;  // in position order
  std::uint32_t second_side = 0;
};

// One collective of a scenario: its op and every member's contribution
// (indexed by world rank).
struct CollDef {
  const GroupDef* group;
  Op op;
  std::map<std::uint32_t, Values> contribution;
};

std::size_t position(const GroupDef& g, Rank r) {
  return static_cast<std::size_t>(std::find(g.members.begin(), g.members.end(), r) -
                                  g.members.begin());
}

// What the member's completion holds, by the kind's definition, starting
// from its own contribution.
Values expected_completion(const CollDef& c, Rank self) {
  const GroupDef& g = *c.group;
  const Values& own = c.contribution.at(self.value);
  Values out = own;
  const std::size_t pos = position(g, self);
  switch (c.op.collective.kind) {
    case CollectiveKind::AllToAll:
      for (const Rank m : g.members) out = max_of(out, c.contribution.at(m.value));
      break;
    case CollectiveKind::AllToOne:
      if (self == c.op.collective.root)
        for (const Rank m : g.members) out = max_of(out, c.contribution.at(m.value));
      break;
    case CollectiveKind::OneToAll:
      out = max_of(out, c.contribution.at(c.op.collective.root.value));
      break;
    case CollectiveKind::Prefix:
      for (std::size_t i = 0; i <= pos; ++i) out = max_of(out, c.contribution.at(g.members[i].value));
      break;
    case CollectiveKind::Bipartite: {
      const bool first_side = pos < g.second_side;
      for (std::size_t i = 0; i < g.members.size(); ++i)
        if ((i < g.second_side) != first_side)
          out = max_of(out, c.contribution.at(g.members[i].value));
      break;
    }
  }
  return out;
}

// A random subset of the world, at least `min` ranks, in random order.
std::vector<Rank> random_members(std::mt19937& rng, std::uint32_t n, std::uint32_t min) {
  std::vector<Rank> all;
  for (std::uint32_t r = 0; r < n; ++r) all.push_back(Rank{r});
  std::shuffle(all.begin(), all.end(), rng);
  const std::uint32_t size = min + static_cast<std::uint32_t>(rng() % (n - min + 1));
  all.resize(size);
  return all;
}

// Contributions: arbitrary clocks, except for blocking all-to-alls, whose
// definition assumes what vector clocks guarantee (no member's entry is
// larger anywhere than at that member).
void fill_contributions(std::mt19937& rng, CollDef& c, std::uint32_t n) {
  const bool blocking = (c.op.flags & kCollectiveBlocking) != 0;
  std::map<std::uint32_t, ClockValue> own;
  for (const Rank m : c.group->members) own[m.value] = 20 + rng() % 40;
  for (const Rank m : c.group->members) {
    Values v(n);
    for (std::uint32_t e = 0; e < n; ++e) {
      if (!blocking) {
        v[e] = rng() % 50;
      } else if (own.count(e)) {
        v[e] = e == m.value ? own[e] : rng() % (own[e] + 1);
      } else {
        v[e] = rng() % 50;
      }
    }
    c.contribution[m.value] = std::move(v);
  }
}

struct Step {
  enum Kind { AddGroup, Queued, Contribute, Complete } kind;
  std::size_t index;  // group (AddGroup) or collective
};

// Runs every member's program, interleaved with deliveries at random;
// checks each completion against its definition. `complete_after_drain`:
// complete only once every member contributed everything and every message
// is delivered, when every completion must succeed at its first attempt.
void run_scenario(std::uint32_t seed, std::uint32_t n, const std::vector<GroupDef>& groups,
                  const std::vector<CollDef>& colls,
                  const std::vector<std::vector<Step>>& programs, bool complete_after_drain) {
  INFO("seed " << seed << ", " << n << " ranks");
  std::mt19937 rng(seed);
  Net net(n);
  std::vector<std::size_t> next(n, 0);
  std::vector<bool> blocked(n, false);
  // Some ranks are slow to start: their early messages wait for their groups.
  std::vector<unsigned> weight(n);
  for (auto& w : weight) w = rng() % 3 == 0 ? 1 : 8;
  std::map<std::pair<std::size_t, std::uint32_t>, Values> results;

  auto runnable = [&](std::uint32_t r) {
    if (next[r] >= programs[r].size() || blocked[r]) return false;
    const Step& s = programs[r][next[r]];
    if (s.kind != Step::Complete || !complete_after_drain) return true;
    // Completions wait until every contribution and message is in.
    for (std::uint32_t q = 0; q < n; ++q)
      for (std::size_t i = next[q]; i < programs[q].size(); ++i)
        if (programs[q][i].kind != Step::Complete) return false;
    return net.idle();
  };
  for (int guard = 0;; ++guard) {
    REQUIRE(guard < 1000000);
    std::vector<std::uint32_t> ready;
    for (std::uint32_t r = 0; r < n; ++r)
      if (runnable(r))
        for (unsigned k = 0; k < weight[r]; ++k) ready.push_back(r);
    const bool messages = !net.idle();
    if (ready.empty() && !messages) break;
    if (messages && (ready.empty() || rng() % 2 == 0)) {
      net.deliver_one(rng);
      std::fill(blocked.begin(), blocked.end(), false);
      continue;
    }
    const std::uint32_t r = ready[rng() % ready.size()];
    const Step& s = programs[r][next[r]];
    Collectives& me = net.at(r);
    switch (s.kind) {
      case Step::AddGroup: {
        const GroupDef& g = groups[s.index];
        CHECK(me.add_group(g.id, g.members, g.second_side));
        me.route_early(g.id);
        break;
      }
      case Step::Queued:
        me.queued(colls[s.index].op.collective, colls[s.index].contribution.at(r)[r]);
        break;
      case Step::Contribute:
        me.contribute(colls[s.index].op, colls[s.index].contribution.at(r));
        break;
      case Step::Complete: {
        const CollDef& c = colls[s.index];
        VectorClock clock(n);
        clock.assign(c.contribution.at(r));
        Op op = c.op;
        op.kind = OpKind::CollectiveComplete;
        if (!me.complete(op, clock)) {
          REQUIRE_FALSE(complete_after_drain);
          // The clock is left alone until it completes.
          REQUIRE(values(clock) == c.contribution.at(r));
          blocked[r] = true;
          continue;
        }
        results[{s.index, r}] = values(clock);
        break;
      }
    }
    ++next[r];
  }
  // Nobody is stuck.
  for (std::uint32_t r = 0; r < n; ++r) {
    INFO("rank " << r);
    REQUIRE(next[r] == programs[r].size());
  }
  for (std::size_t i = 0; i < colls.size(); ++i)
    for (const Rank m : colls[i].group->members) {
      INFO("collective " << i << " (kind " << static_cast<int>(colls[i].op.collective.kind)
                         << ", root " << colls[i].op.collective.root.value << "), member "
                         << m.value << " at position " << position(*colls[i].group, m));
      CHECK(results.at({i, m.value}) == expected_completion(colls[i], m));
    }
  // Messages only between members of the collective's group, a result at
  // most once per member and instance.
  std::set<std::tuple<std::uint64_t, std::uint64_t, std::uint32_t>> results_received;
  for (const CollMsg& m : net.log) {
    const GroupDef* g = nullptr;
    for (const GroupDef& x : groups)
      if (x.id.value == m.h.group) g = &x;
    REQUIRE(g);
    CHECK(position(*g, m.src) < g->members.size());
    CHECK(position(*g, m.dst) < g->members.size());
    CHECK(m.src != m.dst);
    if (m.h.type != MsgType::CollUp)
      CHECK(results_received.insert({m.h.group, m.h.instance, m.dst.value}).second);
  }
  // Nothing kept once everybody is done.
  for (std::uint32_t r = 0; r < n; ++r) {
    INFO("rank " << r);
    CHECK(net.at(r).live() == 0);
    CHECK(net.pool(r).in_use() == 0);
  }
}

// Every member contributes and completes each collective, in the order of
// `colls`: one after the other, or all contributions first (always, with
// `contributions_first`).
std::vector<std::vector<Step>> programs_for(std::mt19937& rng, std::uint32_t n,
                                            const std::vector<GroupDef>& groups,
                                            const std::vector<CollDef>& colls,
                                            bool contributions_first_always) {
  std::vector<std::vector<Step>> programs(n);
  for (std::uint32_t r = 0; r < n; ++r) {
    for (std::size_t g = 0; g < groups.size(); ++g)
      if (position(groups[g], Rank{r}) < groups[g].members.size())
        programs[r].push_back({Step::AddGroup, g});
    const bool contributions_first = contributions_first_always || rng() % 2 == 0;
    std::vector<Step> completes;
    for (std::size_t i = 0; i < colls.size(); ++i) {
      if (position(*colls[i].group, Rank{r}) >= colls[i].group->members.size()) continue;
      programs[r].push_back({Step::Contribute, i});
      if (contributions_first)
        completes.push_back({Step::Complete, i});
      else
        programs[r].push_back({Step::Complete, i});
    }
    programs[r].insert(programs[r].end(), completes.begin(), completes.end());
  }
  return programs;
}

// A random scenario: a one-sided group and a two-sided one over a random
// world, and a run of collectives of the given kinds on them.
void random_scenario(std::uint32_t seed, const std::vector<CollectiveKind>& kinds,
                     bool complete_after_drain, bool blocking_too = false) {
  std::mt19937 rng(seed);
  const std::uint32_t n = 2 + rng() % 8;
  std::vector<GroupDef> groups(2);
  groups[0].id = GroupId{0x100 + seed};
  groups[0].members = random_members(rng, n, 1);
  groups[1].id = GroupId{0x9000 + seed};
  groups[1].members = random_members(rng, n, 2);
  groups[1].second_side =
      1 + static_cast<std::uint32_t>(rng() % (groups[1].members.size() - 1));

  std::vector<CollDef> colls;
  std::map<std::uint64_t, std::uint64_t> instances;
  const int count = 1 + static_cast<int>(rng() % 6);
  for (int i = 0; i < count; ++i) {
    const CollectiveKind kind = kinds[rng() % kinds.size()];
    const GroupDef& g = groups[kind == CollectiveKind::Bipartite ? 1 : 0];
    // Roots are world ranks; every kind carries one, only two use it.
    const Rank root = g.members[rng() % g.members.size()];
    const std::uint16_t flags =
        blocking_too && kind == CollectiveKind::AllToAll && rng() % 2 ? kCollectiveBlocking : 0;
    CollDef c{&g, coll_op(g.id, ++instances[g.id.value], kind, root, flags), {}};
    fill_contributions(rng, c, n);
    colls.push_back(std::move(c));
  }
  run_scenario(seed, n, groups, colls, programs_for(rng, n, groups, colls, complete_after_drain),
               complete_after_drain);
}

}  // namespace

// ---------------------------------------------------------------------------
// Groups

TEST_CASE("collectives: a group is registered once, with its members in position order",
          "[vclock-parts][collectives]") {
  Net net(4);
  Collectives& c = net.at(2);
  const std::vector<Rank> members{Rank{3}, Rank{2}, Rank{0}};
  CHECK(c.members(GroupId{7}) == nullptr);
  CHECK(c.add_group(GroupId{7}, members, 0));
  REQUIRE(c.members(GroupId{7}) != nullptr);
  CHECK(*c.members(GroupId{7}) == members);
  // Again with the same members: not new, and fine.
  CHECK_FALSE(c.add_group(GroupId{7}, members, 0));
  // With others, or other sides: fatal.
  const std::vector<Rank> others{Rank{3}, Rank{0}, Rank{2}};
  CHECK_THROWS_AS(c.add_group(GroupId{7}, others, 0), ProtocolError);
  CHECK_THROWS_AS(c.add_group(GroupId{7}, members, 1), ProtocolError);
  // A collective on a group never registered is fatal.
  VectorClock clock(4);
  CHECK_THROWS_AS(c.contribute(coll_op(GroupId{8}, 1, CollectiveKind::AllToAll, Rank{0}),
                               clock.view()),
                  ProtocolError);
}

TEST_CASE("collectives: messages that come before their group are held, then routed",
          "[vclock-parts][collectives]") {
  std::mt19937 rng(3);
  Net net(3);
  const GroupDef g{GroupId{5}, {Rank{0}, Rank{1}, Rank{2}}, 0};
  for (std::uint32_t r : {0, 2}) net.at(r).add_group(g.id, g.members, 0);
  // Two instances sent to rank 1 before it knows the group: a broadcast from
  // rank 0 and a prefix (rank 1 is at position 1: it waits for rank 0).
  const Values root_clock{5, 1, 0}, prefix0{1, 0, 7}, own{0, 3, 0};
  net.at(0).contribute(coll_op(g.id, 1, CollectiveKind::OneToAll, Rank{0}), root_clock);
  net.at(0).contribute(coll_op(g.id, 2, CollectiveKind::Prefix, Rank{0}), prefix0);
  net.deliver_to(1);
  CHECK(net.at(1).live() == 2);  // held, one state per instance
  CHECK(net.at(1).members(g.id) == nullptr);

  CHECK(net.at(1).add_group(g.id, g.members, 0));
  net.at(1).route_early(g.id);
  VectorClock clock(3);
  clock.assign(own);
  // The broadcast's result is in: complete at once.
  REQUIRE(net.at(1).complete(coll_op(g.id, 1, CollectiveKind::OneToAll, Rank{0}), clock));
  CHECK(values(clock) == max_of(own, root_clock));
  // The prefix passes on what came from position 0 once rank 1 contributes.
  net.at(1).contribute(coll_op(g.id, 2, CollectiveKind::Prefix, Rank{0}), own);
  VectorClock clock2(3);
  clock2.assign(own);
  REQUIRE(net.at(1).complete(coll_op(g.id, 2, CollectiveKind::Prefix, Rank{0}), clock2));
  CHECK(values(clock2) == max_of(own, prefix0));
  CHECK(net.at(1).live() == 0);
  CHECK(net.pool(1).in_use() == 0);
  // Rank 2 gets the broadcast and the prefix of positions 0 and 1.
  net.drain(rng);
  net.at(2).contribute(coll_op(g.id, 2, CollectiveKind::Prefix, Rank{0}), Values{0, 0, 1});
  VectorClock clock3(3);
  REQUIRE(net.at(2).complete(coll_op(g.id, 1, CollectiveKind::OneToAll, Rank{0}), clock3));
  CHECK(values(clock3) == root_clock);
  VectorClock clock4(3);
  clock4.assign(Values{0, 0, 1});
  REQUIRE(net.at(2).complete(coll_op(g.id, 2, CollectiveKind::Prefix, Rank{0}), clock4));
  CHECK(values(clock4) == max_of(max_of(prefix0, own), Values{0, 0, 1}));
  VectorClock clock0(3);
  REQUIRE(net.at(0).complete(coll_op(g.id, 2, CollectiveKind::Prefix, Rank{0}), clock0));
  for (std::uint32_t r = 0; r < 3; ++r) {
    CHECK(net.at(r).live() == 0);
    CHECK(net.pool(r).in_use() == 0);
  }
}

// ---------------------------------------------------------------------------
// Each kind against its definition, in random delivery orders

TEST_CASE("collectives: non-blocking all-to-all merges every member's contribution",
          "[vclock-parts][collectives]") {
  for (std::uint32_t seed = 1; seed <= 60; ++seed)
    random_scenario(seed, {CollectiveKind::AllToAll}, false);
}

TEST_CASE("collectives: all-to-one gives the root every member's contribution",
          "[vclock-parts][collectives]") {
  for (std::uint32_t seed = 100; seed <= 160; ++seed)
    random_scenario(seed, {CollectiveKind::AllToOne}, false);
}

TEST_CASE("collectives: one-to-all gives every member the root's contribution",
          "[vclock-parts][collectives]") {
  for (std::uint32_t seed = 200; seed <= 260; ++seed)
    random_scenario(seed, {CollectiveKind::OneToAll}, false);
}

TEST_CASE("collectives: prefix gives member i the contributions of members 0..i",
          "[vclock-parts][collectives]") {
  for (std::uint32_t seed = 300; seed <= 360; ++seed)
    random_scenario(seed, {CollectiveKind::Prefix}, false);
}

TEST_CASE("collectives: bipartite gives each member the other side's contributions, not its own "
          "side's",
          "[vclock-parts][collectives]") {
  for (std::uint32_t seed = 400; seed <= 460; ++seed)
    random_scenario(seed, {CollectiveKind::Bipartite}, false);
}

TEST_CASE("collectives: every kind mixed, blocking all-to-alls included",
          "[vclock-parts][collectives]") {
  const std::vector<CollectiveKind> all{CollectiveKind::AllToAll, CollectiveKind::AllToOne,
                                        CollectiveKind::OneToAll, CollectiveKind::Prefix,
                                        CollectiveKind::Bipartite};
  for (std::uint32_t seed = 500; seed <= 620; ++seed) random_scenario(seed, all, false, true);
}

TEST_CASE("collectives: results travel without the intermediate members' completions",
          "[vclock-parts][collectives]") {
  // Every member contributes, every message is delivered, and only then does
  // anybody complete: each completion must find its result there.
  const std::vector<CollectiveKind> all{CollectiveKind::AllToAll, CollectiveKind::AllToOne,
                                        CollectiveKind::OneToAll, CollectiveKind::Prefix,
                                        CollectiveKind::Bipartite};
  for (std::uint32_t seed = 700; seed <= 760; ++seed) random_scenario(seed, all, true, true);
}

// ---------------------------------------------------------------------------
// Blocking all-to-alls over every rank, contributed as they are queued

TEST_CASE("collectives: queued all-to-alls go ahead, their results only once the engine is there",
          "[vclock-parts][collectives]") {
  for (std::uint32_t seed = 1; seed <= 30; ++seed) {
    std::mt19937 rng(seed);
    const std::uint32_t n = 2 + rng() % 6;
    INFO("seed " << seed << ", " << n << " ranks");
    std::vector<GroupDef> groups(1);
    groups[0].id = GroupId{42};
    for (std::uint32_t r = 0; r < n; ++r) groups[0].members.push_back(Rank{r});
    std::shuffle(groups[0].members.begin(), groups[0].members.end(), rng);
    const int count = 1 + static_cast<int>(rng() % 5);
    std::vector<CollDef> colls;
    for (int i = 0; i < count; ++i) {
      CollDef c{&groups[0],
                coll_op(groups[0].id, i + 1, CollectiveKind::AllToAll, Rank{0},
                        kCollectiveBlocking),
                {}};
      fill_contributions(rng, c, n);
      colls.push_back(std::move(c));
    }

    // Every rank queues every call; nobody's engine is there yet.
    Net net(n);
    for (std::uint32_t r = 0; r < n; ++r) net.at(r).add_group(groups[0].id, groups[0].members, 0);
    for (std::uint32_t r = 0; r < n; ++r)
      for (const CollDef& c : colls) net.at(r).queued(c.op.collective, c.contribution.at(r)[r]);
    net.drain(rng);
    // Every contribution went up (a tree over n members has n-1 edges), aside;
    // no result came down.
    std::size_t ups = 0;
    for (const CollMsg& m : net.log) {
      CHECK(m.h.type == MsgType::CollUp);
      CHECK(m.aside);
      ups += m.h.type == MsgType::CollUp;
    }
    CHECK(ups == (n - 1) * colls.size());

    // The engines reach the calls, in random interleavings.
    std::vector<std::size_t> done(n, 0);
    std::vector<bool> contributed(n, false);
    for (int guard = 0;; ++guard) {
      REQUIRE(guard < 100000);
      std::vector<std::uint32_t> ready;
      for (std::uint32_t r = 0; r < n; ++r)
        if (done[r] < colls.size()) ready.push_back(r);
      if (ready.empty()) break;
      if (rng() % 2 == 0 && net.deliver_one(rng)) continue;
      const std::uint32_t r = ready[rng() % ready.size()];
      const CollDef& c = colls[done[r]];
      if (!contributed[r]) {
        net.at(r).contribute(c.op, c.contribution.at(r));
        contributed[r] = true;
        continue;
      }
      VectorClock clock(n);
      clock.assign(c.contribution.at(r));
      Op op = c.op;
      op.kind = OpKind::CollectiveComplete;
      if (!net.at(r).complete(op, clock)) {
        // Waits for a message, or for another engine to get there.
        CHECK(values(clock) == c.contribution.at(r));
        continue;
      }
      CHECK(values(clock) == expected_completion(c, Rank{r}));
      ++done[r];
      contributed[r] = false;
    }
    net.drain(rng);
    for (std::uint32_t r = 0; r < n; ++r) {
      CHECK(net.at(r).live() == 0);
      CHECK(net.pool(r).in_use() == 0);
    }
  }
}

TEST_CASE("collectives: at most kMaxAhead queued contributions are open at once",
          "[vclock-parts][collectives]") {
  std::mt19937 rng(9);
  Net net(2);
  const GroupDef g{GroupId{1}, {Rank{0}, Rank{1}}, 0};
  for (std::uint32_t r = 0; r < 2; ++r) net.at(r).add_group(g.id, g.members, 0);
  constexpr std::uint64_t kCount = Collectives::kMaxAhead + 10;
  auto op = [&](std::uint64_t i) {
    return coll_op(g.id, i, CollectiveKind::AllToAll, Rank{0}, kCollectiveBlocking);
  };
  // Rank 1's own entry at call i is i.
  auto clock_of = [](std::uint32_t r, std::uint64_t i) {
    return r == 0 ? Values{i, 0} : Values{0, i};
  };
  for (std::uint64_t i = 1; i <= kCount; ++i) net.at(1).queued(op(i).collective, i);
  auto ups_from_1 = [&] {
    return std::count_if(net.log.begin(), net.log.end(),
                         [](const CollMsg& m) { return m.src == Rank{1}; });
  };
  // Two members: rank 1 has no child, so each open one went up at once.
  CHECK(ups_from_1() == Collectives::kMaxAhead);
  // The engine reaches the first: one more may go.
  net.at(1).contribute(op(1), clock_of(1, 1));
  CHECK(ups_from_1() == Collectives::kMaxAhead + 1);

  // Everything else, in program order on each rank.
  std::vector<std::uint64_t> at{1, 1};
  std::vector<bool> contributed{false, true};
  while (at[0] <= kCount || at[1] <= kCount) {
    net.drain(rng);
    bool progress = false;
    for (std::uint32_t r = 0; r < 2; ++r) {
      if (at[r] > kCount) continue;
      if (!contributed[r]) {
        net.at(r).contribute(op(at[r]), clock_of(r, at[r]));
        contributed[r] = true;
        progress = true;
      }
      VectorClock clock(2);
      clock.assign(clock_of(r, at[r]));
      Op o = op(at[r]);
      o.kind = OpKind::CollectiveComplete;
      if (net.at(r).complete(o, clock)) {
        CHECK(values(clock) == Values{at[r], at[r]});
        ++at[r];
        contributed[r] = false;
        progress = true;
      }
    }
    REQUIRE((progress || !net.idle()));
  }
  net.drain(rng);
  for (std::uint32_t r = 0; r < 2; ++r) {
    CHECK(net.at(r).live() == 0);
    CHECK(net.pool(r).in_use() == 0);
  }
}

// Members that do not make the same call for an instance (MPI 4.0, 6.14):
// the first instance is completed by its definition; at the second one
// member's kind, root or operation differs from the others'. Whatever the
// delivery order, every member completes every instance (no tool waits for
// a part that never comes), knows the group mismatched from instance 2 on,
// and merges nothing there but what members contributed; nothing is left
// behind.
TEST_CASE("vclock collectives: members whose calls differ", "[vclock][collectives]") {
  struct View {
    CollectiveKind kind;
    std::uint32_t root;
    std::uint16_t operation;
  };
  struct Case {
    const char* what;
    View common;
    View odd;  // the last member's view of instance 2
  };
  const Case cases[] = {
      {"a broadcast against an allreduce", {CollectiveKind::AllToAll, 0, 7},
       {CollectiveKind::OneToAll, 0, 9}},
      {"two allreduce-like operations", {CollectiveKind::AllToAll, 0, 7},
       {CollectiveKind::AllToAll, 0, 8}},
      {"two roots of one broadcast", {CollectiveKind::OneToAll, 0, 9},
       {CollectiveKind::OneToAll, 1, 9}},
      {"a gather against a scatter", {CollectiveKind::AllToOne, 0, 4},
       {CollectiveKind::OneToAll, 0, 5}},
      {"a scan against an allreduce", {CollectiveKind::Prefix, 0, 3},
       {CollectiveKind::AllToAll, 0, 7}},
  };
  const GroupId g{77};
  for (const Case& c : cases)
    for (std::uint32_t n = 2; n <= 4; ++n)
      for (std::uint32_t seed = 1; seed <= 20; ++seed) {
        INFO(c.what << ", " << n << " ranks, seed " << seed);
        std::mt19937 rng(seed);
        Net net(n);
        std::vector<Rank> members;
        for (std::uint32_t r = 0; r < n; ++r) members.push_back(Rank{r});
        for (std::uint32_t r = 0; r < n; ++r) net.at(r).add_group(g, members, 0);
        // Instances 1..3: 1 agrees; 2 has the odd member; 3 agrees again.
        auto op_of = [&](std::uint32_t r, std::uint64_t instance, OpKind kind) {
          const View v = instance == 2 && r == n - 1 ? c.odd : c.common;
          Op op;
          op.kind = kind;
          op.collective = CollectiveRef{g, instance, v.kind, Rank{v.root}, v.operation};
          return op;
        };
        auto own = [&](std::uint32_t r, std::uint64_t instance) {
          Values v(n, 0);
          v[r] = 10 * instance + r;
          return v;
        };
        std::vector<std::uint64_t> at(n, 1);
        std::vector<bool> contributed(n, false), waiting(n, false), probed(n, false);
        std::vector<Values> first(n);
        for (int guard = 0;; ++guard) {
          REQUIRE(guard < 100000);
          std::vector<std::uint32_t> ready;
          for (std::uint32_t r = 0; r < n; ++r)
            if (at[r] <= 3 && !waiting[r]) ready.push_back(r);
          bool left = false;
          for (std::uint32_t r = 0; r < n; ++r) left |= at[r] <= 3;
          if (!left) break;
          if (!net.idle() && (ready.empty() || rng() % 2 == 0)) {
            net.deliver_one(rng);
            std::fill(waiting.begin(), waiting.end(), false);
            continue;
          }
          if (ready.empty()) {
            // Everyone left waits and nothing is on its way: the engines'
            // ticks, as the tools give them, make them probe, once each.
            bool asked = false;
            for (std::uint32_t r = 0; r < n; ++r)
              if (at[r] <= 3 && !probed[r]) {
                net.at(r).probe(op_of(r, at[r], OpKind::CollectiveComplete).collective);
                probed[r] = true;
                asked = true;
              }
            REQUIRE(asked);  // else the members wait for ever
            std::fill(waiting.begin(), waiting.end(), false);
            continue;
          }
          const std::uint32_t r = ready[rng() % ready.size()];
          if (!contributed[r]) {
            net.at(r).contribute(op_of(r, at[r], OpKind::CollectiveContribute), own(r, at[r]));
            contributed[r] = true;
            continue;
          }
          VectorClock clock(n);
          clock.assign(own(r, at[r]));
          if (!net.at(r).complete(op_of(r, at[r], OpKind::CollectiveComplete), clock)) {
            waiting[r] = true;
            continue;
          }
          probed[r] = false;
          if (at[r] == 1) {
            first[r] = values(clock);
          } else {
            // A member may have completed it by the messages of members
            // that call the same before it learnt of the mismatch: it merged
            // nothing but what members contributed there.
            Values all(n, 0);
            for (std::uint32_t q = 0; q < n; ++q) all = max_of(all, own(q, at[r]));
            CHECK(max_of(values(clock), all) == all);
          }
          ++at[r];
          contributed[r] = false;
        }
        net.drain(rng);
        for (std::uint32_t r = 0; r < n; ++r) {
          INFO("rank " << r);
          // Instance 1 by its definition.
          const GroupDef group{g, members, 0};
          CollDef one{&group, op_of(r, 1, OpKind::CollectiveContribute), {}};
          for (std::uint32_t q = 0; q < n; ++q) one.contribution[q] = own(q, 1);
          CHECK(first[r] == expected_completion(one, Rank{r}));
          CHECK(net.at(r).first_mismatch(g) == 2);
          CHECK_FALSE(net.at(r).mismatched(op_of(r, 1, OpKind::CollectiveComplete).collective));
          CHECK(net.at(r).mismatched(op_of(r, 3, OpKind::CollectiveComplete).collective));
          CHECK(net.at(r).live() == 0);
          CHECK(net.pool(r).in_use() == 0);
        }
      }
}

// Probes reach the group's first member (collectives.h, probe). Its own
// calls are kept in the order it made them, so a persistent collective's
// instance (top bit set) on the group does not hide later ones; and two
// probes that differ make a mismatch even before the first member knows
// the group, its members told once it does.
TEST_CASE("vclock collectives: probes to the first member", "[vclock][collectives]") {
  const GroupId g{91};
  const std::vector<Rank> members{Rank{0}, Rank{1}, Rank{2}};
  std::mt19937 rng(3);
  auto ref = [&](std::uint64_t instance, CollectiveKind kind, std::uint16_t op) {
    return CollectiveRef{g, instance, kind, Rank{0}, op};
  };
  auto contribute = [&](Net& net, std::uint32_t r, const CollectiveRef& c) {
    Op op;
    op.kind = OpKind::CollectiveContribute;
    op.collective = c;
    net.at(r).contribute(op, Values(3, 0));
  };

  SECTION("after a persistent collective") {
    Net net(3);
    for (std::uint32_t r = 0; r < 3; ++r) net.at(r).add_group(g, members, 0);
    const std::uint64_t persistent = (std::uint64_t{1} << 63) | (std::uint64_t{1} << 32) | 1;
    for (std::uint32_t r = 0; r < 3; ++r)
      contribute(net, r, ref(persistent, CollectiveKind::AllToAll, 5));
    net.drain(rng);
    contribute(net, 0, ref(2, CollectiveKind::AllToAll, 7));  // the first member
    net.at(1).probe(ref(2, CollectiveKind::OneToAll, 9));      // another call
    net.drain(rng);
    for (std::uint32_t r = 0; r < 3; ++r) CHECK(net.at(r).first_mismatch(g) == 2);
  }
  SECTION("before the first member knows the group") {
    Net net(3);
    net.at(1).add_group(g, members, 0);
    net.at(2).add_group(g, members, 0);
    net.at(1).probe(ref(1, CollectiveKind::AllToAll, 7));
    net.at(2).probe(ref(1, CollectiveKind::OneToAll, 9));
    net.drain(rng);
    CHECK(net.at(0).first_mismatch(g) == 1);
    CHECK(net.at(1).first_mismatch(g) == 0);  // not told yet
    net.at(0).add_group(g, members, 0);
    net.drain(rng);
    for (std::uint32_t r = 0; r < 3; ++r) CHECK(net.at(r).first_mismatch(g) == 1);
  }
}
