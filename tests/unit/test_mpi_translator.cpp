// The MPI translator plugin, driven with hand-built interceptor events and a
// recording ExchangeControl: which calls are clocked, which primitives they
// become, the posting-order binding of receives (wildcards included) and the
// communicator ids every rank must agree on. The last tests feed its output
// into real engines (support/engine_sim.h) to check the resulting clocks.
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support/mpi_harness.h"

using namespace vcx;
using namespace vcx::mpi;
using namespace vcx::mpitest;
using Catch::Matchers::Contains;
using vcx::sim::Clock;
using vcx::sim::SimFatal;

// ---------------------------------------------------------------------------
// Which calls are clocked

TEST_CASE("mpi: Init_thread is Init", "[mpi]") {
  Tx tx(2, 3);
  InitEvent e{};
  e.comm_world = kWorldHandle;
  e.comm_self = kSelfHandle;
  e.world_rank = 2;
  e.world_size = 3;
  e.thread_level = 3;
  const CallProgram p = tx.feed(Event::of(Call::Init_thread, e));
  CHECK_FALSE(p.clocked());
  REQUIRE(tx.rec().groups.size() == 2);
  CHECK(tx.rec().groups[0].second == ranks({0, 1, 2}));
  CHECK(tx.rec().groups[1].second == ranks({2}));
  // MPI_COMM_SELF's rank 0 is this process.
  const CallProgram s = tx.send(Call::Send, 0, 0, kSelfHandle);
  REQUIRE(ops(s).size() == 2);
  CHECK(s.ops()[0].peer == Rank{2});
  CHECK(s.ops()[0].queue.a == tx.rec().groups[1].first.value);
}

TEST_CASE("mpi: Init registers world and self, Init and Finalize are not clocked", "[mpi]") {
  Tx tx(1, 4);
  CHECK(tx.translator().model() == Model::Mpi);
  CHECK(std::string(tx.translator().call_name(static_cast<std::uint16_t>(Call::Ssend))) ==
        "MPI_Ssend");
  const CallProgram init = tx.init(1, 4);
  CHECK_FALSE(init.clocked());
  CHECK(init.ops().empty());
  REQUIRE(tx.rec().groups.size() == 2);
  CHECK(tx.rec().groups[0].second == ranks({0, 1, 2, 3}));
  CHECK(tx.rec().groups[1].second == ranks({1}));
  CHECK(tx.rec().groups[0].first != tx.rec().groups[1].first);
  // The translator answers the engine's questions about its unbound receives.
  REQUIRE(tx.rec().pending.size() == 1);
  CHECK_FALSE(tx.rec().may_bind(Rank{0}, QueueId{tx.rec().groups[0].first.value, 0}));

  const CallProgram fin = tx.feed(Event(Call::Finalize, nullptr, 0));
  CHECK_FALSE(fin.clocked());
  CHECK(fin.ops().empty());
}

TEST_CASE("mpi: Init from a world that does not match the tool job is fatal", "[mpi]") {
  Tx tx(1, 4);
  CHECK_THROWS_AS(tx.init(1, 5), SimFatal);
  Tx tx2(1, 4);
  CHECK_THROWS_AS(tx2.init(2, 4), SimFatal);
}

TEST_CASE("mpi: sends become signals on (communicator, tag) queues", "[mpi]") {
  Tx tx(0, 4);
  tx.init(0, 4);
  for (Call c : {Call::Send, Call::Bsend, Call::Rsend}) {
    INFO(tx.translator().call_name(static_cast<std::uint16_t>(c)));
    const CallProgram p = tx.send(c, 2, 5);
    CHECK(p.clocked());
    // Only a standard send needs its receive posted to complete when MPI
    // does not buffer: the call says it completed it.
    REQUIRE(p.ops().size() == (c == Call::Send ? 2u : 1u));
    const Op& op = p.ops()[0];
    CHECK(op.kind == OpKind::Signal);
    CHECK(op.peer == Rank{2});
    CHECK(op.queue == wq(tx, 5));
    CHECK(op.flags == 0);
    if (c == Call::Send) {
      const Op& done = p.ops()[1];
      CHECK(done.kind == OpKind::SendCompleted);
      CHECK(done.peer == op.peer);
      CHECK(done.queue == op.queue);
      CHECK(done.value == op.value);
    }
  }
  // Numbered per (destination, queue), in program order.
  CHECK(tx.rec().send_seq.at({2, wq(tx, 5).a, wq(tx, 5).b}) == 3);
  const CallProgram other_tag = tx.send(Call::Send, 2, 6);
  CHECK(other_tag.ops()[0].value == 1);
  const CallProgram again = tx.send(Call::Send, 2, 5);
  CHECK(again.ops()[0].value == 4);

  const CallProgram ss = tx.send(Call::Ssend, 3, 5);
  CHECK(ss.clocked());
  REQUIRE(ss.ops().size() == 3);
  CHECK(ss.ops()[2].kind == OpKind::SendCompleted);
  CHECK(ss.ops()[0].kind == OpKind::Signal);
  CHECK(ss.ops()[0].flags == kSignalSynchronous);
  CHECK(ss.ops()[1].kind == OpKind::WaitAck);
  CHECK(ss.ops()[1].peer == Rank{3});
  CHECK(ss.ops()[1].queue == ss.ops()[0].queue);
  CHECK(ss.ops()[1].value == ss.ops()[0].value);
}

