// The MPI translator's request life cycles beyond plain non-blocking calls:
// persistent requests (MPI_*_init, MPI_Start, MPI_Startall), MPI_Request_free
// and matched probes (MPI_Mprobe/MPI_Improbe with MPI_Mrecv/MPI_Imrecv),
// driven with hand-built interceptor events (support/mpi_harness.h); the
// mpi+engine cases check the resulting clocks in real engines.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "support/mpi_harness.h"

using namespace vcx;
using namespace vcx::mpi;
using namespace vcx::mpitest;
using vcx::sim::Clock;

// ---------------------------------------------------------------------------
// Persistent point-to-point

TEST_CASE("mpi: a persistent send maps to nothing at init, signals at every Start", "[mpi]") {
  for (Call init : {Call::Send_init, Call::Send_init_c, Call::Bsend_init, Call::Rsend_init}) {
    Tx tx(0, 3);
    tx.init(0, 3);
    INFO(tx.translator().call_name(static_cast<std::uint16_t>(init)));
    const CallProgram p = tx.send(init, 1, 4, kWorldHandle, 50);
    CHECK_FALSE(p.clocked());
    CHECK(p.ops().empty());
    CHECK(tx.rec().send_seq.empty());  // no queue position taken yet

    for (std::uint64_t round = 1; round <= 3; ++round) {
      const CallProgram s = tx.start({50});
      CHECK(s.clocked());
      REQUIRE(ops(s).size() == 1);
      CHECK(s.ops()[0].kind == OpKind::Signal);
      CHECK(s.ops()[0].flags == 0);
      CHECK(s.ops()[0].peer == Rank{1});
      CHECK(s.ops()[0].queue == wq(tx, 4));
      CHECK(s.ops()[0].value == round);  // every Start is the next message
      // Completing a send merges nothing; the request stays. The wait of
      // a standard one says where it completed (potential deadlocks).
      const CallProgram w = tx.wait(50);
      CHECK_FALSE(w.clocked());
      const bool standard = init == Call::Send_init || init == Call::Send_init_c;
      REQUIRE(w.ops().size() == (standard ? 1u : 0u));
      if (!standard) continue;
      CHECK(w.ops()[0].kind == OpKind::SendCompleted);
      CHECK(w.ops()[0].peer == Rank{1});
      CHECK(w.ops()[0].queue == wq(tx, 4));
      CHECK(w.ops()[0].value == round);
    }
  }
}

TEST_CASE("mpi: a persistent synchronous send waits for its answer at each completion", "[mpi]") {
  Tx tx(0, 3);
  tx.init(0, 3);
  CHECK_FALSE(tx.send(Call::Ssend_init, 2, 1, kWorldHandle, 51).clocked());
  for (std::uint64_t round = 1; round <= 2; ++round) {
    const CallProgram s = tx.start({51});
    CHECK(s.clocked());
    REQUIRE(ops(s).size() == 1);
    CHECK(s.ops()[0].flags == kSignalSynchronous);
    CHECK(s.ops()[0].value == round);
    const CallProgram w = tx.complete(Call::Waitall, {Completion{51, 0, 0, 0, 0}});
    CHECK(w.clocked());
    REQUIRE(ops(w).size() == 2);
    CHECK(w.ops()[1].kind == OpKind::SendCompleted);
    CHECK(w.ops()[1].value == round);
    CHECK(w.ops()[0].kind == OpKind::WaitAck);
    CHECK(w.ops()[0].peer == Rank{2});
    CHECK(w.ops()[0].queue == s.ops()[0].queue);
    CHECK(w.ops()[0].value == round);  // the answer to this Start's message
  }
}

