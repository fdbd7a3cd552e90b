// MPI's non-overtaking rule for receives in the MPI translator
// (translators/mpi/translate/receive_order.cpp): which receives a receive is
// ordered after, and, with real engines, the clocks that gives synchronous
// senders (docs/clock-rules.md, "Synchronous sends").
#include <catch2/catch.hpp>
#include <cstdint>
#include <utility>
#include <vector>

#include "support/mpi_harness.h"

using namespace vcx;
using namespace vcx::mpi;
using namespace vcx::mpitest;
using vcx::sim::Clock;

namespace {
using Orders = std::vector<std::pair<std::uint64_t, std::uint64_t>>;  // (later, earlier)
}  // namespace

TEST_CASE("mpi: a wildcard fan-in orders each receive after the one before", "[mpi][order]") {
  Tx tx(1, 5);
  tx.init(1, 5);
  for (std::uint64_t req = 10; req < 14; ++req) tx.irecv(req, kRankAny, 5);  // tokens 1..4
  // Earlier receives are kept from the moment a later one is posted.
  CHECK(tx.rec().kept == std::set<std::uint64_t>{1, 2, 3});
  tx.complete(Call::Waitall, {Completion{10, 0, 5, 0, 0}, Completion{11, 2, 5, 0, 0},
                              Completion{12, 3, 5, 0, 0}, Completion{13, 4, 5, 0, 0}});
  // Each follows all before it; naming the one right before implies the rest.
  CHECK(tx.rec().orders == Orders{{2, 1}, {3, 2}, {4, 3}});
  CHECK(tx.rec().kept.empty());
}

TEST_CASE("mpi: receives that could not take the message are not ordered before it",
          "[mpi][order]") {
  SECTION("another tag, another source, another communicator") {
    Tx tx(1, 4);
    tx.init(1, 4);
    tx.irecv(10, kRankAny, 6);                       // token 1: tag 6 only
    tx.irecv(11, 0, 5);                              // token 2: source 0 only
    tx.irecv(12, kRankAny, kTagAny, kSelfHandle);    // token 3: another communicator
    tx.irecv(13, kRankAny, 5);                       // token 4
    tx.complete(Call::Waitall, {Completion{13, 2, 5, 0, 0}});
    CHECK(tx.rec().orders.empty());
  }
  SECTION("a receive completed before the later one was posted") {
    Tx tx(1, 3);
    tx.init(1, 3);
    tx.irecv(10, kRankAny, 5);
    tx.wait(10, 0, 5);
    tx.irecv(11, kRankAny, 5);
    tx.wait(11, 2, 5);
    CHECK(tx.rec().orders.empty());
    CHECK(tx.rec().kept.empty());
  }
  SECTION("a blocking receive follows the pending ones that could take its message") {
    Tx tx(1, 3);
    tx.init(1, 3);
    tx.irecv(10, kRankAny, kTagAny);  // token 1
    tx.irecv(11, 2, 7);               // token 2: source 2, tag 7
    tx.recv(kRankAny, 5, 2, 5);       // token 3: got rank 2's tag 5
    // Token 2 knows its match at posting (1 could take it); token 2 could not
    // have taken token 3's message.
    CHECK(tx.rec().orders == Orders{{2, 1}, {3, 1}});
  }
}

TEST_CASE("mpi: a cancelled receive hands its place in the order to its predecessors",
          "[mpi][order]") {
  Tx tx(1, 4);
  tx.init(1, 4);
  tx.irecv(10, kRankAny, 5);  // token 1
  tx.irecv(11, 0, 5);         // token 2, follows 1; will be cancelled
  tx.irecv(12, 0, 5);         // token 3
  // 3 follows 2, and reaches 1 through 2.
  REQUIRE(tx.rec().orders == Orders{{2, 1}, {3, 2}});
  tx.wait(11, 0, 0, /*cancelled=*/true);
  CHECK(tx.rec().orders == Orders{{2, 1}, {3, 2}, {3, 1}});
  tx.wait(10, 0, 5);
  tx.wait(12, 0, 5);
  CHECK(tx.rec().kept.empty());
}

// ---------------------------------------------------------------------------
// With engines: rank 1 receives from ranks 0 and 2 (and 3), rank 0's message
// is the first receive's; the later senders' completions carry rank 0's send.

TEST_CASE("mpi+engine: a synchronous sender matched by a later wildcard receive",
          "[mpi][engine][order]") {
  enum class Completing { Waitall, Waitany, Testsome, Persistent };
  for (const Completing how : {Completing::Waitall, Completing::Waitany, Completing::Testsome,
                               Completing::Persistent}) {
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
      INFO("completion " << static_cast<int>(how) << ", delivery seed " << seed);
      Job job(3, seed);
      if (how == Completing::Persistent) {
        job.submit(1, job.tx[1]->recv_init(10, kRankAny, 5));
        job.submit(1, job.tx[1]->recv_init(11, kRankAny, 5));
        job.submit(1, job.tx[1]->start({10, 11}));
      } else {
        job.submit(1, job.tx[1]->irecv(10, kRankAny, 5));
        job.submit(1, job.tx[1]->irecv(11, kRankAny, 5));
      }
      const auto s0 = job.submit(0, job.tx[0]->send(Call::Ssend, 1, 5), true);
      const auto s2 = job.submit(2, job.tx[2]->send(Call::Ssend, 1, 5), true);
      switch (how) {
        case Completing::Waitall:
        case Completing::Persistent:
          job.submit(1, job.tx[1]->complete(Call::Waitall, {Completion{10, 0, 5, 0, 0},
                                                            Completion{11, 2, 5, 0, 0}}));
          break;
        case Completing::Waitany:  // the later receive first
          job.submit(1, job.tx[1]->complete(Call::Waitany, {Completion{11, 2, 5, 0, 0}}));
          job.submit(1, job.tx[1]->complete(Call::Waitany, {Completion{10, 0, 5, 0, 0}}));
          break;
        case Completing::Testsome:
          job.submit(1, job.tx[1]->complete(Call::Testsome, {}));
          job.submit(1, job.tx[1]->complete(Call::Testsome, {Completion{11, 2, 5, 0, 0}}));
          job.submit(1, job.tx[1]->complete(Call::Testsome, {Completion{10, 0, 5, 0, 0}}));
          break;
      }
      job.sim.drain();
      REQUIRE(job.sim.check_finished() == "");
      CHECK(job.clock(0, s0.call_index) == Clock{1, 0, 0});
      CHECK(job.clock(2, s2.call_index) == Clock{1, 0, 1});
      CHECK(job.sim.compare_with_reference() == "");
    }
  }
}

