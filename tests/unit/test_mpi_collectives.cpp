// The MPI translator's collectives and communicators, driven with hand-built
// interceptor events (support/mpi_harness.h): every collective call of the
// call table in its blocking, non-blocking and persistent forms, per role;
// neighbourhood collectives on topologies; intercommunicator collectives
// (rooted and bipartite); the run-wide ids of every kind of communicator
// constructor. The mpi+engine cases run translated programs in real engines
// and compare with the reference model (support/engine_sim.h).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "support/mpi_harness.h"

using namespace vcx;
using namespace vcx::mpi;
using namespace vcx::mpitest;
using vcx::sim::Clock;
using vcx::sim::SimFatal;

namespace {

struct CallInfo {
  Call call;
  Family family;
  CollKind kind;
};

std::vector<CallInfo> call_table() {
  return {
#define VCX_X(name, family, kind) CallInfo{Call::name, Family::family, CollKind::kind},
      VCX_MPI_CALLS(VCX_X)
#undef VCX_X
  };
}

std::string name_of(Call c) { return kCallNames[static_cast<std::size_t>(c)]; }

CollectiveKind engine_kind(CollKind k) {
  switch (k) {
    case CollKind::AllToAll:
      return CollectiveKind::AllToAll;
    case CollKind::OneToAll:
      return CollectiveKind::OneToAll;
    case CollKind::AllToOne:
      return CollectiveKind::AllToOne;
    case CollKind::Prefix:
      return CollectiveKind::Prefix;
    default:
      throw std::logic_error("no engine kind");
  }
}

// The k-th start of the persistent collective whose _init took number i in
// its communicator's sequence: the top bit, i, then k.
std::uint64_t persistent_instance(std::uint64_t i, std::uint64_t k) {
  return std::uint64_t{1} << 63 | i << 32 | k;
}

// Which parts a member's role has (docs/clock-rules.md, "Collectives").
struct Parts {
  bool signals = false;
  bool waits = false;
};
Parts parts(CollKind k, std::int32_t rank, std::int32_t root, std::int32_t n) {
  switch (k) {
    case CollKind::AllToAll:
      return {true, true};
    case CollKind::OneToAll:
      return {rank == root, rank != root};
    case CollKind::AllToOne:
      return {rank != root, rank == root};
    case CollKind::Prefix:
      return {rank<n - 1, rank> 0};
    default:
      return {};
  }
}

// Every op of `p` is of `kind` and names this instance; there is exactly one
// when the part exists.
void check_part(const CallProgram& p, OpKind kind, bool present, const CollectiveRef& want) {
  CHECK(p.clocked() == present);
  if (present) CHECK(p.ops().size() == 1);
  CHECK(p.ops().size() <= 1);
  for (const Op& op : p.ops()) {
    CHECK(op.kind == kind);
    CHECK(op.collective.group == want.group);
    CHECK(op.collective.instance == want.instance);
    CHECK(op.collective.kind == want.kind);
    if (want.kind == CollectiveKind::OneToAll || want.kind == CollectiveKind::AllToOne)
      CHECK(op.collective.root == want.root);
  }
}

void check_blocking(const CallProgram& p, const CollectiveRef& want) {
  CHECK(p.clocked());  // every member of a blocking collective is clocked
  REQUIRE(p.ops().size() == 2);
  CHECK(p.ops()[0].kind == OpKind::CollectiveContribute);
  CHECK(p.ops()[0].flags == kCollectiveBlocking);
  CHECK(p.ops()[1].kind == OpKind::CollectiveComplete);
  CHECK(p.ops()[1].flags == 0);
  for (const Op& op : p.ops()) {
    CHECK(op.collective.group == want.group);
    CHECK(op.collective.instance == want.instance);
    CHECK(op.collective.kind == want.kind);
    if (want.kind != CollectiveKind::AllToAll && want.kind != CollectiveKind::Prefix)
      CHECK(op.collective.root == want.root);
  }
}

}  // namespace

// ---------------------------------------------------------------------------
// Every collective of the call table, per role

TEST_CASE("mpi: every collective call, blocking, non-blocking and persistent, per role", "[mpi]") {
  constexpr std::int32_t n = 4, root = 1;
  int checked = 0;
  for (std::int32_t rank = 0; rank < n; ++rank) {
    Tx tx(static_cast<std::uint32_t>(rank), n);
    tx.init(static_cast<std::uint32_t>(rank), n);
    std::uint64_t instance = 0;
    std::uint64_t request = 1000;
    for (const CallInfo& c : call_table()) {
      if (c.kind == CollKind::None || c.kind == CollKind::Neighbor) continue;
      INFO(name_of(c.call) << " at rank " << rank);
      CHECK(std::string(tx.translator().call_name(static_cast<std::uint16_t>(c.call))) ==
            name_of(c.call));
      const Parts role = parts(c.kind, rank, root, n);
      CollectiveRef want;
      want.group = world_id(tx);
      want.kind = engine_kind(c.kind);
      want.root = Rank{static_cast<std::uint32_t>(root)};
      ++checked;
      switch (c.family) {
        case Family::Collective:
          want.instance = ++instance;
          check_blocking(tx.collective(c.call, kWorldHandle, root), want);
          break;
        case Family::Icollective: {
          want.instance = ++instance;
          const std::uint64_t req = ++request;
          check_part(tx.collective(c.call, kWorldHandle, root, req), OpKind::CollectiveContribute,
                     role.signals, want);
          check_part(tx.wait(req), OpKind::CollectiveComplete, role.waits, want);
          break;
        }
        case Family::Pcollective: {
          const std::uint64_t req = ++request;
          const CallProgram init = tx.collective(c.call, kWorldHandle, root, req);
          CHECK_FALSE(init.clocked());
          CHECK(init.ops().empty());
          const std::uint64_t init_number = ++instance;  // the _init takes a number
          for (std::uint64_t start = 1; start <= 2; ++start) {
            want.instance = persistent_instance(init_number, start);
            check_part(tx.start({req}), OpKind::CollectiveContribute, role.signals, want);
            check_part(tx.wait(req), OpKind::CollectiveComplete, role.waits, want);
          }
          break;
        }
        default:
          FAIL("a collective of family " << static_cast<int>(c.family));
      }
    }
  }
  // Per rank: 51 all-to-all, 18 one-to-all, 18 all-to-one and 12 prefix calls.
  CHECK(checked == 4 * 99);
}