TEST_CASE("mpi: a persistent send to MPI_PROC_NULL is never clocked", "[mpi]") {
  Tx tx(0, 2);
  tx.init(0, 2);
  tx.send(Call::Ssend_init, kRankProcNull, 1, kWorldHandle, 52);
  tx.recv_init(53, kRankProcNull, 1);
  for (int round = 0; round < 2; ++round) {
    const CallProgram s = tx.start({52, 53});
    CHECK_FALSE(s.clocked());
    CHECK(s.ops().empty());
    const CallProgram w = tx.complete(
        Call::Waitall, {Completion{52, 0, 0, 0, 0}, Completion{53, kRankProcNull, kTagAny, 0, 0}});
    CHECK_FALSE(w.clocked());
    CHECK(w.ops().empty());
  }
  CHECK(tx.rec().send_seq.empty());
  CHECK(tx.rec().binds.empty());
}

TEST_CASE("mpi: a persistent receive is posted by each Start and waits at each completion",
          "[mpi]") {
  Tx tx(1, 3);
  tx.init(1, 3);
  auto& rec = tx.rec();
  const CallProgram init = tx.recv_init(60, 2, 7);
  CHECK_FALSE(init.clocked());
  CHECK(init.ops().empty());
  CHECK(rec.binds.empty());

  std::vector<std::uint64_t> tokens;
  for (int round = 0; round < 3; ++round) {
    // Start posts: not clocked, the answer for a synchronous sender is the
    // clock now, and the receive takes the next position of its queue.
    const CallProgram s = tx.start({60});
    CHECK_FALSE(s.clocked());
    REQUIRE(ops(s).size() == 1);
    CHECK(s.ops()[0].kind == OpKind::Snapshot);
    const std::uint64_t t = s.ops()[0].value;
    CHECK(rec.answers(t));
    REQUIRE(rec.binds.size() == tokens.size() + 1);
    CHECK(rec.binds.back() == Bind{t, Rank{2}, wq(tx, 7)});
    for (std::uint64_t old : tokens) CHECK(old != t);  // a new receive each time
    tokens.push_back(t);

    const CallProgram w = tx.wait(60, 2, 7);
    CHECK(w.clocked());
    REQUIRE(ops(w).size() == 1);
    CHECK(w.ops()[0].kind == OpKind::Wait);
    CHECK(w.ops()[0].value == t);
  }
}

TEST_CASE("mpi: a persistent wildcard receive is bound from each completion's status", "[mpi]") {
  Tx tx(0, 4);
  tx.init(0, 4);
  auto& rec = tx.rec();
  tx.recv_init(61, kRankAny, kTagAny);
  const std::uint64_t t1 = tx.start({61}).ops()[0].value;
  CHECK(rec.binds.empty());
  CHECK(rec.may_bind(Rank{3}, wq(tx, 2)));
  // A receive posted after it waits for it.
  const std::uint64_t later = tx.irecv(62, 3, 2).ops()[0].value;
  CHECK(rec.binds.empty());
  const CallProgram w = tx.wait(61, 3, 2);
  CHECK(w.clocked());
  CHECK(w.ops()[0].value == t1);
  REQUIRE(rec.binds.size() == 2);
  CHECK(rec.binds[0] == Bind{t1, Rank{3}, wq(tx, 2)});
  CHECK(rec.binds[1] == Bind{later, Rank{3}, wq(tx, 2)});
  // Started again: unresolved again, with another source this time.
  const std::uint64_t t2 = tx.start({61}).ops()[0].value;
  CHECK(rec.may_bind(Rank{1}, wq(tx, 5)));
  tx.wait(61, 1, 5);
  REQUIRE(rec.binds.size() == 3);
  CHECK(rec.binds[2] == Bind{t2, Rank{1}, wq(tx, 5)});
  CHECK_FALSE(rec.may_bind(Rank{1}, wq(tx, 5)));
}