TEST_CASE("mpi: sends to MPI_PROC_NULL are not clocked", "[mpi]") {
  Tx tx(0, 2);
  tx.init(0, 2);
  for (Call c : {Call::Send, Call::Ssend, Call::Bsend}) {
    const CallProgram p = tx.send(c, kRankProcNull, 1);
    CHECK_FALSE(p.clocked());
    CHECK(p.ops().empty());
  }
  const CallProgram is = tx.send(Call::Issend, kRankProcNull, 1, kWorldHandle, 77);
  CHECK_FALSE(is.clocked());
  const CallProgram w = tx.wait(77, kRankProcNull, -1);
  CHECK_FALSE(w.clocked());
  CHECK(w.ops().empty());
  CHECK(tx.rec().send_seq.empty());  // no queue position was used
}

TEST_CASE("mpi: non-blocking sends signal at initiation; only synchronous ones complete", "[mpi]") {
  Tx tx(0, 3);
  tx.init(0, 3);
  const CallProgram is = tx.send(Call::Isend, 1, 4, kWorldHandle, 11);
  CHECK(is.clocked());
  REQUIRE(ops(is).size() == 1);
  CHECK(is.ops()[0].kind == OpKind::Signal);
  CHECK(is.ops()[0].flags == 0);

  const CallProgram w = tx.wait(11);
  CHECK_FALSE(w.clocked());  // a Wait completing only a standard send
  REQUIRE(w.ops().size() == 1);
  CHECK(w.ops()[0].kind == OpKind::SendCompleted);
  CHECK(w.ops()[0].value == is.ops()[0].value);

  const CallProgram iss = tx.send(Call::Issend, 2, 4, kWorldHandle, 12);
  CHECK(iss.clocked());
  REQUIRE(ops(iss).size() == 1);
  CHECK(iss.ops()[0].flags == kSignalSynchronous);
  const CallProgram w2 = tx.complete(Call::Waitall, {Completion{12, 0, 0, 0, 0}});
  CHECK(w2.clocked());
  REQUIRE(ops(w2).size() == 2);
  CHECK(w2.ops()[1].kind == OpKind::SendCompleted);
  CHECK(w2.ops()[0].kind == OpKind::WaitAck);
  CHECK(w2.ops()[0].peer == Rank{2});
  CHECK(w2.ops()[0].queue == iss.ops()[0].queue);
  CHECK(w2.ops()[0].value == iss.ops()[0].value);

  // An unknown or already completed request is not clocked.
  CHECK_FALSE(tx.wait(12).clocked());
  CHECK_FALSE(tx.wait(999).clocked());
}

TEST_CASE("mpi: a blocking receive waits, then answers", "[mpi]") {
  Tx tx(1, 3);
  tx.init(1, 3);
  const CallProgram r = tx.recv(0, 3, 0, 3);
  CHECK(r.clocked());
  REQUIRE(ops(r).size() == 2);
  CHECK(r.ops()[0].kind == OpKind::Wait);
  CHECK(r.ops()[1].kind == OpKind::Snapshot);
  CHECK(r.ops()[0].value == r.ops()[1].value);
  REQUIRE(tx.rec().binds.size() == 1);
  CHECK(tx.rec().binds[0] == Bind{r.ops()[0].value, Rank{0}, wq(tx, 3)});
  CHECK_FALSE(tx.rec().may_bind(Rank{0}, wq(tx, 3)));

  // From MPI_PROC_NULL: nothing happens.
  const CallProgram pn = tx.recv(kRankProcNull, 3, kRankProcNull, kTagAny);
  CHECK_FALSE(pn.clocked());
  CHECK(pn.ops().empty());
  CHECK(tx.rec().binds.size() == 1);
}

TEST_CASE("mpi: Irecv is not clocked, answers at posting, waits at completion", "[mpi]") {
  Tx tx(1, 3);
  tx.init(1, 3);
  const CallProgram p = tx.irecv(21, 2, 8);
  CHECK_FALSE(p.clocked());
  REQUIRE(ops(p).size() == 1);
  CHECK(p.ops()[0].kind == OpKind::Snapshot);
  const std::uint64_t token = p.ops()[0].value;
  CHECK(token != 0);
  REQUIRE(tx.rec().binds.size() == 1);  // specific source and tag: bound at posting
  CHECK(tx.rec().binds[0] == Bind{token, Rank{2}, wq(tx, 8)});

  const CallProgram w = tx.wait(21, 2, 8);
  CHECK(w.clocked());
  REQUIRE(ops(w).size() == 1);
  CHECK(w.ops()[0].kind == OpKind::Wait);
  CHECK(w.ops()[0].value == token);
  CHECK(tx.rec().binds.size() == 1);

  // Irecv from MPI_PROC_NULL and its completion: no receive at all.
  const CallProgram pn = tx.irecv(22, kRankProcNull, 8);
  CHECK_FALSE(pn.clocked());
  CHECK(pn.ops().empty());
  CHECK_FALSE(tx.wait(22, kRankProcNull, kTagAny).clocked());
}