TEST_CASE("mpi: non-blocking collectives are clocked where the role has the part", "[mpi]") {
  // (call, rank) -> clocked at initiation, clocked at completion; root 2 of 4.
  struct Want {
    Call call;
    std::int32_t rank;
    bool at_init, at_completion;
  };
  const Want wants[] = {
      {Call::Ibcast, 2, true, false},    {Call::Ibcast, 0, false, true},
      {Call::Ibcast, 3, false, true},    {Call::Iscatterv, 2, true, false},
      {Call::Ireduce, 2, false, true},   {Call::Ireduce, 1, true, false},
      {Call::Igather_c, 3, true, false}, {Call::Iscan, 0, true, false},
      {Call::Iscan, 1, true, true},      {Call::Iscan, 2, true, true},
      {Call::Iscan, 3, false, true},     {Call::Iexscan, 3, false, true},
      {Call::Iexscan, 0, true, false},   {Call::Ibarrier, 0, true, true},
      {Call::Ibarrier, 2, true, true},   {Call::Iallreduce, 3, true, true},
  };
  for (const Want& w : wants) {
    INFO(name_of(w.call) << " at rank " << w.rank);
    Tx tx(static_cast<std::uint32_t>(w.rank), 4);
    tx.init(static_cast<std::uint32_t>(w.rank), 4);
    CHECK(tx.collective(w.call, kWorldHandle, 2, 5).clocked() == w.at_init);
    CHECK(tx.wait(5).clocked() == w.at_completion);
  }
}

TEST_CASE("mpi: collectives on a one-member communicator", "[mpi]") {
  Tx tx(1, 3);
  tx.init(1, 3);
  // Roles decide, not peers: a lone member has the parts of its role.
  CHECK(tx.collective(Call::Scan, kSelfHandle).clocked());
  CHECK(tx.collective(Call::Barrier, kSelfHandle).clocked());
  // A scan's only member is first (signals) and last (waits): both parts.
  CHECK(tx.collective(Call::Iscan, kSelfHandle, 0, 7).clocked());
  CHECK(tx.wait(7).clocked());
  // Instances were counted all the same.
  const CallProgram b = tx.collective(Call::Barrier, kSelfHandle);
  CHECK(b.ops()[0].collective.instance == 4);
  CHECK(b.ops()[0].collective.group == tx.rec().groups.at(1).first);
}

TEST_CASE("mpi: instances are counted per communicator over all forms", "[mpi]") {
  Tx tx(0, 2);
  tx.init(0, 2);
  tx.comm_new(Call::Comm_dup, kWorldHandle, 0x2000, {}, false, true);
  tx.collective(Call::Barrier_init, 0x2000, 0, 1);    // dup 1, at the _init
  tx.collective(Call::Ibarrier, kWorldHandle, 0, 2);  // world 1
  const CallProgram s1 = tx.start({1});               // start 1 of dup 1
  CHECK(s1.ops()[0].collective.instance == persistent_instance(1, 1));
  tx.collective(Call::Allreduce, 0x2000);  // dup 2
  tx.wait(1);
  tx.collective(Call::Ibcast, 0x2000, 0, 2);  // dup 3
  const CallProgram s2 = tx.start({1});       // start 2 of dup 1
  CHECK(s2.ops()[0].collective.instance == persistent_instance(1, 2));
  const CallProgram w = tx.collective(Call::Barrier);
  CHECK(w.ops()[0].collective.instance == 2);
  const CallProgram d = tx.collective(Call::Scan, 0x2000);
  CHECK(d.ops()[0].collective.instance == 4);
}

TEST_CASE("mpi: starts of persistent collectives match by their _init, in any order", "[mpi]") {
  // Rank 0 starts the bcast first, rank 1 the barrier first: each start
  // names the instance of its own request at both ranks.
  std::map<std::uint32_t, std::map<Call, std::uint64_t>> seen;
  for (std::uint32_t r = 0; r < 2; ++r) {
    Tx tx(r, 2);
    tx.init(r, 2);
    tx.collective(Call::Bcast_init, kWorldHandle, 0, 70);
    tx.collective(Call::Barrier_init, kWorldHandle, 0, 71);
    const std::vector<std::uint64_t> order =
        r == 0 ? std::vector<std::uint64_t>{70, 71} : std::vector<std::uint64_t>{71, 70};
    for (const std::uint64_t req : order) {
      const CallProgram p = tx.start({req});
      const Call call = req == 70 ? Call::Bcast_init : Call::Barrier_init;
      if (p.ops().empty()) continue;  // a bcast's non-root: its part waits for completion
      seen[r][call] = p.ops()[0].collective.instance;
    }
    const CallProgram done = tx.wait(70);
    if (r == 1) {
      REQUIRE(done.ops().size() == 1);
      seen[r][Call::Bcast_init] = done.ops()[0].collective.instance;
    }
  }
  CHECK(seen[0][Call::Bcast_init] == persistent_instance(1, 1));
  CHECK(seen[1][Call::Bcast_init] == persistent_instance(1, 1));
  CHECK(seen[0][Call::Barrier_init] == persistent_instance(2, 1));
  CHECK(seen[1][Call::Barrier_init] == persistent_instance(2, 1));
}

// ---------------------------------------------------------------------------
// Neighbourhood collectives