TEST_CASE("mpi: Startall with a send and a receive is clocked", "[mpi]") {
  Tx tx(0, 3);
  tx.init(0, 3);
  tx.recv_init(70, 1, 3);
  tx.send(Call::Send_init, 2, 3, kWorldHandle, 71);
  tx.recv_init(72, 2, 3);
  const CallProgram s = tx.start({70, 71, 72});
  CHECK(static_cast<Call>(s.call()) == Call::Startall);
  // Clocked because it starts a send, so the engine ticks before any op:
  // the receives' snapshots are the clock right after the tick.
  CHECK(s.clocked());
  REQUIRE(ops(s).size() == 3);
  CHECK(s.ops()[0].kind == OpKind::Snapshot);
  CHECK(s.ops()[1].kind == OpKind::Signal);
  CHECK(s.ops()[1].peer == Rank{2});
  CHECK(s.ops()[2].kind == OpKind::Snapshot);
  REQUIRE(tx.rec().binds.size() == 2);
  CHECK(tx.rec().binds[0] == Bind{s.ops()[0].value, Rank{1}, wq(tx, 3)});
  CHECK(tx.rec().binds[1] == Bind{s.ops()[2].value, Rank{2}, wq(tx, 3)});

  // Startall of receives only posts: not clocked.
  tx.complete(Call::Waitall,
              {Completion{70, 1, 3, 0, 0}, Completion{71, 0, 0, 0, 0}, Completion{72, 2, 3, 0, 0}});
  const CallProgram r = tx.start({70, 72});
  CHECK_FALSE(r.clocked());
  CHECK(ops(r).size() == 2);
}

TEST_CASE("mpi: Start of an unknown or non-persistent request does nothing", "[mpi]") {
  Tx tx(0, 2);
  tx.init(0, 2);
  tx.send(Call::Isend, 1, 0, kWorldHandle, 80);  // not persistent
  const CallProgram s = tx.start({80, 81});
  CHECK_FALSE(s.clocked());
  CHECK(s.ops().empty());
  CHECK(tx.rec().send_seq.size() == 1);  // only the Isend's own message
}

TEST_CASE("mpi: truncated Start events are fatal", "[mpi]") {
  Tx tx(0, 2);
  tx.init(0, 2);
  StartEvent head{2, 0, 0};  // claims two handles, carries one
  const std::vector<std::uint64_t> one{1};
  CHECK_THROWS_AS(tx.feed(with_items(Call::Startall, head, one)), vcx::sim::SimFatal);
}

// ---------------------------------------------------------------------------
// The posting call's address in the receive notes (the matches analysis
// names each wildcard receive by it)

namespace {

std::vector<ReceivePostedNote> posted_notes(const CallProgram& p) {
  std::vector<ReceivePostedNote> out;
  NoteBatch b;
  b.notes = p.notes();
  b.for_each([&](NoteKind kind, std::span<const std::uint8_t> payload) {
    ReceivePostedNote n;
    if (kind == NoteKind::ReceivePosted && read_note(payload, &n)) out.push_back(n);
  });
  return out;
}

}  // namespace

