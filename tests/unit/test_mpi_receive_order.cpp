// MPI's non-overtaking rule for receives in the MPI translator
// (translators/mpi/translate/receive_order.cpp): which receives a receive is
// ordered after, and, with real engines, the clocks that gives synchronous
// senders (docs/clock-rules.md, "Synchronous sends").
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../../translators/mpi/translate/receive_order.h"
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

namespace {

// Random receive sequences on one communicator, checked against MPI's rule
// itself: when B matched, every receive A posted before B, still pending
// when B was posted, able to take B's message and not cancelled must reach
// B's answer, i.e. be reachable from B over the named pairs through
// receives that were not cancelled (a cancelled receive carries nothing; a
// cancel hands its place to its predecessors).
struct ModelReceive {
  int want_source = 0, want_tag = 0;
  bool has_message = false;
  int source = -1, tag = -1;
  bool done = false;       // completed by the program
  bool cancelled = false;  // matched nothing
  std::set<std::uint64_t> pending_at_posting;
};

bool can_take(const ModelReceive& r, int source, int tag) {
  return (r.want_source == kRankAny || r.want_source == source) &&
         (r.want_tag == kTagAny || r.want_tag == tag);
}

// Returns "" or what is missing.
std::string run_random_receives(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  ReceiveOrder order;
  RecordingControl ctl;
  std::map<std::uint64_t, ModelReceive> rs;
  std::vector<std::uint64_t> waiting;               // posted, no message yet, in posting order
  std::deque<std::pair<int, int>> unexpected;       // messages nobody took yet
  std::uint64_t next = 1;
  const int steps = 5 + pick(40);
  for (int step = 0; step < steps; ++step) {
    const int what = pick(10);
    if (what < 4) {  // post
      ModelReceive r;
      r.want_source = pick(3) == 0 ? kRankAny : pick(2);
      r.want_tag = pick(3) == 0 ? kTagAny : pick(2);
      for (const auto& [t, x] : rs)
        if (!x.done && !x.cancelled) r.pending_at_posting.insert(t);
      const std::uint64_t t = next++;
      order.posted(ReceiveToken{t}, r.want_source, r.want_tag, ctl);
      if (r.want_source != kRankAny && r.want_tag != kTagAny)
        order.matched(ReceiveToken{t}, Rank{static_cast<std::uint32_t>(r.want_source)}, r.want_tag,
                      ctl);
      const auto it = std::find_if(unexpected.begin(), unexpected.end(),
                                   [&](const auto& m) { return can_take(r, m.first, m.second); });
      if (it != unexpected.end()) {
        r.has_message = true;
        std::tie(r.source, r.tag) = *it;
        unexpected.erase(it);
      } else {
        waiting.push_back(t);
      }
      rs[t] = r;
    } else if (what < 7) {  // a message arrives: the first receive that can take it does
      const int source = pick(2), tag = pick(2);
      const auto it = std::find_if(waiting.begin(), waiting.end(), [&](std::uint64_t t) {
        return can_take(rs[t], source, tag);
      });
      if (it == waiting.end()) {
        unexpected.emplace_back(source, tag);
      } else {
        ModelReceive& r = rs[*it];
        r.has_message = true;
        r.source = source;
        r.tag = tag;
        waiting.erase(it);
      }
    } else if (what < 9) {  // the program completes a receive that has its message
      std::vector<std::uint64_t> ready;
      for (const auto& [t, x] : rs)
        if (x.has_message && !x.done) ready.push_back(t);
      if (ready.empty()) continue;
      const std::uint64_t t = ready[static_cast<std::size_t>(pick(static_cast<int>(ready.size())))];
      ModelReceive& r = rs[t];
      if (r.want_source == kRankAny || r.want_tag == kTagAny)
        order.matched(ReceiveToken{t}, Rank{static_cast<std::uint32_t>(r.source)}, r.tag, ctl);
      order.completed(ReceiveToken{t}, ctl);
      r.done = true;
    } else {  // the program cancels a receive that has no message
      if (waiting.empty()) continue;
      const auto i = static_cast<std::size_t>(pick(static_cast<int>(waiting.size())));
      const std::uint64_t t = waiting[i];
      waiting.erase(waiting.begin() + static_cast<std::ptrdiff_t>(i));
      rs[t].cancelled = true;
      order.unmatched(ReceiveToken{t}, ctl);
    }
  }
  // The program completes every receive that has its message, in posting order.
  for (auto& [t, r] : rs) {
    if (!r.has_message || r.done) continue;
    order.matched(ReceiveToken{t}, Rank{static_cast<std::uint32_t>(r.source)}, r.tag, ctl);
    order.completed(ReceiveToken{t}, ctl);
    r.done = true;
  }
  std::map<std::uint64_t, std::vector<std::uint64_t>> after;  // later -> earlier
  for (const auto& [later, earlier] : ctl.orders) after[later].push_back(earlier);
  for (const auto& [b, rb] : rs) {
    if (!rb.done) continue;  // only a completed receive's match is known
    std::set<std::uint64_t> reached;
    std::vector<std::uint64_t> todo{b};
    while (!todo.empty()) {
      const std::uint64_t x = todo.back();
      todo.pop_back();
      for (const std::uint64_t y : after[x])
        if (!rs[y].cancelled && reached.insert(y).second) todo.push_back(y);
    }
    for (const std::uint64_t a : rb.pending_at_posting) {
      const ModelReceive& ra = rs[a];
      if (ra.cancelled || !can_take(ra, rb.source, rb.tag)) continue;
      if (reached.count(a) == 0)
        return "seed " + std::to_string(seed) + ": receive " + std::to_string(b) +
               " does not follow receive " + std::to_string(a);
    }
  }
  return {};
}

}  // namespace

TEST_CASE("mpi: random receives, completions and cancels keep MPI's receive order",
          "[mpi][order]") {
  for (std::uint64_t seed = 1; seed <= 50000; ++seed) {
    const std::string missing = run_random_receives(seed);
    if (!missing.empty()) FAIL(missing);
  }
}

TEST_CASE("mpi: a receive two cancels away still reaches an earlier wildcard", "[mpi][order]") {
  // A5 follows A4, A4 followed A3 and (after A3's cancel) A2, A2 followed A1.
  // A2 completed early; when A4 is cancelled too, A5 must still reach A1.
  ReceiveOrder order;
  RecordingControl ctl;
  const auto t = [](std::uint64_t v) { return ReceiveToken{v}; };
  order.posted(t(1), kRankAny, 1, ctl);  // A1: takes rank 1's message, completes late
  order.posted(t(2), 0, 1, ctl);
  order.matched(t(2), Rank{0}, 1, ctl);
  order.posted(t(3), 0, 1, ctl);
  order.matched(t(3), Rank{0}, 1, ctl);
  order.completed(t(2), ctl);
  order.posted(t(4), 0, 1, ctl);
  order.matched(t(4), Rank{0}, 1, ctl);
  order.unmatched(t(3), ctl);
  order.posted(t(5), 0, 1, ctl);
  order.matched(t(5), Rank{0}, 1, ctl);
  order.unmatched(t(4), ctl);
  // Over receives that were not cancelled (3 and 4 were), 5 reaches 1.
  std::set<std::uint64_t> reached;
  std::vector<std::uint64_t> todo{5};
  while (!todo.empty()) {
    const std::uint64_t x = todo.back();
    todo.pop_back();
    for (const auto& [later, earlier] : ctl.orders)
      if (later == x && earlier != 3 && earlier != 4 && reached.insert(earlier).second)
        todo.push_back(earlier);
  }
  CHECK(reached.count(1) == 1);
}