namespace {

// Five ranks; a distributed graph over world {3, 2, 1, 0, 4} (communicator
// rank c is world 3 - c, and 4 is c = 4). Edges in communicator ranks:
// 0 -> 1 twice, 2 -> 0, 3 -> 1; c = 4 has none. MPI_PROC_NULL entries are
// skipped.
constexpr std::uint64_t kTopo = 0x4000;
const std::vector<std::int32_t> kTopoMembers{3, 2, 1, 0, 4};
const std::vector<std::vector<std::int32_t>> kTopoOut{{1, 1, kRankProcNull}, {}, {0}, {1}, {}};
const std::vector<std::vector<std::int32_t>> kTopoIn{{2}, {0, 0, 3}, {kRankProcNull}, {}, {}};

std::int32_t topo_rank(std::uint32_t world) {
  return static_cast<std::int32_t>(
      std::find(kTopoMembers.begin(), kTopoMembers.end(), static_cast<std::int32_t>(world)) -
      kTopoMembers.begin());
}

CallProgram make_topology(Tx& tx, std::uint32_t world) {
  CommSpec spec;
  spec.call = Call::Dist_graph_create_adjacent;
  spec.newcomm = kTopo;
  spec.local = kTopoMembers;
  spec.topology = true;
  spec.in = kTopoIn[static_cast<std::size_t>(topo_rank(world))];
  spec.out = kTopoOut[static_cast<std::size_t>(topo_rank(world))];
  return tx.comm_new(spec);
}

// One queue per communicator, and one per persistent neighbourhood
// collective (`init`, the number its _init took): instances follow each
// other on it in order.
QueueId neighbour_queue(GroupId comm, std::uint64_t init = 0) {
  return QueueId{comm.value, (std::uint64_t{1} << 40) + init};
}

struct NeighbourOps {
  std::vector<Rank> signals;         // destinations, in order
  std::vector<std::uint64_t> waits;  // receive tokens, in order
  std::set<QueueId> queues;
  bool other = false;  // any op that is neither
};
NeighbourOps split_ops(const CallProgram& p) {
  NeighbourOps n;
  for (const Op& op : p.ops()) {
    if (op.kind == OpKind::Signal) {
      n.signals.push_back(op.peer);
      n.queues.insert(op.queue);
      CHECK(op.flags == 0);  // nobody answers a neighbour's message
    } else if (op.kind == OpKind::Wait) {
      n.waits.push_back(op.value);
    } else {
      n.other = true;
    }
  }
  return n;
}

}  // namespace

TEST_CASE("mpi: neighbourhood collectives signal out-neighbours and wait for in-neighbours",
          "[mpi]") {
  // World rank -> its neighbours as world ranks (MPI's order, PROC_NULL left out).
  const std::map<std::uint32_t, std::vector<Rank>> out{
      {3, ranks({2, 2})}, {2, {}}, {1, ranks({3})}, {0, ranks({2})}, {4, {}}};
  const std::map<std::uint32_t, std::vector<Rank>> in{
      {3, ranks({1})}, {2, ranks({3, 3, 0})}, {1, {}}, {0, {}}, {4, {}}};
  for (std::uint32_t w = 0; w < 5; ++w) {
    INFO("world rank " << w);
    Tx tx(w, 5);
    tx.init(w, 5);
    const CallProgram c = make_topology(tx, w);
    CHECK_FALSE(c.clocked());
    const GroupId topo = tx.rec().groups.back().first;
    CHECK(tx.rec().groups.back().second == ranks({3, 2, 1, 0, 4}));
    auto& rec = tx.rec();
    const bool has_out = !out.at(w).empty(), has_in = !in.at(w).empty();

    // The receives of one instance: created without an answer to give,
    // bound at once, on the instance's own queue, in the in-neighbours' order.
    auto check_receives = [&](const std::vector<std::uint64_t>& tokens, std::size_t first_bind,
                              std::uint64_t init) {
      REQUIRE(tokens.size() == in.at(w).size());
      REQUIRE(rec.binds.size() == first_bind + tokens.size());
      for (std::size_t i = 0; i < tokens.size(); ++i) {
        CHECK_FALSE(rec.answers(tokens[i]));
        CHECK(rec.binds[first_bind + i] ==
              Bind{tokens[i], in.at(w)[i], neighbour_queue(topo, init)});
      }
    };

    SECTION("blocking") {
      for (Call call : {Call::Neighbor_allgather, Call::Neighbor_alltoallw_c}) {
        INFO(name_of(call));
        const std::size_t first_bind = rec.binds.size();
        const CallProgram p = tx.collective(call, kTopo);
        CHECK(p.clocked() == (has_out || has_in));
        const NeighbourOps n = split_ops(p);
        CHECK_FALSE(n.other);  // no Snapshot: these receives answer nobody
        CHECK(n.signals == out.at(w));
        if (has_out) CHECK(n.queues == std::set<QueueId>{neighbour_queue(topo)});
        check_receives(n.waits, first_bind, 0);
        // Signals precede waits: the signal part, then the wait part.
        if (has_out && has_in) CHECK(p.ops()[0].kind == OpKind::Signal);
      }
    }
    SECTION("non-blocking") {
      const std::size_t first_bind = rec.binds.size();
      const CallProgram i = tx.collective(Call::Ineighbor_alltoall, kTopo, 0, 9);
      CHECK(i.clocked() == has_out);
      const NeighbourOps ni = split_ops(i);
      CHECK(ni.signals == out.at(w));
      CHECK(ni.waits.empty());
      CHECK_FALSE(ni.other);
      REQUIRE(rec.binds.size() == first_bind + in.at(w).size());  // bound at initiation
      const CallProgram done = tx.wait(9);
      CHECK(done.clocked() == has_in);
      const NeighbourOps nd = split_ops(done);
      CHECK(nd.signals.empty());
      CHECK_FALSE(nd.other);
      check_receives(nd.waits, first_bind, 0);
    }
    SECTION("persistent") {
      const CallProgram init = tx.collective(Call::Neighbor_allgatherv_init, kTopo, 0, 9);
      CHECK_FALSE(init.clocked());
      CHECK(init.ops().empty());
      CHECK(rec.binds.empty() == true);
      // The _init took number 1 on the topology communicator: its starts
      // travel on a queue of their own.
      for (int start = 1; start <= 2; ++start) {
        const std::size_t first_bind = rec.binds.size();
        const CallProgram s = tx.start({9});
        CHECK(s.clocked() == has_out);
        const NeighbourOps ns = split_ops(s);
        CHECK(ns.signals == out.at(w));
        if (has_out) CHECK(ns.queues == std::set<QueueId>{neighbour_queue(topo, 1)});
        const CallProgram done = tx.wait(9);
        CHECK(done.clocked() == has_in);
        check_receives(split_ops(done).waits, first_bind, 1);
      }
    }
  }
}

TEST_CASE("mpi: neighbour signals and receives agree between ranks", "[mpi]") {
  std::vector<std::unique_ptr<Tx>> tx;
  std::map<std::tuple<std::uint32_t, std::uint32_t, QueueId>, int> sent, bound;
  for (std::uint32_t w = 0; w < 5; ++w) {
    tx.push_back(std::make_unique<Tx>(w, 5));
    tx[w]->init(w, 5);
    make_topology(*tx[w], w);
    for (int k = 0; k < 2; ++k) {
      const std::size_t first_bind = tx[w]->rec().binds.size();
      const CallProgram p = tx[w]->collective(Call::Neighbor_alltoallv, kTopo);
      for (const Op& op : p.ops())
        if (op.kind == OpKind::Signal) ++sent[{w, op.peer.value, op.queue}];
      for (std::size_t i = first_bind; i < tx[w]->rec().binds.size(); ++i) {
        const Bind& b = tx[w]->rec().binds[i];
        ++bound[{b.src.value, w, b.queue}];
      }
    }
  }
  CHECK(sent == bound);
  CHECK(sent.size() == 3);  // three distinct edges, on one queue for both instances
}