TEST_CASE("mpi: a receive's note carries the address of the call that posted it", "[mpi]") {
  Tx tx(1, 3);
  tx.host().receive_notes = true;
  tx.init(1, 3);
  auto expect_one = [](const CallProgram& p, Call call, std::uint64_t pc) {
    const std::vector<ReceivePostedNote> n = posted_notes(p);
    REQUIRE(n.size() == 1);
    CHECK(n[0].pc == pc);
    CHECK(n[0].call == static_cast<std::uint16_t>(call));
    CHECK(n[0].want_source == kNoteAnySource);
  };
  SECTION("MPI_Recv") {
    RecvEvent e{};
    e.comm = kWorldHandle;
    e.source = kRankAny;
    e.tag = 5;
    e.status_source = 0;
    e.status_tag = 5;
    e.pc = 0x4010;
    expect_one(tx.feed(Event::of(Call::Recv, e)), Call::Recv, 0x4010);
  }
  SECTION("MPI_Irecv") {
    IrecvEvent e{};
    e.comm = kWorldHandle;
    e.request = 70;
    e.source = kRankAny;
    e.tag = 5;
    e.pc = 0x4020;
    expect_one(tx.feed(Event::of(Call::Irecv, e)), Call::Irecv, 0x4020);
    CHECK(posted_notes(tx.wait(70, 2, 5)).empty());
  }
  SECTION("MPI_Sendrecv") {
    SendrecvEvent e{};
    e.comm = kWorldHandle;
    e.dest = 2;
    e.send_tag = 5;
    e.source = kRankAny;
    e.recv_tag = 5;
    e.status_source = 0;
    e.status_tag = 5;
    e.pc = 0x4030;
    expect_one(tx.feed(Event::of(Call::Sendrecv, e)), Call::Sendrecv, 0x4030);
  }
  SECTION("MPI_Isendrecv") {
    IsendrecvEvent e{};
    e.comm = kWorldHandle;
    e.request = 71;
    e.dest = 2;
    e.send_tag = 5;
    e.source = kRankAny;
    e.recv_tag = 5;
    e.pc = 0x4040;
    expect_one(tx.feed(Event::of(Call::Isendrecv, e)), Call::Isendrecv, 0x4040);
  }
  SECTION("MPI_Mprobe") {
    MprobeEvent e{};
    e.comm = kWorldHandle;
    e.message = 72;
    e.source = kRankAny;
    e.tag = 5;
    e.status_source = 2;
    e.status_tag = 5;
    e.pc = 0x4050;
    expect_one(tx.feed(Event::of(Call::Mprobe, e)), Call::Mprobe, 0x4050);
  }
  SECTION("a persistent receive: the MPI_Start or MPI_Startall that started it") {
    for (std::uint64_t request : {73, 74}) {
      IrecvEvent e{};
      e.comm = kWorldHandle;
      e.request = request;
      e.source = kRankAny;
      e.tag = 5;
      e.pc = 0x4060;  // MPI_Recv_init's: it posts nothing
      CHECK(posted_notes(tx.feed(Event::of(Call::Recv_init, e))).empty());
    }
    auto start = [&](const std::vector<std::uint64_t>& requests, std::uint64_t pc) {
      StartEvent head{};
      head.count = static_cast<std::uint32_t>(requests.size());
      head.pc = pc;
      return tx.feed(
          with_items(requests.size() == 1 ? Call::Start : Call::Startall, head, requests));
    };
    expect_one(start({73}, 0x4070), Call::Start, 0x4070);
    tx.wait(73, 0, 5);
    expect_one(start({73}, 0x4080), Call::Start, 0x4080);  // each Start its own
    tx.wait(73, 2, 5);
    const std::vector<ReceivePostedNote> n = posted_notes(start({73, 74}, 0x4090));
    REQUIRE(n.size() == 2);
    for (const ReceivePostedNote& x : n) {
      CHECK(x.pc == 0x4090);
      CHECK(x.call == static_cast<std::uint16_t>(Call::Startall));
      CHECK(x.want_source == kNoteAnySource);
      CHECK(x.forced == 0);
    }
  }
  SECTION("a persistent receive whose start a replay forced wants that source only") {
    for (std::uint64_t request : {75, 76}) {
      IrecvEvent e{};
      e.comm = kWorldHandle;
      e.request = request;
      e.source = kRankAny;
      e.tag = 5;
      tx.feed(Event::of(Call::Recv_init, e));
    }
    // Startall of both, the second forced to rank 2: the sources follow the handles.
    StartEvent head{};
    head.count = 2;
    head.flags = kStartForcedSources;
    head.pc = 0x40a0;
    std::vector<std::uint8_t> payload(sizeof head + 2 * 8 + 2 * 4);
    const std::uint64_t handles[2] = {75, 76};
    const std::int32_t sources[2] = {kStartAsPosted, forced_source(2)};
    std::memcpy(payload.data(), &head, sizeof head);
    std::memcpy(payload.data() + sizeof head, handles, sizeof handles);
    std::memcpy(payload.data() + sizeof head + sizeof handles, sources, sizeof sources);
    const std::vector<ReceivePostedNote> n =
        posted_notes(tx.feed(Event(Call::Startall, payload.data(), payload.size())));
    REQUIRE(n.size() == 2);
    CHECK(n[0].want_source == kNoteAnySource);
    CHECK(n[0].forced == 0);
    CHECK(n[1].want_source == 2);
    CHECK(n[1].forced == 1);
  }
}

// ---------------------------------------------------------------------------
// MPI_Request_free