TEST_CASE("mpi: Waitall over receives and a standard send clocks only the receives", "[mpi]") {
  Tx tx(0, 3);
  tx.init(0, 3);
  const std::uint64_t ta = tx.irecv(1, 1, 0).ops()[0].value;
  const std::uint64_t tb = tx.irecv(2, 2, 0).ops()[0].value;
  tx.send(Call::Isend, 1, 0, kWorldHandle, 3);
  const CallProgram w = tx.complete(
      Call::Waitall,
      {Completion{3, 0, 0, 0, 0}, Completion{2, 2, 0, 0, 0}, Completion{1, 1, 0, 0, 0}});
  CHECK(w.clocked());
  REQUIRE(ops(w).size() == 3);
  CHECK(w.ops()[0].kind == OpKind::SendCompleted);  // the standard send merges nothing
  CHECK(w.ops()[1].kind == OpKind::Wait);
  CHECK(w.ops()[1].value == tb);  // in completion order
  CHECK(w.ops()[2].value == ta);
}

TEST_CASE("mpi: Sendrecv signals, then waits and answers", "[mpi]") {
  Tx tx(1, 3);
  tx.init(1, 3);
  const CallProgram p = tx.sendrecv(2, 4, 0, 5, 0, 5);
  CHECK(p.clocked());
  REQUIRE(ops(p).size() == 4);
  CHECK(p.ops()[0].kind == OpKind::Signal);
  CHECK(p.ops()[0].peer == Rank{2});
  CHECK(p.ops()[0].queue == wq(tx, 4));
  CHECK(p.ops()[1].kind == OpKind::Wait);
  CHECK((p.ops()[1].flags & kWaitPostedInCall) != 0);
  CHECK(p.ops()[2].kind == OpKind::Snapshot);
  // The send completes with the call.
  CHECK(p.ops()[3].kind == OpKind::SendCompleted);
  CHECK(p.ops()[3].value == p.ops()[0].value);
  CHECK(tx.rec().binds.back() == Bind{p.ops()[1].value, Rank{0}, wq(tx, 5)});

  CHECK(ops(tx.sendrecv(kRankProcNull, 4, 0, 5, 0, 5)).size() == 2);
  const CallProgram only_send = tx.sendrecv(2, 4, kRankProcNull, 5, kRankProcNull, kTagAny);
  CHECK(only_send.clocked());
  CHECK(ops(only_send).size() == 2);
  const CallProgram none = tx.sendrecv(kRankProcNull, 4, kRankProcNull, 5, kRankProcNull, kTagAny);
  CHECK_FALSE(none.clocked());
  CHECK(none.ops().empty());
}

// ---------------------------------------------------------------------------
// Posting-order binding

TEST_CASE("mpi: a pending wildcard holds back only the receives it could match", "[mpi]") {
  Tx tx(0, 4);
  tx.init(0, 4);
  auto& rec = tx.rec();
  CHECK_FALSE(rec.may_bind(Rank{1}, wq(tx, 5)));
  const std::uint64_t a = tx.irecv(1, kRankAny, 5).ops()[0].value;  // ANY_SOURCE, tag 5
  CHECK(rec.binds.empty());
  CHECK(rec.may_bind(Rank{1}, wq(tx, 5)));
  CHECK(rec.may_bind(Rank{3}, wq(tx, 5)));
  CHECK_FALSE(rec.may_bind(Rank{1}, wq(tx, 6)));
  const std::uint64_t b = tx.irecv(2, 1, 5).ops()[0].value;  // A could take it
  CHECK(rec.binds.empty());
  const std::uint64_t c = tx.irecv(3, 1, 6).ops()[0].value;  // other tag: A cannot
  REQUIRE(rec.binds.size() == 1);
  CHECK(rec.binds[0] == Bind{c, Rank{1}, wq(tx, 5 + 1)});

  // B completes first: its wait is emitted, its position still waits for A.
  const CallProgram wb = tx.wait(2, 1, 5);
  CHECK(wb.clocked());
  CHECK(wb.ops()[0].value == b);
  CHECK(rec.binds.size() == 1);
  CHECK(rec.may_bind(Rank{1}, wq(tx, 5)));

  SECTION("A matched another source: both bind, A first") {
    tx.wait(1, 2, 5);
    REQUIRE(rec.binds.size() == 3);
    CHECK(rec.binds[1] == Bind{a, Rank{2}, wq(tx, 5)});
    CHECK(rec.binds[2] == Bind{b, Rank{1}, wq(tx, 5)});
  }
  SECTION("A matched the same source: A takes the earlier position") {
    tx.wait(1, 1, 5);
    REQUIRE(rec.binds.size() == 3);
    CHECK(rec.binds[1] == Bind{a, Rank{1}, wq(tx, 5)});
    CHECK(rec.binds[2] == Bind{b, Rank{1}, wq(tx, 5)});
  }
  CHECK_FALSE(rec.may_bind(Rank{1}, wq(tx, 5)));
  CHECK_FALSE(rec.may_bind(Rank{2}, wq(tx, 5)));
}