TEST_CASE("mpi: neighbourhood collectives need a topology", "[mpi]") {
  Tx tx(0, 5);
  tx.init(0, 5);
  CHECK_THROWS_AS(tx.collective(Call::Neighbor_allgather), SimFatal);
  make_topology(tx, 0);
  // A split of a topology communicator has no topology of its own.
  tx.comm_new(Call::Comm_split, kTopo, 0x4100, {0, 1});
  CHECK_THROWS_AS(tx.collective(Call::Ineighbor_alltoall, 0x4100, 0, 3), SimFatal);
}

TEST_CASE("mpi: a duplicate of a topology communicator keeps its neighbours", "[mpi]") {
  for (Call dup : {Call::Comm_dup, Call::Comm_idup, Call::Comm_dup_with_info}) {
    INFO(name_of(dup));
    Tx tx(3, 5);
    tx.init(3, 5);
    make_topology(tx, 3);
    const GroupId topo = tx.rec().groups.back().first;
    tx.comm_new(dup, kTopo, 0x4200, {}, false, /*same_group=*/true);
    const GroupId copy = tx.rec().groups.back().first;
    CHECK(copy != topo);
    CHECK(tx.rec().groups.back().second == ranks({3, 2, 1, 0, 4}));
    const CallProgram p = tx.collective(Call::Neighbor_alltoall, 0x4200);
    CHECK(p.clocked());
    const NeighbourOps n = split_ops(p);
    CHECK(n.signals == ranks({2, 2}));
    CHECK(n.queues == std::set<QueueId>{neighbour_queue(copy)});
    REQUIRE(n.waits.size() == 1);
    CHECK(tx.rec().binds.back() == Bind{n.waits[0], Rank{1}, neighbour_queue(copy)});
    // And a duplicate of the duplicate.
    tx.comm_new(Call::Comm_dup, 0x4200, 0x4300, {}, false, true);
    CHECK(split_ops(tx.collective(Call::Neighbor_alltoall, 0x4300)).signals == ranks({2, 2}));
  }
}

// ---------------------------------------------------------------------------
// Intercommunicators

namespace {

// Five ranks: group A is world {4, 0, 2} in that rank order, group B is
// world {3, 1}. Each side first splits the world, then creates the
// intercommunicator from its half.
constexpr std::uint64_t kHalf = 0x2000;
constexpr std::uint64_t kInter = 0x3000;
const std::vector<std::int32_t> kA{4, 0, 2};
const std::vector<std::int32_t> kB{3, 1};

bool in_a(std::uint32_t w) { return w == 4 || w == 0 || w == 2; }

std::vector<CallProgram> make_intercomm(Tx& tx, std::uint32_t w, std::int32_t tag = 7,
                                        std::uint64_t handle = kInter, bool split = true) {
  std::vector<CallProgram> out;
  if (split) out.push_back(tx.comm_new(Call::Comm_split, kWorldHandle, kHalf, in_a(w) ? kA : kB));
  CommSpec spec;
  spec.call = Call::Intercomm_create;
  spec.parent = kHalf;
  spec.newcomm = handle;
  spec.local = in_a(w) ? kA : kB;
  spec.remote = in_a(w) ? kB : kA;
  spec.context = CommContext::Intercomm;
  spec.tag = tag;
  out.push_back(tx.comm_new(spec));
  return out;
}

// The root argument a rank passes to a rooted intercommunicator collective
// whose root is world rank `root`.
std::int32_t root_arg(std::uint32_t w, std::uint32_t root) {
  const bool root_in_a = in_a(root);
  if (in_a(w) == root_in_a) return w == root ? kRankRoot : kRankProcNull;
  const auto& g = root_in_a ? kA : kB;
  return static_cast<std::int32_t>(std::find(g.begin(), g.end(), static_cast<std::int32_t>(root)) -
                                   g.begin());
}

// Sends on the intercommunicator to remote rank 0; its queue names the id.
QueueId inter_queue(Tx& tx, std::uint64_t handle = kInter) {
  return ops(tx.send(Call::Send, 0, 1, handle)).at(0).queue;
}

}  // namespace

TEST_CASE("mpi: both sides of an intercommunicator derive the same id", "[mpi]") {
  std::vector<std::unique_ptr<Tx>> tx;
  for (std::uint32_t w = 0; w < 5; ++w) {
    tx.push_back(std::make_unique<Tx>(w, 5));
    tx[w]->init(w, 5);
    for (const CallProgram& p : make_intercomm(*tx[w], w)) {
      CHECK_FALSE(p.clocked());
      CHECK(p.ops().empty());
    }
    make_intercomm(*tx[w], w, 7, 0x3001, false);  // again, same groups and tag
    make_intercomm(*tx[w], w, 8, 0x3002, false);  // another tag
  }
  std::vector<std::uint64_t> ids;
  for (std::uint64_t h : {kInter, std::uint64_t{0x3001}, std::uint64_t{0x3002}}) {
    const QueueId q = inter_queue(*tx[0], h);
    ids.push_back(q.a);
    for (std::uint32_t w = 1; w < 5; ++w) {
      INFO("handle " << h << " world rank " << w);
      CHECK(inter_queue(*tx[w], h).a == q.a);
    }
  }
  CHECK(ids[0] != ids[1]);
  CHECK(ids[0] != ids[2]);
  CHECK(ids[1] != ids[2]);

  // Point-to-point on it names remote ranks, and sender and receiver agree.
  const CallProgram s = tx[0]->send(Call::Send, 1, 3, kInter);  // A -> B's rank 1
  CHECK(s.ops()[0].peer == Rank{1});
  tx[1]->recv(1, 3, 1, 3, kInter);  // B's rank 1 from A's rank 1 (world 0)
  CHECK(tx[1]->rec().binds.back().src == Rank{0});
  CHECK(tx[1]->rec().binds.back().queue == s.ops()[0].queue);
}