TEST_CASE("mpi: Request_free maps to nothing and forgets the request", "[mpi]") {
  Tx tx(0, 3);
  tx.init(0, 3);
  SECTION("an inactive persistent send: later Starts of the handle do nothing") {
    tx.send(Call::Send_init, 1, 0, kWorldHandle, 90);
    tx.start({90});
    tx.wait(90);
    const CallProgram f = tx.request_free(90);
    CHECK_FALSE(f.clocked());
    CHECK(f.ops().empty());
    CHECK_FALSE(tx.start({90}).clocked());
  }
  SECTION("an active synchronous send: its completion is never reported") {
    tx.send(Call::Issend, 1, 0, kWorldHandle, 91);
    const CallProgram f = tx.request_free(91);
    CHECK_FALSE(f.clocked());
    CHECK(f.ops().empty());
    // The handle value may come back for an unrelated request.
    tx.send(Call::Isend, 2, 0, kWorldHandle, 91);
    const CallProgram w = tx.wait(91);
    CHECK_FALSE(w.clocked());
    REQUIRE(w.ops().size() == 1);
    CHECK(w.ops()[0].kind == OpKind::SendCompleted);
    CHECK(w.ops()[0].peer == Rank{2});
  }
  SECTION("an inactive persistent receive") {
    tx.recv_init(92, 1, 0);
    const CallProgram f = tx.request_free(92);
    CHECK_FALSE(f.clocked());
    CHECK_FALSE(tx.start({92}).clocked());
    CHECK(tx.start({92}).ops().empty());
    CHECK(tx.rec().binds.empty());
  }
}

// ---------------------------------------------------------------------------
// Matched probes

TEST_CASE("mpi: Mprobe posts and binds the receive; Mrecv waits for it", "[mpi]") {
  Tx tx(0, 3);
  tx.init(0, 3);
  auto& rec = tx.rec();
  const CallProgram p = tx.mprobe(Call::Mprobe, 0x77, kRankAny, kTagAny, 2, 6);
  CHECK_FALSE(p.clocked());
  REQUIRE(ops(p).size() == 1);
  CHECK(p.ops()[0].kind == OpKind::Snapshot);  // a synchronous sender's answer: now
  const std::uint64_t t = p.ops()[0].value;
  CHECK(rec.answers(t));
  REQUIRE(rec.binds.size() == 1);
  CHECK(rec.binds[0] == Bind{t, Rank{2}, wq(tx, 6)});

  const CallProgram r = tx.mrecv(Call::Mrecv, 0x77, 0, 2, 6);
  CHECK(r.clocked());
  REQUIRE(ops(r).size() == 1);
  CHECK(r.ops()[0].kind == OpKind::Wait);
  CHECK(r.ops()[0].value == t);
  CHECK(rec.binds.size() == 1);

  // The handle is used up: receiving it again is nothing vcx knows.
  CHECK_FALSE(tx.mrecv(Call::Mrecv_c, 0x77).clocked());
}

TEST_CASE("mpi: Improbe and Imrecv: posted at the probe, clocked at the completion", "[mpi]") {
  Tx tx(1, 3);
  tx.init(1, 3);
  auto& rec = tx.rec();
  std::vector<std::uint64_t> tokens;
  for (Call imrecv : {Call::Imrecv, Call::Imrecv_c}) {
    INFO(tx.translator().call_name(static_cast<std::uint16_t>(imrecv)));
    // Message handles are reused once received.
    const CallProgram p = tx.mprobe(Call::Improbe, 0x78, 0, 4, 0, 4);
    CHECK_FALSE(p.clocked());
    REQUIRE(ops(p).size() == 1);
    CHECK(p.ops()[0].kind == OpKind::Snapshot);
    const std::uint64_t t = p.ops()[0].value;
    for (std::uint64_t old : tokens) CHECK(old != t);
    tokens.push_back(t);
    REQUIRE(rec.binds.size() == tokens.size());
    CHECK(rec.binds.back() == Bind{t, Rank{0}, wq(tx, 4)});

    const CallProgram i = tx.mrecv(imrecv, 0x78, 300);
    CHECK_FALSE(i.clocked());
    CHECK(i.ops().empty());
    const CallProgram w = tx.wait(300, 0, 4);
    CHECK(w.clocked());
    REQUIRE(ops(w).size() == 1);
    CHECK(w.ops()[0].kind == OpKind::Wait);
    CHECK(w.ops()[0].value == t);
    CHECK(rec.binds.size() == tokens.size());  // bound once, at the probe
  }
}