TEST_CASE("mpi: ANY_TAG holds back receives from its source only", "[mpi]") {
  Tx tx(0, 4);
  tx.init(0, 4);
  auto& rec = tx.rec();
  const std::uint64_t a = tx.irecv(1, 1, kTagAny).ops()[0].value;
  const CallProgram other = tx.recv(2, 0, 2, 0);  // other source: binds at once
  REQUIRE(rec.binds.size() == 1);
  CHECK(rec.binds[0].token == other.ops()[0].value);
  const std::uint64_t b = tx.irecv(2, 1, 9).ops()[0].value;  // same source: held
  const std::uint64_t c = tx.irecv(3, kRankAny, kTagAny).ops()[0].value;
  const std::uint64_t d = tx.irecv(4, 3, 1).ops()[0].value;  // held by C (ANY, ANY)
  CHECK(rec.binds.size() == 1);
  tx.wait(1, 1, 9);  // A took (1, 9): then B is next on that queue
  REQUIRE(rec.binds.size() == 3);
  CHECK(rec.binds[1] == Bind{a, Rank{1}, wq(tx, 9)});
  CHECK(rec.binds[2] == Bind{b, Rank{1}, wq(tx, 9)});
  CHECK(rec.may_bind(Rank{3}, wq(tx, 1)));  // C (ANY, ANY) remains
  CHECK(rec.may_bind(Rank{0}, wq(tx, 4)));
  CHECK(rec.may_bind(Rank{1}, wq(tx, 9)));
  tx.wait(3, 3, 1);
  REQUIRE(rec.binds.size() == 5);
  CHECK(rec.binds[3] == Bind{c, Rank{3}, wq(tx, 1)});
  CHECK(rec.binds[4] == Bind{d, Rank{3}, wq(tx, 1)});
  CHECK_FALSE(rec.may_bind(Rank{3}, wq(tx, 1)));
  CHECK_FALSE(rec.may_bind(Rank{1}, wq(tx, 9)));
}

TEST_CASE("mpi: receives completed out of posting order keep posting-order positions", "[mpi]") {
  Tx tx(0, 3);
  tx.init(0, 3);
  auto& rec = tx.rec();
  std::vector<std::uint64_t> t;
  for (std::uint64_t req = 1; req <= 3; ++req) t.push_back(tx.irecv(req, 2, 7).ops()[0].value);
  REQUIRE(rec.binds.size() == 3);
  for (int i = 0; i < 3; ++i) CHECK(rec.binds[i] == Bind{t[i], Rank{2}, wq(tx, 7)});
  CHECK(tx.wait(3, 2, 7).ops()[0].value == t[2]);
  CHECK(tx.wait(1, 2, 7).ops()[0].value == t[0]);
  CHECK(tx.wait(2, 2, 7).ops()[0].value == t[1]);
  CHECK(rec.binds.size() == 3);

  // Same with two wildcards resolved in reverse: positions follow posting.
  const std::uint64_t w1 = tx.irecv(4, kRankAny, 7).ops()[0].value;
  const std::uint64_t w2 = tx.irecv(5, kRankAny, 7).ops()[0].value;
  tx.wait(5, 2, 7);
  CHECK(rec.binds.size() == 3);
  tx.wait(4, 2, 7);
  REQUIRE(rec.binds.size() == 5);
  CHECK(rec.binds[3].token == w1);
  CHECK(rec.binds[4].token == w2);
}

TEST_CASE("mpi: crooked barrier: Irecv(ANY) pending while a blocking Recv(ANY) completes",
          "[mpi]") {
  Tx tx(0, 3);
  tx.init(0, 3);
  auto& rec = tx.rec();
  const std::uint64_t a = tx.irecv(1, kRankAny, kTagAny).ops()[0].value;
  const CallProgram r = tx.recv(kRankAny, kTagAny, 2, 0);
  CHECK(r.clocked());
  REQUIRE(ops(r).size() == 2);
  CHECK(r.ops()[0].kind == OpKind::Wait);
  CHECK(rec.binds.empty());  // the Irecv may have taken a message of rank 2
  CHECK(rec.may_bind(Rank{2}, wq(tx, 0)));
  tx.wait(1, 1, 0);
  REQUIRE(rec.binds.size() == 2);
  CHECK(rec.binds[0] == Bind{a, Rank{1}, wq(tx, 0)});
  CHECK(rec.binds[1] == Bind{r.ops()[0].value, Rank{2}, wq(tx, 0)});
  CHECK_FALSE(rec.may_bind(Rank{2}, wq(tx, 0)));
}