TEST_CASE("mpi: rooted intercommunicator collectives: root, other group, MPI_PROC_NULL", "[mpi]") {
  std::vector<std::unique_ptr<Tx>> tx;
  for (std::uint32_t w = 0; w < 5; ++w) {
    tx.push_back(std::make_unique<Tx>(w, 5));
    tx[w]->init(w, 5);
    make_intercomm(*tx[w], w);
  }
  struct Rooted {
    Call call;
    std::uint32_t root;  // world rank
    CollectiveKind kind;
  };
  std::uint64_t instance = 0;
  for (const Rooted& c : {Rooted{Call::Bcast, 0, CollectiveKind::OneToAll},
                          Rooted{Call::Reduce, 1, CollectiveKind::AllToOne},
                          Rooted{Call::Scatterv_c, 2, CollectiveKind::OneToAll},
                          Rooted{Call::Gather, 3, CollectiveKind::AllToOne}}) {
    ++instance;
    std::optional<GroupId> group;
    for (std::uint32_t w = 0; w < 5; ++w) {
      INFO(name_of(c.call) << " rooted at " << c.root << ", world rank " << w);
      const std::size_t groups_before = tx[w]->rec().groups.size();
      const CallProgram p = tx[w]->collective(c.call, kInter, root_arg(w, c.root));
      if (root_arg(w, c.root) == kRankProcNull) {
        // The root's own group's other members take no part at all.
        CHECK_FALSE(p.clocked());
        CHECK(p.ops().empty());
        CHECK(tx[w]->rec().groups.size() == groups_before);
        continue;
      }
      CollectiveRef want;
      want.kind = c.kind;
      want.instance = instance;
      want.root = Rank{c.root};
      REQUIRE(tx[w]->rec().groups.size() == groups_before + 1);
      const auto& [id, members] = tx[w]->rec().groups.back();
      if (!group) group = id;
      want.group = *group;
      check_blocking(p, want);
      // The root first, then the other group in its rank order.
      std::vector<Rank> expect{Rank{c.root}};
      for (std::int32_t m : in_a(c.root) ? kB : kA)
        expect.push_back(Rank{static_cast<std::uint32_t>(m)});
      CHECK(members == expect);
      CHECK(tx[w]->rec().sides.back() == 0u);
    }
  }
  // Every member counted every call, MPI_PROC_NULL ones included.
  for (std::uint32_t w = 0; w < 5; ++w) {
    const CallProgram b = tx[w]->collective(Call::Barrier, kInter);
    CHECK(ops(b).at(0).collective.instance == instance + 1);
  }
}

TEST_CASE("mpi: bipartite intercommunicator collectives: the same group on both sides", "[mpi]") {
  std::vector<std::unique_ptr<Tx>> tx;
  for (std::uint32_t w = 0; w < 5; ++w) {
    tx.push_back(std::make_unique<Tx>(w, 5));
    tx[w]->init(w, 5);
    make_intercomm(*tx[w], w);
  }
  const Call calls[] = {Call::Barrier,
                        Call::Allreduce,
                        Call::Allgatherv_c,
                        Call::Alltoallw,
                        Call::Reduce_scatter_block,
                        Call::Iallgather,
                        Call::Ibarrier,
                        Call::Alltoall_init};
  std::uint64_t instance = 0;
  for (Call call : calls) {
    const Family family = kCallFamily[static_cast<std::size_t>(call)];
    std::optional<std::pair<GroupId, std::vector<Rank>>> agreed;
    std::uint64_t first_instance = 0;
    for (std::uint32_t w = 0; w < 5; ++w) {
      INFO(name_of(call) << " at world rank " << w);
      auto& rec = tx[w]->rec();
      std::vector<CallProgram> parts;
      if (family == Family::Collective) {
        parts.push_back(tx[w]->collective(call, kInter));
      } else if (family == Family::Icollective) {
        parts.push_back(tx[w]->collective(call, kInter, 0, 44));
        parts.push_back(tx[w]->wait(44));
      } else {
        CHECK(tx[w]->collective(call, kInter, 0, 44).ops().empty());
        parts.push_back(tx[w]->start({44}));
        parts.push_back(tx[w]->wait(44));
      }
      // Both parts exist for every member: all are clocked.
      for (const CallProgram& p : parts) {
        CHECK(p.clocked());
        REQUIRE_FALSE(p.ops().empty());
        CHECK(p.ops()[0].collective.kind == CollectiveKind::Bipartite);
        CHECK(p.ops()[0].collective.group == rec.groups.back().first);
      }
      if (w == 0) first_instance = parts[0].ops()[0].collective.instance;
      CHECK(parts[0].ops()[0].collective.instance == first_instance);
      // The side holding the lowest world rank first, whichever is local.
      CHECK(rec.groups.back().second == ranks({4, 0, 2, 3, 1}));
      CHECK(rec.sides.back() == 3u);
      if (!agreed) agreed = rec.groups.back();
      CHECK(rec.groups.back() == *agreed);
    }
    // A persistent one's _init takes the number; its first start is named by it.
    ++instance;
    CHECK(first_instance ==
          (family == Family::Pcollective ? persistent_instance(instance, 1) : instance));
  }
}

TEST_CASE("mpi: a non-blocking rooted intercommunicator collective", "[mpi]") {
  // Ibcast from world 0 (in A): the root is clocked at initiation, B at
  // completion, A's other members never.
  for (std::uint32_t w = 0; w < 5; ++w) {
    INFO("world rank " << w);
    Tx tx(w, 5);
    tx.init(w, 5);
    make_intercomm(tx, w);
    const CallProgram i = tx.collective(Call::Ibcast, kInter, root_arg(w, 0), 12);
    const CallProgram c = tx.wait(12);
    const bool root = w == 0, other_group = !in_a(w);
    CHECK(i.clocked() == root);
    CHECK(c.clocked() == other_group);
    if (!root && !other_group) {
      CHECK(i.ops().empty());
      CHECK(c.ops().empty());
    }
    // Igather to world 1 (in B), persistent: A signals at each start, the
    // root waits at each completion, world 3 does nothing.
    tx.collective(Call::Gather_init, kInter, root_arg(w, 1), 13);
    for (int round = 0; round < 2; ++round) {
      CHECK(tx.start({13}).clocked() == in_a(w));
      CHECK(tx.wait(13).clocked() == (w == 1));
    }
  }
}