TEST_CASE("mpi+engine: a matched probe after a pending wildcard receive",
          "[mpi][engine][order]") {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    INFO("delivery seed " << seed);
    Job job(3, seed);
    job.submit(1, job.tx[1]->irecv(10, kRankAny, 5));
    const auto s0 = job.submit(0, job.tx[0]->send(Call::Ssend, 1, 5), true);
    const auto s2 = job.submit(2, job.tx[2]->send(Call::Ssend, 1, 5), true);
    job.submit(1, job.tx[1]->mprobe(Call::Mprobe, 5, kRankAny, 5, 2, 5));
    const auto mr = job.submit(1, job.tx[1]->mrecv(Call::Mrecv, 5, 0, 2, 5));  // [0,1,1]
    const auto w = job.submit(1, job.tx[1]->wait(10, 0, 5));                  // [1,2,1]
    job.sim.drain();
    REQUIRE(job.sim.check_finished() == "");
    CHECK(job.clock(0, s0.call_index) == Clock{1, 0, 0});
    CHECK(job.clock(2, s2.call_index) == Clock{1, 0, 1});
    CHECK(job.clock(1, mr.call_index) == Clock{0, 1, 1});
    CHECK(job.clock(1, w.call_index) == Clock{1, 2, 1});
  }
}

TEST_CASE("mpi+engine: a chain through three senders", "[mpi][engine][order]") {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    INFO("delivery seed " << seed);
    Job job(4, seed);
    job.submit(1, job.tx[1]->irecv(10, kRankAny, 5));
    job.submit(1, job.tx[1]->irecv(11, kRankAny, 5));
    job.submit(1, job.tx[1]->irecv(12, kRankAny, 5));
    const auto s0 = job.submit(0, job.tx[0]->send(Call::Send, 1, 5));
    const auto s2 = job.submit(2, job.tx[2]->send(Call::Ssend, 1, 5), true);
    const auto s3 = job.submit(3, job.tx[3]->send(Call::Ssend, 1, 5), true);
    job.submit(1, job.tx[1]->complete(Call::Waitall, {Completion{12, 3, 5, 0, 0},
                                                      Completion{10, 0, 5, 0, 0},
                                                      Completion{11, 2, 5, 0, 0}}));
    job.sim.drain();
    REQUIRE(job.sim.check_finished() == "");
    CHECK(job.clock(2, s2.call_index) == Clock{1, 0, 1, 0});
    CHECK(job.clock(3, s3.call_index) == Clock{1, 0, 1, 1});
    (void)s0;
  }
}

TEST_CASE("mpi: a receive stays while one posted during its wait may still be cancelled",
          "[mpi][order]") {
  Tx tx(1, 4);
  tx.init(1, 4);
  tx.irecv(10, kRankAny, 5);  // token 1 (P)
  tx.irecv(11, 1, 5);         // token 2 (A): follows P
  tx.irecv(12, 1, 5);         // token 3 (X): follows A, reaches P through A
  REQUIRE(tx.rec().orders == Orders{{2, 1}, {3, 2}});
  tx.wait(10, 0, 5);  // P completes first
  CHECK(tx.rec().kept.count(1) == 1);  // A or X may still be cancelled
  tx.wait(11, 0, 0, /*cancelled=*/true);
  CHECK(tx.rec().orders == Orders{{2, 1}, {3, 2}, {3, 1}});
  tx.wait(12, 1, 5);
  CHECK(tx.rec().kept.empty());
}

TEST_CASE("mpi: a receive pending all along does not hold on to the later ones",
          "[mpi][order]") {
  Tx tx(1, 3);
  tx.init(1, 3);
  tx.irecv(10, kRankAny, 99);  // a stop message, completed at the end
  for (std::uint64_t round = 0; round < 200; ++round) {
    tx.irecv(11, kRankAny, 5);
    tx.irecv(12, kRankAny, 5);
    tx.complete(Call::Waitall, {Completion{11, 0, 5, 0, 0}, Completion{12, 2, 5, 0, 0}});
  }
  // Only the stop receive is kept, and the last round's first receive until
  // the next posting lets it go: the rounds do not pile up.
  CHECK(tx.rec().kept.size() <= 2);
  CHECK(tx.rec().kept.count(1) == 1);
  CHECK(tx.rec().orders.size() == 200);  // each round's second after its first
  tx.wait(10, 0, 99);
  CHECK(tx.rec().kept.empty());
}