TEST_CASE("mpi: a cancelled wildcard receive stops holding back later ones", "[mpi]") {
  // MPI_Cancel succeeded: the receive matched nothing and can take no message.
  Tx tx(0, 3);
  tx.init(0, 3);
  auto& rec = tx.rec();
  const std::uint64_t a = tx.irecv(1, kRankAny, kTagAny).ops()[0].value;
  const CallProgram w = tx.wait(1, kRankAny, kTagAny, /*cancelled=*/true);
  CHECK_FALSE(w.clocked());
  CHECK(rec.drops == std::vector<std::uint64_t>{a});
  CHECK_FALSE(rec.may_bind(Rank{1}, wq(tx, 5)));
  const CallProgram r = tx.recv(1, 5, 1, 5);
  REQUIRE(rec.binds.size() == 1);
  CHECK(rec.binds[0].token == r.ops()[0].value);
}

// ---------------------------------------------------------------------------
// Communicators

TEST_CASE("mpi: ranks are translated through the communicator", "[mpi]") {
  Tx tx(1, 4);
  tx.init(1, 4);
  // This rank is in {3, 1} in that rank order (say, Comm_split with keys reversed).
  tx.comm_new(Call::Comm_split, kWorldHandle, 0x2000, {3, 1});
  const GroupId split = tx.rec().groups.back().first;
  CHECK(tx.rec().groups.back().second == ranks({3, 1}));
  const CallProgram s = tx.send(Call::Send, 0, 4, 0x2000);
  REQUIRE(ops(s).size() == 2);
  CHECK(s.ops()[0].peer == Rank{3});
  CHECK(s.ops()[0].queue == QueueId{split.value, 4});
  tx.recv(0, 4, 0, 4, 0x2000);
  CHECK(tx.rec().binds.back().src == Rank{3});
  CHECK(tx.rec().binds.back().queue == QueueId{split.value, 4});
  // A wildcard resolved from the status is translated too.
  tx.recv(kRankAny, 4, 0, 4, 0x2000);
  CHECK(tx.rec().binds.back().src == Rank{3});
  // A pending wildcard concerns its own communicator's queues only.
  tx.irecv(9, kRankAny, kTagAny, 0x2000);
  CHECK(tx.rec().may_bind(Rank{3}, QueueId{split.value, 4}));
  CHECK_FALSE(tx.rec().may_bind(Rank{3}, wq(tx, 4)));

  CHECK_THROWS_AS(tx.send(Call::Send, 2, 0, 0x2000), SimFatal);  // outside the communicator
  CHECK_THROWS_WITH(tx.send(Call::Send, 0, 0, 0x9999), Contains(std::to_string(0x9999)));
}

TEST_CASE("mpi: collectives carry group, per-communicator instance, kind and world root", "[mpi]") {
  Tx tx(2, 4);
  tx.init(2, 4);
  tx.comm_new(Call::Comm_split, kWorldHandle, 0x2000, {0, 2});
  const GroupId world = world_id(tx);
  const GroupId split = tx.rec().groups.back().first;
  struct Want {
    Call call;
    std::uint64_t comm;
    std::int32_t root;
    GroupId group;
    std::uint64_t instance;
    CollectiveKind kind;
    Rank world_root;
  };
  const Want wants[] = {
      {Call::Barrier, kWorldHandle, 0, world, 1, CollectiveKind::AllToAll, Rank{0}},
      {Call::Bcast, 0x2000, 1, split, 1, CollectiveKind::OneToAll, Rank{2}},
      {Call::Allreduce, kWorldHandle, 0, world, 2, CollectiveKind::AllToAll, Rank{0}},
      {Call::Reduce, 0x2000, 0, split, 2, CollectiveKind::AllToOne, Rank{0}},
      {Call::Bcast, kWorldHandle, 3, world, 3, CollectiveKind::OneToAll, Rank{3}},
  };
  for (const Want& w : wants) {
    INFO(tx.translator().call_name(static_cast<std::uint16_t>(w.call)));
    const CallProgram p = tx.collective(w.call, w.comm, w.root);
    CHECK(p.clocked());
    REQUIRE(ops(p).size() == 2);
    CHECK(p.ops()[0].kind == OpKind::CollectiveContribute);
    CHECK((p.ops()[0].flags & kCollectiveBlocking) != 0);
    CHECK(p.ops()[1].kind == OpKind::CollectiveComplete);
    for (const Op& op : p.ops()) {
      CHECK(op.collective.group == w.group);
      CHECK(op.collective.instance == w.instance);
      CHECK(op.collective.kind == w.kind);
      if (w.kind != CollectiveKind::AllToAll) CHECK(op.collective.root == w.world_root);
    }
  }
}