TEST_CASE(
    "mpi: a persistent rooted intercommunicator collective initialised at MPI_PROC_NULL "
    "still counts its _init",
    "[mpi]") {
  // MPI_Bcast_init on the intercommunicator, root world 0 in A; world 4 (A,
  // not the root) passes MPI_PROC_NULL. The _init is instance 1 at every
  // member and the starts take no number, so a barrier after two starts is
  // instance 2 everywhere; the root (at its start) and B's world 3 (at its
  // completion) name the same instance for each start.
  std::vector<std::uint64_t> barrier_instance;
  std::map<std::uint32_t, std::vector<std::uint64_t>> start_instances;
  for (std::uint32_t w : {0u, 4u, 3u}) {
    INFO("world rank " << w);
    Tx tx(w, 5);
    tx.init(w, 5);
    make_intercomm(tx, w);
    tx.collective(Call::Bcast_init, kInter, root_arg(w, 0), 21);
    for (int round = 0; round < 2; ++round) {
      const CallProgram s = tx.start({21});
      const CallProgram c = tx.wait(21);
      const CallProgram& part = w == 0 ? s : c;
      if (w == 4) {
        CHECK(s.ops().empty());
        CHECK(c.ops().empty());
      } else {
        REQUIRE(part.ops().size() == 1);
        start_instances[w].push_back(part.ops()[0].collective.instance);
      }
    }
    barrier_instance.push_back(ops(tx.collective(Call::Barrier, kInter)).at(0).collective.instance);
  }
  CHECK(barrier_instance == std::vector<std::uint64_t>{2, 2, 2});
  const std::vector<std::uint64_t> want{persistent_instance(1, 1), persistent_instance(1, 2)};
  CHECK(start_instances[0] == want);
  CHECK(start_instances[3] == want);
}

TEST_CASE("mpi: scans and neighbourhood collectives on an intercommunicator are fatal", "[mpi]") {
  Tx tx(0, 5);
  tx.init(0, 5);
  make_intercomm(tx, 0);
  CHECK_THROWS_AS(tx.collective(Call::Scan, kInter), SimFatal);
  CHECK_THROWS_AS(tx.collective(Call::Neighbor_allgather, kInter), SimFatal);
}

// ---------------------------------------------------------------------------
// Communicator ids for every way members agree on them

TEST_CASE(
    "mpi: communicator ids from the parent: merge, dup of an intercommunicator, "
    "topologies with MPI_COMM_NULL",
    "[mpi]") {
  std::vector<std::unique_ptr<Tx>> tx;
  for (std::uint32_t w = 0; w < 5; ++w) {
    tx.push_back(std::make_unique<Tx>(w, 5));
    tx[w]->init(w, 5);
    make_intercomm(*tx[w], w);
    // A duplicate of the intercommunicator: same groups, both sides agree.
    tx[w]->comm_new(Call::Comm_dup, kInter, 0x3100, {}, false, true);
    // Merged: B's ranks first (say, high = true on A), one intracommunicator.
    tx[w]->comm_new(Call::Intercomm_merge, kInter, 0x3200, {3, 1, 4, 0, 2});
    // A Cartesian grid of 3 on the world: ranks 3 and 4 get MPI_COMM_NULL.
    CommSpec cart;
    cart.call = Call::Cart_create;
    cart.newcomm = w < 3 ? 0x3300 : 0;
    cart.is_null = w >= 3;
    if (w < 3) {
      cart.local = {0, 1, 2};
      cart.topology = true;
      cart.in = {kRankProcNull, kRankProcNull};
      cart.out = {kRankProcNull, kRankProcNull};
    }
    tx[w]->comm_new(cart);
    // A later constructor on the world: everyone agrees, null or not.
    tx[w]->comm_new(Call::Comm_dup, kWorldHandle, 0x3400, {}, false, true);
  }
  std::set<std::uint64_t> ids;
  const std::uint64_t dup_inter = inter_queue(*tx[0], 0x3100).a;
  ids.insert(dup_inter);
  ids.insert(inter_queue(*tx[0], kInter).a);
  for (std::uint32_t w = 1; w < 5; ++w) CHECK(inter_queue(*tx[w], 0x3100).a == dup_inter);
  auto group_of = [&](std::uint32_t w, std::size_t from_end) {
    const auto& g = tx[w]->rec().groups;
    return g.at(g.size() - 1 - from_end);
  };
  for (std::uint32_t w = 0; w < 5; ++w) {
    INFO("world rank " << w);
    // The merged communicator is the second-to-last (or third) registration.
    const std::size_t merged_at = w < 3 ? 2 : 1;
    CHECK(group_of(w, merged_at) == group_of(0, 2));
    CHECK(group_of(w, merged_at).second == ranks({3, 1, 4, 0, 2}));
    CHECK(group_of(w, 0) == group_of(0, 0));             // the world's dup
    if (w < 3) CHECK(group_of(w, 1) == group_of(0, 1));  // the grid
  }
  ids.insert(group_of(0, 2).first.value);
  ids.insert(group_of(0, 1).first.value);
  ids.insert(group_of(0, 0).first.value);
  CHECK(ids.size() == 5);
  // The grid has a topology even though every neighbour is MPI_PROC_NULL.
  CHECK_FALSE(tx[1]->collective(Call::Neighbor_allgather, 0x3300).clocked());
}