TEST_CASE("mpi: a matched probe takes its place among the posted receives", "[mpi]") {
  Tx tx(0, 3);
  tx.init(0, 3);
  auto& rec = tx.rec();
  // An Irecv(ANY) still pending: the probe's receive, posted after it, waits.
  const std::uint64_t a = tx.irecv(1, kRankAny, 2).ops()[0].value;
  const std::uint64_t t = tx.mprobe(Call::Mprobe, 0x79, 1, 2, 1, 2).ops()[0].value;
  CHECK(rec.binds.empty());
  tx.wait(1, 2, 2);  // the Irecv took rank 2's message
  REQUIRE(rec.binds.size() == 2);
  CHECK(rec.binds[0] == Bind{a, Rank{2}, wq(tx, 2)});
  CHECK(rec.binds[1] == Bind{t, Rank{1}, wq(tx, 2)});
}

TEST_CASE("mpi: a probe of MPI_PROC_NULL (MPI_MESSAGE_NO_PROC) maps to nothing", "[mpi]") {
  Tx tx(0, 2);
  tx.init(0, 2);
  const CallProgram p =
      tx.mprobe(Call::Mprobe, 0x7a, kRankProcNull, kTagAny, kRankProcNull, kTagAny);
  CHECK_FALSE(p.clocked());
  CHECK(p.ops().empty());
  CHECK_FALSE(tx.mrecv(Call::Mrecv, 0x7a).clocked());
  CHECK_FALSE(tx.mrecv(Call::Imrecv, 0x7a, 301).clocked());
  CHECK_FALSE(tx.wait(301, kRankProcNull, kTagAny).clocked());
  CHECK(tx.rec().binds.empty());
}

// ---------------------------------------------------------------------------
// Translator and engines together

TEST_CASE("mpi+engine: persistent requests started again and again", "[mpi][engine]") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("delivery seed " << seed);
    Job job(2, seed);
    job.submit(0, job.tx[0]->send(Call::Ssend_init, 1, 3, kWorldHandle, 40));
    job.submit(1, job.tx[1]->recv_init(41, 0, 3));
    for (int round = 0; round < 3; ++round) {
      job.submit(0, job.tx[0]->start({40}));
      job.submit(1, job.tx[1]->start({41}));
      job.submit(1, job.tx[1]->wait(41, 0, 3), true);
      job.submit(0, job.tx[0]->wait(40), true);
    }
    job.sim.drain();
    REQUIRE(job.sim.check_finished() == "");
    // Rank 0: Start, Wait per round; rank 1: Wait per round (Start posts only).
    CHECK(job.clock(0, 0) == Clock{1, 0});
    CHECK(job.clock(0, 1) == Clock{2, 0});  // answered with rank 1's clock at its Start
    CHECK(job.clock(1, 0) == Clock{1, 1});
    CHECK(job.clock(0, 3) == Clock{4, 1});
    CHECK(job.clock(1, 2) == Clock{5, 3});
  }
}

TEST_CASE("mpi+engine: a clocked Startall answers a synchronous send with its clock after the tick",
          "[mpi][engine]") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("delivery seed " << seed);
    Job job(2, seed);
    job.submit(1, job.tx[1]->send(Call::Issend, 0, 5, kWorldHandle, 9));  // [0,1]
    job.submit(0, job.tx[0]->recv_init(20, 1, 5));
    job.submit(0, job.tx[0]->send(Call::Send_init, 1, 6, kWorldHandle, 21));
    job.submit(0, job.tx[0]->start({20, 21}));  // [1,0]: tick, snapshot, signal
    job.submit(1, job.tx[1]->wait(9), true);    // merges the answer [1,0]
    job.submit(0, job.tx[0]->complete(Call::Waitall,
                                      {Completion{20, 1, 5, 0, 0}, Completion{21, 0, 0, 0, 0}}));
    job.submit(1, job.tx[1]->recv(0, 6, 0, 6));
    job.sim.drain();
    REQUIRE(job.sim.check_finished() == "");
    CHECK(job.clock(0, 0) == Clock{1, 0});
    CHECK(job.clock(1, 1) == Clock{1, 2});  // a snapshot before the tick would give [0,2]
    CHECK(job.clock(0, 1) == Clock{2, 1});
  }
}