TEST_CASE("mpi: every rank derives the same communicator ids", "[mpi]") {
  constexpr std::uint32_t n = 4;
  std::vector<std::unique_ptr<Tx>> tx;
  for (std::uint32_t r = 0; r < n; ++r) {
    tx.push_back(std::make_unique<Tx>(r, n));
    tx[r]->init(r, n);
  }
  // Comm_split into even/odd, keys reversed; handles differ per process.
  for (std::uint32_t r = 0; r < n; ++r) {
    const std::vector<std::int32_t> members =
        r % 2 ? std::vector<std::int32_t>{3, 1} : std::vector<std::int32_t>{2, 0};
    const CallProgram p = tx[r]->comm_new(Call::Comm_split, kWorldHandle, 0x3000 + r, members);
    CHECK_FALSE(p.clocked());
    CHECK(p.ops().empty());
  }
  // Comm_create: only 0 and 1 get a communicator.
  for (std::uint32_t r = 0; r < n; ++r)
    tx[r]->comm_new(Call::Comm_create, kWorldHandle, r < 2 ? 0x4000 + r : 0,
                    r < 2 ? std::vector<std::int32_t>{0, 1} : std::vector<std::int32_t>{}, r >= 2);
  // Comm_dup of the world, then of the split communicator.
  for (std::uint32_t r = 0; r < n; ++r) {
    tx[r]->comm_new(Call::Comm_dup, kWorldHandle, 0x5000 + r, {}, false, true);
    tx[r]->comm_new(Call::Comm_dup, 0x3000 + r, 0x6000 + r, {}, false, true);
  }
  // Another split after the Comm_create that some ranks got no communicator from.
  for (std::uint32_t r = 0; r < n; ++r)
    tx[r]->comm_new(Call::Comm_split, kWorldHandle, 0x7000 + r, {0, 1, 2, 3});

  // Groups registered per rank: world, self, split, [create], dup, dup-of-split, split2.
  auto groups = [&](std::uint32_t r) { return tx[r]->rec().groups; };
  for (std::uint32_t r = 0; r < n; ++r) REQUIRE(groups(r).size() == (r < 2 ? 7u : 6u));
  auto id = [&](std::uint32_t r, std::size_t i) { return groups(r)[i].first; };
  auto members = [&](std::uint32_t r, std::size_t i) { return groups(r)[i].second; };
  for (std::uint32_t r = 0; r < n; ++r) {
    const std::size_t k = r < 2 ? 1 : 0;  // ranks 0 and 1 have the Comm_create entry at 3
    INFO("rank " << r);
    CHECK(id(r, 0) == id(0, 0));            // world
    CHECK(id(r, 1) != id((r + 1) % n, 1));  // self differs per rank
    CHECK(id(r, 2) == id(r % 2, 2));        // same colour, same id
    CHECK(members(r, 2) == members(r % 2, 2));
    CHECK(id(r, 3 + k) == id(0, 4));  // dup of world
    CHECK(members(r, 3 + k) == ranks({0, 1, 2, 3}));
    CHECK(id(r, 4 + k) == id(r % 2, 5));  // dup of the split: per colour
    CHECK(members(r, 4 + k) == members(r, 2));
    CHECK(id(r, 5 + k) == id(0, 6));  // second split
  }
  CHECK(id(0, 3) == id(1, 3));  // Comm_create on its members
  CHECK(members(0, 3) == ranks({0, 1}));
  // Distinct communicators get distinct ids.
  const std::vector<GroupId> distinct{id(0, 0), id(0, 2), id(1, 2), id(0, 3),
                                      id(0, 4), id(0, 5), id(1, 5), id(0, 6)};
  for (std::size_t i = 0; i < distinct.size(); ++i)
    for (std::size_t j = i + 1; j < distinct.size(); ++j) {
      INFO(i << " vs " << j);
      CHECK(distinct[i] != distinct[j]);
    }
  // Queues on the split communicator agree between sender and receiver.
  const CallProgram s = tx[0]->send(Call::Send, 0, 3, 0x3000);  // comm rank 0 is world rank 2
  CHECK(s.ops()[0].peer == Rank{2});
  tx[2]->recv(1, 3, 1, 3, 0x3002);  // comm rank 1 is world rank 0
  CHECK(tx[2]->rec().binds.back().src == Rank{0});
  CHECK(tx[2]->rec().binds.back().queue == s.ops()[0].queue);
}

TEST_CASE("mpi: Comm_free forgets the handle, in-flight requests keep their communicator",
          "[mpi]") {
  Tx tx(0, 2);
  tx.init(0, 2);
  tx.comm_new(Call::Comm_dup, kWorldHandle, 0x2000, {}, false, true);
  const std::uint64_t t = tx.irecv(5, 1, 0, 0x2000).ops()[0].value;
  const CallProgram f = tx.feed(Event::of(Call::Comm_free, CommFreeEvent{0x2000}));
  CHECK_FALSE(f.clocked());
  const CallProgram w = tx.wait(5, 1, 0);
  CHECK(w.clocked());
  CHECK(w.ops()[0].value == t);
  CHECK_THROWS_AS(tx.send(Call::Send, 1, 0, 0x2000), SimFatal);
}

TEST_CASE("mpi: truncated events are fatal", "[mpi]") {
  Tx tx(0, 2);
  tx.init(0, 2);
  const std::uint32_t four = 4;
  CHECK_THROWS_AS(tx.feed(Event(Call::Send, &four, sizeof four)), SimFatal);
  CompletionEvent head{3, 0};  // claims three completions, carries none
  CHECK_THROWS_AS(tx.feed(Event::of(Call::Waitall, head)), SimFatal);
  CHECK_THROWS_AS(tx.feed(Event(static_cast<Call>(999), nullptr, 0)), SimFatal);
}