TEST_CASE("mpi: communicator ids over a group with a tag (Comm_create_group)", "[mpi]") {
  // Ranks 2 and 0 build communicators over the group {2, 0}; rank 1 takes no part.
  std::vector<std::unique_ptr<Tx>> tx;
  for (std::uint32_t w = 0; w < 3; ++w) {
    tx.push_back(std::make_unique<Tx>(w, 3));
    tx[w]->init(w, 3);
  }
  auto create = [&](std::uint32_t w, Call call, std::int32_t tag, std::uint64_t handle) {
    CommSpec spec;
    spec.call = call;
    spec.newcomm = handle;
    spec.local = {2, 0};
    spec.context = CommContext::Group;
    spec.tag = tag;
    const CallProgram p = tx[w]->comm_new(spec);
    CHECK_FALSE(p.clocked());
    return tx[w]->rec().groups.back();
  };
  std::vector<GroupId> ids;
  for (std::uint32_t w : {2u, 0u}) {
    INFO("world rank " << w);
    const auto a = create(w, Call::Comm_create_group, 5, 0x10);
    const auto b = create(w, Call::Comm_create_group, 5, 0x11);  // same group and tag again
    const auto c = create(w, Call::Comm_create_group, 6, 0x12);  // another tag
    const auto d = create(w, Call::Comm_create_from_group, 5, 0x13);
    CHECK(a.second == ranks({2, 0}));
    for (const auto& g : {a, b, c, d}) ids.push_back(g.first);
  }
  for (std::size_t i = 0; i < 4; ++i) CHECK(ids[i] == ids[4 + i]);  // both members agree
  CHECK(std::set<GroupId>(ids.begin(), ids.begin() + 4).size() == 4);
  CHECK(std::find(ids.begin(), ids.end(), world_id(*tx[0])) == ids.end());

  // Not constructors on the world: a later world constructor agrees with rank 1.
  for (std::uint32_t w = 0; w < 3; ++w)
    tx[w]->comm_new(Call::Comm_dup, kWorldHandle, 0x20, {}, false, true);
  CHECK(tx[0]->rec().groups.back() == tx[1]->rec().groups.back());
  CHECK(tx[2]->rec().groups.back() == tx[1]->rec().groups.back());
  // Point-to-point on the group communicator agrees between its members.
  const CallProgram s = tx[2]->send(Call::Send, 1, 4, 0x10);  // to rank 1 = world 0
  CHECK(s.ops()[0].peer == Rank{0});
  tx[0]->recv(0, 4, 0, 4, 0x10);
  CHECK(tx[0]->rec().binds.back().src == Rank{2});
  CHECK(tx[0]->rec().binds.back().queue == s.ops()[0].queue);
}

// ---------------------------------------------------------------------------
// Translators and engines together

namespace {

// Clock right after the tick of rank r's call `k` (its signal part when blocking).
Clock after_tick(const vcx::sim::EngineSim& sim, std::uint32_t r, std::size_t k) {
  Clock c = k == 0 ? Clock(sim.size(), 0) : sim.calls(r).at(k - 1).clock;
  ++c[r];
  return c;
}

void merge_into(Clock& into, const Clock& from) {
  for (std::size_t i = 0; i < into.size(); ++i) into[i] = std::max(into[i], from[i]);
}

// Distinct clocks before a collective: rank r sends r + 1 messages to itself
// and receives them, and A's ranks exchange one message on their half.
void warm_up(Job& job, std::uint32_t n) {
  for (std::uint32_t r = 0; r < n; ++r)
    for (std::uint32_t k = 0; k <= r; ++k) {
      job.submit(r, job.tx[r]->send(Call::Send, static_cast<std::int32_t>(r), 99));
      job.submit(
          r, job.tx[r]->recv(static_cast<std::int32_t>(r), 99, static_cast<std::int32_t>(r), 99));
    }
}

}  // namespace

TEST_CASE("mpi+engine: an intercommunicator barrier merges the other group's clocks",
          "[mpi][engine]") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("delivery seed " << seed);
    Job job(5, seed);
    for (std::uint32_t w = 0; w < 5; ++w)
      for (const CallProgram& p : make_intercomm(*job.tx[w], w)) job.submit(w, p);
    warm_up(job, 5);
    // Within A: world 4 (A's rank 0) tells world 2 (A's rank 2) what it knows.
    job.submit(4, job.tx[4]->send(Call::Send, 2, 1, kHalf));
    job.submit(2, job.tx[2]->recv(0, 1, 0, 1, kHalf));
    // A rooted broadcast first (world 2 of A is the root; 4 and 0 do nothing),
    // then the bipartite barrier: its instance must agree at all five.
    for (std::uint32_t w = 0; w < 5; ++w)
      job.submit(w, job.tx[w]->collective(Call::Bcast, kInter, root_arg(w, 2)));
    for (std::uint32_t w = 0; w < 5; ++w)
      job.submit(w, job.tx[w]->collective(Call::Barrier, kInter), true);
    job.sim.drain();
    REQUIRE(job.sim.check_finished() == "");
    // Each member: its own clock after the tick, merged with every member of
    // the other group at theirs (and so only indirectly with its own group).
    std::vector<Clock> signal(5);
    for (std::uint32_t w = 0; w < 5; ++w)
      signal[w] = after_tick(job.sim, w, job.sim.calls(w).size() - 1);
    for (std::uint32_t w = 0; w < 5; ++w) {
      Clock want = signal[w];
      for (std::int32_t o : in_a(w) ? kB : kA)
        merge_into(want, signal[static_cast<std::size_t>(o)]);
      CHECK(job.sim.calls(w).back().clock == want);
    }
    // World 4 told world 2, whose broadcast reached B, whose barrier
    // contributions reached world 0.
    CHECK(job.sim.calls(0).back().clock[4] > 0);

    // A reduction to world 1 (in B): A signals, world 3 takes no part.
    for (std::uint32_t w = 0; w < 5; ++w)
      job.submit(w, job.tx[w]->collective(Call::Reduce, kInter, root_arg(w, 1)), true);
    job.sim.drain();
    REQUIRE(job.sim.check_finished() == "");
    Clock want = after_tick(job.sim, 1, job.sim.calls(1).size() - 1);
    for (std::int32_t o : kA)
      merge_into(want, after_tick(job.sim, static_cast<std::uint32_t>(o),
                                  job.sim.calls(static_cast<std::size_t>(o)).size() - 1));
    CHECK(job.sim.calls(1).back().clock == want);
  }
}

TEST_CASE(
    "mpi+engine: persistent rooted intercommunicator collectives with MPI_PROC_NULL "
    "members, then a barrier",
    "[mpi][engine]") {
  // Two starts of MPI_Bcast_init rooted at world 0; worlds 4 and 2 pass
  // MPI_PROC_NULL. The barrier after them is the third instance everywhere;
  // it completes only if every rank counted both starts.
  Job job(5, 1);
  for (std::uint32_t w = 0; w < 5; ++w)
    for (const CallProgram& p : make_intercomm(*job.tx[w], w)) job.submit(w, p);
  for (std::uint32_t w = 0; w < 5; ++w) {
    job.submit(w, job.tx[w]->collective(Call::Bcast_init, kInter, root_arg(w, 0), 70));
    for (int round = 0; round < 2; ++round) {
      job.submit(w, job.tx[w]->start({70}));
      job.submit(w, job.tx[w]->wait(70), true);
    }
    job.submit(w, job.tx[w]->collective(Call::Barrier, kInter), true);
  }
  job.sim.drain();
  CHECK(job.sim.all_idle());
  CHECK(job.sim.check_finished() == "");
}