TEST_CASE("mpi+engine: a matched probe answers a synchronous send with the clock at the probe",
          "[mpi][engine]") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("delivery seed " << seed);
    Job job(2, seed);
    job.submit(1, job.tx[1]->send(Call::Ssend, 0, 3), true);                     // [0,1] + answer
    job.submit(0, job.tx[0]->send(Call::Send, 1, 9));                            // [1,0]
    job.submit(0, job.tx[0]->mprobe(Call::Mprobe, 5, kRankAny, 3, 1, 3), true);  // answers [1,0]
    job.submit(0, job.tx[0]->send(Call::Send, 1, 9));                            // [2,0]
    job.submit(0, job.tx[0]->mrecv(Call::Mrecv, 5, 0, 1, 3), true);              // [3,1]
    job.submit(1, job.tx[1]->recv(0, 9, 0, 9));
    job.submit(1, job.tx[1]->recv(0, 9, 0, 9));
    job.sim.drain();
    REQUIRE(job.sim.check_finished() == "");
    CHECK(job.clock(1, 0) == Clock{1, 1});
    CHECK(job.clock(0, 2) == Clock{3, 1});
    CHECK(job.clock(1, 2) == Clock{2, 3});
  }
}

TEST_CASE("mpi+engine: Improbe and Imrecv against a synchronous send", "[mpi][engine]") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("delivery seed " << seed);
    Job job(2, seed);
    job.submit(1, job.tx[1]->send(Call::Issend, 0, 3, kWorldHandle, 7));  // [0,1]
    job.submit(0, job.tx[0]->send(Call::Send, 1, 9));                     // [1,0]
    job.submit(0, job.tx[0]->mprobe(Call::Improbe, 5, 1, 3, 1, 3));       // answers [1,0]
    job.submit(0, job.tx[0]->mrecv(Call::Imrecv, 5, 8));
    job.submit(0, job.tx[0]->send(Call::Send, 1, 9));  // [2,0]
    job.submit(0, job.tx[0]->wait(8, 1, 3), true);     // [3,1]
    job.submit(1, job.tx[1]->wait(7), true);           // [1,2]
    job.submit(1, job.tx[1]->recv(0, 9, 0, 9));
    job.submit(1, job.tx[1]->recv(0, 9, 0, 9));
    job.sim.drain();
    REQUIRE(job.sim.check_finished() == "");
    CHECK(job.clock(0, 2) == Clock{3, 1});
    CHECK(job.clock(1, 1) == Clock{1, 2});
    CHECK(job.clock(1, 2) == Clock{1, 3});
  }
}

TEST_CASE("mpi+engine: a synchronous send freed while active leaves nothing behind",
          "[mpi][engine]") {
  // MPI_Issend then MPI_Request_free: MPI completes the send without telling
  // the program, so no WaitAck ever runs. The receiver still answers (its
  // Recv cannot know), and the sender's engine keeps that answer's clock
  // for good: one pooled clock per freed synchronous send.
  Job job(2, 1);
  job.submit(0, job.tx[0]->send(Call::Issend, 1, 3, kWorldHandle, 7));
  job.submit(0, job.tx[0]->request_free(7));
  job.submit(1, job.tx[1]->recv(0, 3, 0, 3), true);
  job.sim.drain();
  REQUIRE(job.sim.all_idle());
  CHECK(job.sim.compare_with_reference() == "");
  CHECK(job.sim.check_no_leaks() == "");
}