// ---------------------------------------------------------------------------
// Translator and engines together (Job: support/mpi_harness.h)

TEST_CASE("mpi+engine: the crooked barrier gets the clocks of the real matching", "[mpi][engine]") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("delivery seed " << seed);
    Job job(3, seed);
    job.submit(1, job.tx[1]->send(Call::Send, 0, 0));  // [0,1,0]
    job.submit(2, job.tx[2]->send(Call::Send, 0, 0));  // [0,0,1]
    job.submit(0, job.tx[0]->irecv(1, kRankAny, kTagAny));
    job.submit(0, job.tx[0]->recv(kRankAny, kTagAny, 2, 0), true);  // got rank 2's message
    job.sim.drain();
    // The Recv's queue position is unknown until the Irecv completes: the
    // engine must not make the application wait for it.
    CHECK_FALSE(job.sim.engine(0).idle());
    CHECK(job.sim.engine(0).must_not_stall());
    job.submit(0, job.tx[0]->wait(1, 1, 0), true);  // the Irecv got rank 1's
    job.sim.drain();
    REQUIRE(job.sim.all_idle());
    CHECK(job.clock(0, 0) == Clock{1, 0, 1});
    CHECK(job.clock(0, 1) == Clock{2, 1, 1});
    for (std::uint32_t r = 0; r < 3; ++r) job.submit(r, job.tx[r]->collective(Call::Barrier));
    job.sim.drain();
    REQUIRE(job.sim.all_idle());
    for (std::uint32_t r = 0; r < 3; ++r) CHECK(job.sim.calls(r).back().clock == Clock{3, 2, 2});
    CHECK(job.sim.check_no_leaks() == "");
    CHECK(job.sim.check_finished() == "");  // the reference model agrees
  }
}

TEST_CASE("mpi+engine: a peer held up by a pending wildcard lets waiting applications go on",
          "[mpi][engine]") {
  // Found by the random programs. Rank 0's engine cannot place its Recv (an
  // earlier wildcard Irecv may take that message) until the application
  // completes the Irecv — after an Allreduce. Rank 0's application is let
  // go and blocks in MPI's Allreduce; rank 1's engine waits in the
  // Allreduce for rank 0's engine. Holding rank 1's application there
  // would deadlock both, so rank 0's engine says it waits for its
  // application, and whoever waits for it lets its application go on too,
  // down a chain of waiting engines (rank 2 waits for rank 1's signal).
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("delivery seed " << seed);
    Job job(3, seed);
    job.submit(1, job.tx[1]->send(Call::Send, 0, 7));
    job.submit(1, job.tx[1]->send(Call::Send, 0, 3));
    job.submit(0, job.tx[0]->irecv(1, 1, kTagAny));
    job.submit(0, job.tx[0]->recv(1, 3, 1, 3), true);
    job.sim.drain();
    CHECK(job.sim.engine(0).must_not_stall());
    // Rank 1 and rank 0 meet in an Allreduce on a communicator of their own;
    // rank 2 waits for what rank 1 sends after it.
    constexpr std::uint64_t kPair = 0x7700;
    for (std::uint32_t r = 0; r < 2; ++r)
      job.submit(r, job.tx[r]->comm_new(Call::Comm_split, kWorldHandle, kPair, {0, 1}));
    job.submit(2, job.tx[2]->comm_new(Call::Comm_split, kWorldHandle, 0, {}, /*is_null=*/true));
    job.sim.drain();
    const auto ar1 = job.submit(1, job.tx[1]->collective(Call::Allreduce, kPair), true);
    job.submit(1, job.tx[1]->send(Call::Send, 2, 1));
    job.submit(2, job.tx[2]->recv(1, 1, 1, 1), true);
    job.sim.drain();
    CHECK_FALSE(job.sim.engine(1).idle());
    CHECK(job.sim.engine(1).must_not_stall());
    CHECK_FALSE(job.sim.engine(2).idle());
    CHECK(job.sim.engine(2).must_not_stall());
    // Rank 0's application goes on: the Allreduce, then the Irecv's completion.
    job.submit(0, job.tx[0]->collective(Call::Allreduce, kPair), true);
    job.submit(0, job.tx[0]->wait(1, 1, 7), true);
    job.sim.drain();
    REQUIRE(job.sim.all_idle());
    for (std::uint32_t r = 0; r < 3; ++r) CHECK_FALSE(job.sim.engine(r).must_not_stall());
    CHECK(job.sim.host(1).replies.back() >= ar1.event_seq);
    CHECK(job.sim.check_no_leaks() == "");
    CHECK(job.sim.check_finished() == "");  // the reference model agrees
  }
}