TEST_CASE("mpi+engine: persistent collectives started in different orders at each rank",
          "[mpi][engine]") {
  // Rank 0 starts the bcast (root 0) then the barrier, rank 1 the barrier
  // then the bcast; rank 1 completes the barrier first. Clocks by the rules:
  // rank 0: bcast start [1,0], barrier start [2,0], barrier completion
  // merges rank 1's start [0,1]: [3,1]. Rank 1: barrier start [0,1], its
  // completion merges [2,0]: [2,2]; the bcast's completion merges [1,0]:
  // [2,3].
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    INFO("delivery seed " << seed);
    Job job(2, seed);
    for (std::uint32_t w = 0; w < 2; ++w) {
      job.submit(w, job.tx[w]->collective(Call::Bcast_init, kWorldHandle, 0, 70));
      job.submit(w, job.tx[w]->collective(Call::Barrier_init, kWorldHandle, 0, 71));
    }
    job.submit(0, job.tx[0]->start({70}));
    job.submit(0, job.tx[0]->start({71}));
    job.submit(1, job.tx[1]->start({71}));
    job.submit(1, job.tx[1]->start({70}));
    job.submit(0, job.tx[0]->wait(70), true);
    job.submit(0, job.tx[0]->wait(71), true);
    job.submit(1, job.tx[1]->wait(71), true);
    job.submit(1, job.tx[1]->wait(70), true);
    job.sim.drain();
    REQUIRE(job.sim.check_finished() == "");
    REQUIRE(job.sim.calls(0).size() == 3);
    REQUIRE(job.sim.calls(1).size() == 3);
    CHECK(job.clock(0, 0) == Clock{1, 0});
    CHECK(job.clock(0, 1) == Clock{2, 0});
    CHECK(job.clock(0, 2) == Clock{3, 1});
    CHECK(job.clock(1, 0) == Clock{0, 1});
    CHECK(job.clock(1, 1) == Clock{2, 2});
    CHECK(job.clock(1, 2) == Clock{2, 3});
  }
}

TEST_CASE("mpi+engine: a non-blocking intercommunicator barrier with traffic in between",
          "[mpi][engine]") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("delivery seed " << seed);
    Job job(5, seed);
    for (std::uint32_t w = 0; w < 5; ++w)
      for (const CallProgram& p : make_intercomm(*job.tx[w], w)) job.submit(w, p);
    warm_up(job, 5);
    for (std::uint32_t w = 0; w < 5; ++w)
      job.submit(w, job.tx[w]->collective(Call::Ibarrier, kInter, 0, 30));
    // Between initiation and completion, A's world 0 sends to B's world 3.
    job.submit(0, job.tx[0]->send(Call::Send, 0, 2, kInter));
    job.submit(3, job.tx[3]->recv(1, 2, 1, 2, kInter));
    for (std::uint32_t w = 0; w < 5; ++w) job.submit(w, job.tx[w]->wait(30), true);
    job.sim.drain();
    REQUIRE(job.sim.check_finished() == "");
  }
}

TEST_CASE("mpi+engine: Scan, Exscan and Iscan give member i the maximum of members below it",
          "[mpi][engine]") {
  // A split of 4 ranks with keys reversed: communicator ranks are world 3, 2, 1, 0.
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("delivery seed " << seed);
    Job job(4, seed);
    for (std::uint32_t w = 0; w < 4; ++w)
      job.submit(w, job.tx[w]->comm_new(Call::Comm_split, kWorldHandle, 0x2000, {3, 2, 1, 0}));
    warm_up(job, 4);
    for (std::uint32_t w = 0; w < 4; ++w) job.submit(w, job.tx[w]->collective(Call::Scan, 0x2000));
    std::vector<Clock> signal(4);
    job.sim.drain();
    REQUIRE(job.sim.all_idle());
    for (std::uint32_t w = 0; w < 4; ++w)
      signal[w] = after_tick(job.sim, w, job.sim.calls(w).size() - 1);
    // Communicator rank i is world 3 - i: world w waits for worlds above it.
    for (std::uint32_t w = 0; w < 4; ++w) {
      Clock want = signal[w];
      for (std::uint32_t o = w + 1; o < 4; ++o) merge_into(want, signal[o]);
      CHECK(job.sim.calls(w).back().clock == want);
    }
    // The same chain for Exscan_c and for Iscan with work between its parts.
    for (std::uint32_t w = 0; w < 4; ++w)
      job.submit(w, job.tx[w]->collective(Call::Exscan_c, 0x2000));
    for (std::uint32_t w = 0; w < 4; ++w)
      job.submit(w, job.tx[w]->collective(Call::Iscan, 0x2000, 0, 50));
    job.submit(0, job.tx[0]->send(Call::Send, 1, 5));
    job.submit(1, job.tx[1]->recv(0, 5, 0, 5));
    for (std::uint32_t w = 0; w < 4; ++w) job.submit(w, job.tx[w]->wait(50), true);
    job.sim.drain();
    REQUIRE(job.sim.check_finished() == "");
  }
}

TEST_CASE("mpi+engine: neighbourhood collectives on a distributed graph", "[mpi][engine]") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("delivery seed " << seed);
    Job job(5, seed);
    for (std::uint32_t w = 0; w < 5; ++w) job.submit(w, make_topology(*job.tx[w], w));
    warm_up(job, 5);
    for (std::uint32_t w = 0; w < 5; ++w)
      job.submit(w, job.tx[w]->collective(Call::Neighbor_alltoall, kTopo), true);
    for (std::uint32_t w = 0; w < 5; ++w)
      job.submit(w, job.tx[w]->collective(Call::Neighbor_allgather_init, kTopo, 0, 60));
    for (int round = 0; round < 2; ++round) {
      for (std::uint32_t w = 0; w < 5; ++w) job.submit(w, job.tx[w]->start({60}));
      for (std::uint32_t w = 0; w < 5; ++w) job.submit(w, job.tx[w]->wait(60), true);
    }
    job.sim.drain();
    REQUIRE(job.sim.check_finished() == "");  // no receive left behind either
    // World 2 (in-neighbours 3, 3, 0) merged world 3's clock after its tick.
    const std::size_t k3 = job.sim.calls(3).size();
    CHECK(job.sim.calls(2).back().clock[3] == job.sim.calls(3).at(k3 - 1).clock[3] - 1);
  }
}