TEST_CASE("mpi+engine: without a held-up peer, a waiting application is held", "[mpi][engine]") {
  // The counterpart: the same waits with every engine able to go on keep
  // the applications waiting (stalling is the default).
  Job job(3, 1);
  const auto ar1 = job.submit(1, job.tx[1]->collective(Call::Allreduce), true);
  job.submit(2, job.tx[2]->collective(Call::Allreduce), true);
  job.sim.drain();
  CHECK_FALSE(job.sim.engine(1).must_not_stall());
  CHECK_FALSE(job.sim.engine(2).must_not_stall());
  CHECK(job.sim.host(1).replies.empty());
  job.submit(0, job.tx[0]->collective(Call::Allreduce), true);
  job.submit(1, job.tx[1]->send(Call::Send, 2, 1));
  job.submit(2, job.tx[2]->recv(1, 1, 1, 1), true);
  job.sim.drain();
  REQUIRE(job.sim.all_idle());
  CHECK(job.sim.host(1).replies.front() == ar1.event_seq);
  CHECK(job.sim.check_finished() == "");
}

TEST_CASE("mpi+engine: a synchronous send to a pending wildcard holds neither application",
          "[mpi][engine]") {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    INFO("delivery seed " << seed);
    Job job(2, seed);
    job.submit(0, job.tx[0]->irecv(1, kRankAny, kTagAny));
    job.submit(1, job.tx[1]->send(Call::Ssend, 0, 3), true);
    job.sim.drain();
    // Rank 0's receive is unbound until its application reports the
    // completion, which may come only after rank 1's Ssend returned.
    CHECK(job.sim.engine(0).must_not_stall());
    CHECK(job.sim.engine(1).must_not_stall());
    CHECK(job.sim.host(1).replies.empty());
    job.submit(0, job.tx[0]->wait(1, 1, 3), true);
    job.sim.drain();
    REQUIRE(job.sim.all_idle());
    CHECK_FALSE(job.sim.engine(0).must_not_stall());
    CHECK_FALSE(job.sim.engine(1).must_not_stall());
    CHECK(job.clock(0, 0) == Clock{1, 1});
    CHECK(job.clock(1, 0) == Clock{0, 1});  // answered with the clock at posting
    CHECK(job.sim.host(1).replies.size() == 1);
    CHECK(job.sim.check_no_leaks() == "");
    CHECK(job.sim.check_finished() == "");  // the reference model agrees
  }
}

TEST_CASE("mpi+engine: the worked example of the clock rules from MPI events", "[mpi][engine]") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("delivery seed " << seed);
    Job job(3, seed);
    job.submit(0, job.tx[0]->send(Call::Send, 1, 0));
    job.submit(1, job.tx[1]->recv(kRankAny, 0, 0, 0), true);
    job.submit(1, job.tx[1]->send(Call::Ssend, 2, 0), true);
    job.submit(2, job.tx[2]->recv(1, 0, 1, 0), true);
    for (std::uint32_t r = 0; r < 3; ++r) job.submit(r, job.tx[r]->collective(Call::Barrier), true);
    job.sim.drain();
    REQUIRE(job.sim.all_idle());
    CHECK(job.clock(0, 0) == Clock{1, 0, 0});
    CHECK(job.clock(1, 0) == Clock{1, 1, 0});
    CHECK(job.clock(1, 1) == Clock{1, 2, 1});
    CHECK(job.clock(2, 0) == Clock{1, 2, 1});
    for (std::uint32_t r = 0; r < 3; ++r) CHECK(job.sim.calls(r).back().clock == Clock{2, 3, 2});
    CHECK(job.sim.host(1).replies.size() == 3);
    CHECK(job.sim.check_no_leaks() == "");
    CHECK(job.sim.check_finished() == "");  // the reference model agrees
  }
}

TEST_CASE("mpi+engine: MPI_Reduce on MPI_COMM_SELF completes", "[mpi][engine]") {
  Job job(2, 1);
  job.submit(0, job.tx[0]->collective(Call::Reduce, kSelfHandle, 0), true);
  job.sim.drain();
  REQUIRE(job.sim.engine(0).idle());
  CHECK(job.clock(0, 0) == Clock{1, 0});
  CHECK(job.sim.check_finished() == "");
}

TEST_CASE("mpi+engine: a cancelled receive leaves its message to the next receive",
          "[mpi][engine]") {
  // Irecv(from 0, tag 5) is bound at posting, then cancelled successfully: it
  // matched nothing, so rank 0's only message goes to the following Recv.
  Job job(2, 1);
  job.submit(1, job.tx[1]->irecv(1, 0, 5));
  job.submit(1, job.tx[1]->wait(1, 0, 5, /*cancelled=*/true));
  job.submit(0, job.tx[0]->send(Call::Send, 1, 5));
  job.submit(1, job.tx[1]->recv(0, 5, 0, 5), true);
  job.sim.drain();
  // The application waits for this Recv's reply: it must come, or at least
  // the tool must not hold the application.
  CHECK((job.sim.engine(1).idle() || job.sim.engine(1).must_not_stall()));
  REQUIRE(job.sim.all_idle());
  CHECK(job.sim.host(1).replies.size() == 1);
  CHECK(job.clock(1, 0) == Clock{1, 1});
}
