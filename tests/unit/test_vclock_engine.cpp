// The vclock exchange engine, black box through the built plugin: several
// engines (one per simulated rank) exchange real tool messages over an
// in-memory network that reorders across pairs (seeded), and the clocks they
// record are compared with exact expectations and with a sequential
// reference model of the rules (support/engine_sim.h).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "support/engine_sim.h"
#include "../../engines/vclock/clock_codec.h"

using namespace vcx;
using namespace vcx::sim;
using Catch::Matchers::Contains;

namespace {

constexpr QueueId kQ{7, 0};
constexpr QueueId kQ2{7, 1};
constexpr GroupId kWorld{0xabcdef};

std::vector<Rank> ranks(std::initializer_list<std::uint32_t> v) {
  std::vector<Rank> out;
  for (auto x : v) out.push_back(Rank{x});
  return out;
}
std::vector<Rank> all_ranks(std::uint32_t n) {
  std::vector<Rank> out;
  for (std::uint32_t r = 0; r < n; ++r) out.push_back(Rank{r});
  return out;
}

const Clock& clock_of(const EngineSim& sim, std::uint32_t r, std::int64_t call) {
  return sim.calls(r).at(static_cast<std::size_t>(call)).clock;
}

// The requests of a random point-to-point run: receives posted and
// synchronous sends not completed yet, completed now and then, in any order.
struct RandomRequests {
  std::vector<std::vector<ReceiveToken>> pending;
  std::vector<std::vector<SendToken>> acks;
  explicit RandomRequests(std::uint32_t n) : pending(n), acks(n) {}

  // After each step: someone completes some of its requests, maybe makes a
  // local call, and some messages are delivered, as a live tool interleaves them.
  void step(EngineSim& sim, std::mt19937_64& rng, std::uint32_t n) {
    const auto who = static_cast<std::uint32_t>(rng() % n);
    if (rng() % 3 == 0 && !pending[who].empty()) {
      std::shuffle(pending[who].begin(), pending[who].end(), rng);
      const std::size_t k = 1 + rng() % pending[who].size();
      std::vector<ReceiveToken> done(pending[who].begin(), pending[who].begin() + k);
      pending[who].erase(pending[who].begin(), pending[who].begin() + k);
      sim.wait_all(who, done, rng() % 2);
    }
    if (rng() % 3 == 0 && !acks[who].empty()) {
      sim.wait_acks(who, acks[who]);
      acks[who].clear();
    }
    if (rng() % 4 == 0) sim.local(who);
    for (int k = static_cast<int>(rng() % 4); k > 0 && sim.step(); --k) {
    }
  }
  void finish(EngineSim& sim, std::uint32_t n) {
    for (std::uint32_t r = 0; r < n; ++r) {
      if (!pending[r].empty()) sim.wait_all(r, pending[r]);
      if (!acks[r].empty()) sim.wait_acks(r, acks[r]);
    }
  }
};

}  // namespace

// ---------------------------------------------------------------------------
// The plugin itself

TEST_CASE("vclock plugin: creates an engine, refuses a world of size 0", "[engine]") {
  LoadedPlugin lib = load_plugin(VCX_PLUGIN_DIR, PluginKind::Engine, "vclock");
  Network net(1, 1);
  SimTransport t(net, Rank{0}, 0);
  SimHost empty(Rank{0}, 0, t);
  std::string err;
  CHECK(lib.descriptor->create(empty, &err) == nullptr);
  CHECK_THAT(err, Contains("size"));

  SimHost host(Rank{0}, 1, t);
  Plugin* p = lib.descriptor->create(host, &err);
  REQUIRE(p != nullptr);
  CHECK(p->engine() != nullptr);
  CHECK(p->translator() == nullptr);
  CHECK(p->engine()->idle());
  CHECK(p->engine()->clock().size() == 1);
  CHECK(p->engine()->clocked_calls() == 0);
  delete p;
  unload_plugin(lib);
}

// ---------------------------------------------------------------------------
// A worked example of the rules, by hand

TEST_CASE("engine: the worked example of the clock rules, under many delivery orders", "[engine]") {
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(3, seed);
    sim.register_group_everywhere(kWorld, all_ranks(3));
    const auto r0_send = sim.send(0, 1, kQ);
    const auto r1_recv = sim.recv(1, 0, kQ, true);  // posted ANY, resolved to 0
    const auto r1_ssend = sim.send(1, 2, kQ, /*sync=*/true, true);
    const auto r2_recv = sim.recv(2, 1, kQ, true);
    const CollectiveRef barrier = coll(kWorld, 1);
    const auto b0 = sim.collective(0, barrier, true);
    const auto b1 = sim.collective(1, barrier, true);
    const auto b2 = sim.collective(2, barrier, true);
    sim.drain();
    REQUIRE(sim.check_finished() == "");

    CHECK(clock_of(sim, 0, r0_send.call_index) == Clock{1, 0, 0});
    CHECK(clock_of(sim, 1, r1_recv.call_index) == Clock{1, 1, 0});
    CHECK(clock_of(sim, 1, r1_ssend.call_index) == Clock{1, 2, 1});
    CHECK(clock_of(sim, 2, r2_recv.call_index) == Clock{1, 2, 1});
    CHECK(clock_of(sim, 0, b0.call_index) == Clock{2, 3, 2});
    CHECK(clock_of(sim, 1, b1.call_index) == Clock{2, 3, 2});
    CHECK(clock_of(sim, 2, b2.call_index) == Clock{2, 3, 2});
    for (std::uint32_t r = 0; r < 3; ++r)
      CHECK(Clock(sim.engine(r).clock().begin(), sim.engine(r).clock().end()) == Clock{2, 3, 2});

    // What the observers are told besides the clock.
    const auto& send = sim.calls(0).at(0);
    CHECK(send.peers == ranks({1}));
    CHECK(send.queue == kQ);
    CHECK(send.group == GroupId{});
    CHECK(sim.calls(1).at(0).peers == ranks({0}));
    CHECK(sim.calls(2).at(1).group == kWorld);
    CHECK(sim.calls(2).at(1).name ==
          sim.host(2).call_name(static_cast<std::uint8_t>(Model::Example), 30));
    CHECK(sim.engine(1).clocked_calls() == 3);
  }
}

// ---------------------------------------------------------------------------
// Point-to-point

TEST_CASE("engine: FIFO per queue; binds in posting order, waits out of order", "[engine]") {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(2, seed);
    // Rank 1 posts three receives on kQ and one on kQ2 first, bound in that order.
    const ReceiveToken a = sim.irecv(1, 0, kQ);
    const ReceiveToken b = sim.irecv(1, 0, kQ);
    const ReceiveToken c = sim.irecv(1, 0, kQ);
    const ReceiveToken d = sim.irecv(1, 0, kQ2);
    // Rank 0 sends on kQ, kQ2, kQ, kQ with local work in between: distinct clocks.
    sim.send(0, 1, kQ);   // [1,0]  -> a
    sim.local(0);         // [2,0]
    sim.send(0, 1, kQ2);  // [3,0]  -> d
    sim.send(0, 1, kQ);   // [4,0]  -> b
    sim.local(0);         // [5,0]
    sim.send(0, 1, kQ);   // [6,0]  -> c
    // Rank 1 completes them in the order b, a, d, c.
    const auto wb = sim.wait_all(1, {b});
    const auto wa = sim.wait_all(1, {a});
    const auto wd = sim.wait_all(1, {d});
    const auto wc = sim.wait_all(1, {c});
    sim.drain();
    REQUIRE(sim.check_finished() == "");
    CHECK(clock_of(sim, 1, wb.call_index) == Clock{4, 1});
    CHECK(clock_of(sim, 1, wa.call_index) == Clock{4, 2});
    CHECK(clock_of(sim, 1, wd.call_index) == Clock{4, 3});
    CHECK(clock_of(sim, 1, wc.call_index) == Clock{6, 4});
  }
}

TEST_CASE("engine: the receive's queue position, not arrival order, picks the signal", "[engine]") {
  // Signals on the same queue from two sources and on two queues from one
  // source arrive in any interleaving; each wait still merges its own.
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(3, seed);
    std::vector<ReceiveToken> from0, from2;
    for (int i = 0; i < 4; ++i) from0.push_back(sim.irecv(1, 0, i % 2 ? kQ2 : kQ));
    for (int i = 0; i < 4; ++i) from2.push_back(sim.irecv(1, 2, kQ));
    for (int i = 0; i < 4; ++i) {
      sim.send(0, 1, i % 2 ? kQ2 : kQ);
      sim.send(2, 1, kQ);
      sim.local(2);
    }
    std::vector<ReceiveToken> all = from0;
    all.insert(all.end(), from2.begin(), from2.end());
    std::mt19937_64 rng(seed);
    std::shuffle(all.begin(), all.end(), rng);
    for (auto t : all) sim.wait_all(1, {t});
    sim.drain();
    REQUIRE(sim.check_finished() == "");
  }
}

TEST_CASE("engine: a wait on a receive bound later blocks, must not stall, then completes",
          "[engine]") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(2, seed);
    sim.send(0, 1, kQ);
    sim.send(0, 1, kQ);
    // Rank 1: a blocking wildcard receive whose source is not known yet.
    const ReceiveToken t = sim.new_receive(1);
    sim.pending(1).set(Rank{0}, kQ, true);
    const auto first = sim.submit(1, Prog::clocked_call(20).wait(t).snapshot(t), true);
    const auto later = sim.submit(1, Prog::unclocked(3), true);  // no ops, still ordered
    sim.drain();

    CHECK_FALSE(sim.engine(1).idle());
    CHECK(sim.engine(1).must_not_stall());
    CHECK_THAT(sim.engine(1).blocked_on(), Contains("not known yet"));
    CHECK(sim.host(1).replies.empty());  // neither the blocked program nor the one after it
    CHECK(sim.calls(1).empty());
    CHECK(sim.check_replies(1) == "");

    sim.bind(1, t, 0, kQ);
    sim.pending(1).clear();
    CHECK_FALSE(sim.engine(1).must_not_stall());
    const ReceiveToken t2 = sim.post(1, 0, kQ);
    sim.submit(1, Prog::clocked_call(20).wait(t2).snapshot(t2), true);
    sim.drain();
    REQUIRE(sim.check_finished() == "");
    CHECK(sim.host(1).replies == std::vector<std::uint64_t>{first.event_seq, later.event_seq, 3});
    CHECK(sim.calls(1).at(0).clock == Clock{1, 1});
    CHECK(sim.calls(1).at(1).clock == Clock{2, 2});
  }
}

TEST_CASE("engine: a wait for a signal not yet sent blocks but may stall", "[engine]") {
  EngineSim sim(2, 5);
  const auto w = sim.recv(1, 0, kQ, true);
  sim.drain();
  CHECK_FALSE(sim.engine(1).idle());
  CHECK_FALSE(sim.engine(1).must_not_stall());  // bound: the signal will come
  CHECK_THAT(sim.engine(1).blocked_on(), Contains("rank 0"));
  CHECK(sim.host(1).replies.empty());
  sim.send(0, 1, kQ);
  sim.drain();
  REQUIRE(sim.check_finished() == "");
  CHECK(sim.host(1).replies == std::vector<std::uint64_t>{w.event_seq});
  CHECK(clock_of(sim, 1, w.call_index) == Clock{1, 1});
}

TEST_CASE("engine: a synchronous send to a receive that may still be bound is deferred",
          "[engine]") {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(2, seed);
    // Rank 1 holds an unbound receive that could take rank 0's message; its
    // engine has nothing queued.
    const ReceiveToken t = sim.new_receive(1);
    sim.pending(1).set(Rank{0}, kQ, true);
    const auto ss = sim.send(0, 1, kQ, /*sync=*/true, true);
    sim.drain();
    CHECK(sim.engine(1).idle());
    CHECK_FALSE(sim.engine(0).idle());  // waits for the answer
    CHECK_THAT(sim.engine(0).blocked_on(), Contains("rank 1"));
    // Neither application may be held: each would wait for the other.
    CHECK(sim.engine(1).must_not_stall());
    CHECK(sim.engine(0).must_not_stall());
    CHECK(sim.host(0).replies.empty());  // the clock itself still waits

    // Binding the receive removes the reason on the receiving side.
    sim.bind(1, t, 0, kQ);
    sim.pending(1).clear();
    CHECK_FALSE(sim.engine(1).must_not_stall());
    sim.submit(1, Prog::clocked_call(20).wait(t).snapshot(t));
    sim.drain();
    REQUIRE(sim.check_finished() == "");
    CHECK_FALSE(sim.engine(0).must_not_stall());
    CHECK(clock_of(sim, 0, ss.call_index) == Clock{1, 1});
    CHECK(sim.calls(1).at(0).clock == Clock{1, 1});
  }
}

TEST_CASE("engine: a synchronous send is not deferred for receives that cannot take it",
          "[engine]") {
  EngineSim sim(3, 2);
  const ReceiveToken t = sim.new_receive(1);
  sim.pending(1).set(Rank{2}, kQ, true);   // from another source
  sim.pending(1).set(Rank{0}, kQ2, true);  // on another queue
  sim.send(0, 1, kQ, /*sync=*/true, true);
  sim.drain();
  CHECK_FALSE(sim.engine(1).must_not_stall());
  CHECK_FALSE(sim.engine(0).must_not_stall());  // the answer will come: rank 0 may wait

  // The receiver's translator learns of a receive that could take it: the
  // next run defers the answer after all.
  sim.pending(1).set(Rank{0}, kQ, true);
  sim.run_all();
  CHECK(sim.engine(1).must_not_stall());
  sim.drain();
  CHECK(sim.engine(0).must_not_stall());

  sim.bind(1, t, 0, kQ);
  sim.pending(1).clear();
  sim.submit(1, Prog::clocked_call(20).wait(t).snapshot(t));
  sim.drain();
  REQUIRE(sim.check_finished() == "");
  CHECK_FALSE(sim.engine(0).must_not_stall());
  CHECK_FALSE(sim.engine(1).must_not_stall());
}

TEST_CASE("engine: a synchronous send answered by blocking and by non-blocking receives",
          "[engine]") {
  SECTION("blocking receive: the answer is the clock after the receive's merge") {
    for (std::uint64_t seed = 1; seed <= 30; ++seed) {
      INFO("delivery seed " << seed);
      EngineSim sim(2, seed);
      const auto [is, tok] = sim.isend(0, 1, kQ, /*sync=*/true);  // [1,0]
      sim.local(1);                                               // [0,1]
      sim.local(1);                                               // [0,2]
      const auto rv = sim.recv(1, 0, kQ);                         // [1,3], answers it
      const auto done = sim.wait_acks(0, {tok});                  // [2,0] + [1,3]
      sim.drain();
      REQUIRE(sim.check_finished() == "");
      CHECK(clock_of(sim, 1, rv.call_index) == Clock{1, 3});
      CHECK(clock_of(sim, 0, done.call_index) == Clock{2, 3});
    }
  }
  SECTION("non-blocking receive: the answer is the clock at posting") {
    for (std::uint64_t seed = 1; seed <= 30; ++seed) {
      INFO("delivery seed " << seed);
      EngineSim sim(2, seed);
      const auto [is, tok] = sim.isend(0, 1, kQ, /*sync=*/true);  // [1,0]
      sim.local(1);                                               // [0,1]
      const ReceiveToken r = sim.irecv(1, 0, kQ);                 // snapshot [0,1]
      sim.local(1);                                               // [0,2]
      const auto w = sim.wait_all(1, {r});                        // [1,3]
      const auto done = sim.wait_acks(0, {tok});                  // [2,0] + [0,1]
      sim.drain();
      REQUIRE(sim.check_finished() == "");
      CHECK(clock_of(sim, 1, w.call_index) == Clock{1, 3});
      CHECK(clock_of(sim, 0, done.call_index) == Clock{2, 1});
    }
  }
  SECTION("non-blocking wildcard receive bound only after its snapshot") {
    for (std::uint64_t seed = 1; seed <= 30; ++seed) {
      INFO("delivery seed " << seed);
      EngineSim sim(2, seed);
      const auto [is, tok] = sim.isend(0, 1, kQ, /*sync=*/true);
      sim.local(1);                                    // [0,1]
      const ReceiveToken r = sim.new_receive(1);       // ANY: not bound at posting
      sim.submit(1, Prog::unclocked(21).snapshot(r));  // snapshot [0,1]
      sim.local(1);                                    // [0,2]
      sim.drain();
      sim.bind(1, r, 0, kQ);  // status known at completion
      const auto w = sim.wait_all(1, {r});
      const auto done = sim.wait_acks(0, {tok});
      sim.drain();
      REQUIRE(sim.check_finished() == "");
      CHECK(clock_of(sim, 1, w.call_index) == Clock{1, 3});
      CHECK(clock_of(sim, 0, done.call_index) == Clock{2, 1});
    }
  }
  SECTION("blocking synchronous send completes only with the answer") {
    for (std::uint64_t seed = 1; seed <= 30; ++seed) {
      INFO("delivery seed " << seed);
      EngineSim sim(2, seed);
      const auto ss = sim.send(0, 1, kQ, /*sync=*/true, true);
      sim.drain();
      CHECK(sim.host(0).replies.empty());
      CHECK_FALSE(sim.engine(0).idle());
      const auto rv = sim.recv(1, 0, kQ);
      sim.drain();
      REQUIRE(sim.check_finished() == "");
      CHECK(sim.host(0).replies == std::vector<std::uint64_t>{ss.event_seq});
      CHECK(clock_of(sim, 0, ss.call_index) == Clock{1, 1});
      CHECK(clock_of(sim, 1, rv.call_index) == Clock{1, 1});
    }
  }
}

// MPI's non-overtaking rule for receives (ExchangeControl::order_receive_after).
TEST_CASE("engine: an answer carries the messages of the receives it was ordered after",
          "[engine][order]") {
  SECTION("two wildcard receives: the second's answer carries the first's message") {
    for (std::uint64_t seed = 1; seed <= 30; ++seed) {
      INFO("delivery seed " << seed);
      EngineSim sim(3, seed);
      const ReceiveToken r1 = sim.irecv(1, 0, kQ);  // snapshot [0,0,0]
      const ReceiveToken r2 = sim.new_receive(1);
      sim.follow(1, r2, r1);
      sim.bind(1, r2, 2, kQ);
      sim.submit(1, Prog::unclocked(21).snapshot(r2));  // [0,0,0]
      const auto s0 = sim.send(0, 1, kQ, /*sync=*/true);  // [1,0,0] + answer [0,0,0]
      const auto s2 = sim.send(2, 1, kQ, /*sync=*/true);  // [0,0,1] + [0,0,0] + [1,0,0]
      const auto w = sim.wait_all(1, {r1, r2});            // [1,1,1]
      sim.drain();
      REQUIRE(sim.check_finished() == "");
      CHECK(clock_of(sim, 0, s0.call_index) == Clock{1, 0, 0});
      CHECK(clock_of(sim, 2, s2.call_index) == Clock{1, 0, 1});
      CHECK(clock_of(sim, 1, w.call_index) == Clock{1, 1, 1});
    }
  }
  SECTION("transitively, and through a blocking receive") {
    for (std::uint64_t seed = 1; seed <= 30; ++seed) {
      INFO("delivery seed " << seed);
      EngineSim sim(4, seed);
      const ReceiveToken r1 = sim.irecv(1, 0, kQ);
      const ReceiveToken r2 = sim.new_receive(1);
      sim.follow(1, r2, r1);
      sim.bind(1, r2, 2, kQ);
      sim.submit(1, Prog::unclocked(21).snapshot(r2));
      const auto s0 = sim.send(0, 1, kQ, /*sync=*/true);   // [1,0,0,0]
      const auto s2 = sim.send(2, 1, kQ);                  // [0,0,1,0], not synchronous
      sim.local(3);                                        // [0,0,0,1]
      const auto s3 = sim.send(3, 1, kQ, /*sync=*/true);   // [0,0,0,2]
      // A blocking receive ordered after r2 only: r1 comes through r2.
      const ReceiveToken r3 = sim.new_receive(1);
      sim.follow(1, r3, r2);
      sim.bind(1, r3, 3, kQ);
      const auto rv = sim.submit(1, Prog::clocked_call(20).wait(r3).snapshot(r3));  // [0,1,0,2]
      const auto w = sim.wait_all(1, {r1, r2});
      sim.drain();
      REQUIRE(sim.check_finished() == "");
      CHECK(clock_of(sim, 0, s0.call_index) == Clock{1, 0, 0, 0});
      CHECK(clock_of(sim, 1, rv.call_index) == Clock{0, 1, 0, 2});
      // Its answer: [0,1,0,2] + rank 2's [0,0,1,0] + rank 0's [1,0,0,0].
      CHECK(clock_of(sim, 3, s3.call_index) == Clock{1, 1, 1, 2});
      CHECK(clock_of(sim, 1, w.call_index) == Clock{1, 2, 1, 2});
      (void)s2;
    }
  }
  SECTION("the answer waits for the earlier message without holding the sender") {
    EngineSim sim(3, 5);
    const ReceiveToken r1 = sim.irecv(1, 0, kQ);
    const ReceiveToken r2 = sim.irecv(1, 2, kQ);
    sim.follow(1, r2, r1);
    const auto s2 = sim.send(2, 1, kQ, /*sync=*/true, /*needs_reply=*/true);
    sim.drain();
    // Rank 0 has not sent yet: rank 2's answer cannot be complete.
    CHECK_FALSE(sim.engine(2).idle());
    CHECK(sim.engine(2).must_not_stall());
    CHECK(sim.host(2).replies.empty());
    const auto s0 = sim.send(0, 1, kQ);
    const auto w = sim.wait_all(1, {r1, r2});
    sim.drain();
    REQUIRE(sim.check_finished() == "");
    CHECK_FALSE(sim.engine(2).must_not_stall());
    CHECK(clock_of(sim, 2, s2.call_index) == Clock{1, 0, 1});
    CHECK(sim.host(2).replies == std::vector<std::uint64_t>{s2.event_seq});
    (void)s0;
    (void)w;
  }
  SECTION("an earlier receive kept past its completion, then dropped ones") {
    EngineSim sim(3, 9);
    const ReceiveToken r1 = sim.irecv(1, 0, kQ);
    sim.control(1).keep_receive_order(r1);  // a receive was posted while it was pending
    const auto s0 = sim.send(0, 1, kQ);
    const auto w1 = sim.wait_all(1, {r1});  // completes and merges it first
    sim.drain();
    const ReceiveToken gone = sim.new_receive(1);  // will match nothing
    sim.submit(1, Prog::unclocked(21).snapshot(gone));
    const ReceiveToken r2 = sim.new_receive(1);
    sim.follow(1, r2, r1);
    sim.follow(1, r2, gone);
    sim.bind(1, r2, 2, kQ);
    sim.submit(1, Prog::unclocked(21).snapshot(r2));  // [0,1,0]
    sim.control(1).end_receive_order(r1);
    const auto s2 = sim.send(2, 1, kQ, /*sync=*/true);
    sim.drain();
    CHECK_FALSE(sim.engine(2).idle());  // waits for `gone`
    sim.drop(1, gone);
    const auto w2 = sim.wait_all(1, {r2});
    sim.drain();
    REQUIRE(sim.check_finished() == "");
    CHECK(clock_of(sim, 1, w1.call_index) == Clock{1, 1, 0});
    CHECK(clock_of(sim, 2, s2.call_index) == Clock{1, 1, 1});
    CHECK(clock_of(sim, 1, w2.call_index) == Clock{1, 2, 1});
    (void)s0;
  }
}

TEST_CASE("engine: random receive orders match the reference model", "[engine][order]") {
  for (std::uint64_t scenario = 1; scenario <= 60; ++scenario) {
    std::mt19937_64 gen(scenario * 104729);
    const std::uint32_t n = 2 + gen() % 4;
    const int steps = 30 + static_cast<int>(gen() % 30);
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      INFO("scenario " << scenario << " seed " << seed);
      std::mt19937_64 rng(scenario);
      EngineSim sim(n, seed);
      RandomRequests reqs(n);
      auto& pending = reqs.pending;
      auto& acks = reqs.acks;
      for (int s = 0; s < steps; ++s) {
        const auto src = static_cast<std::uint32_t>(rng() % n);
        auto dst = static_cast<std::uint32_t>(rng() % (n - 1));
        if (dst >= src) ++dst;
        const QueueId q = rng() % 2 ? kQ : kQ2;
        const bool sync = rng() % 2 == 0;
        const bool blocking = rng() % 3 == 0;
        // The new receive follows some of the receives still pending at dst.
        const ReceiveToken rt = sim.new_receive(dst);
        for (const ReceiveToken e : pending[dst])
          if (rng() % 3 == 0) sim.follow(dst, rt, e);
        sim.bind(dst, rt, src, q);
        if (!blocking) sim.submit(dst, Prog::unclocked(21).snapshot(rt));
        if (rng() % 2) {
          auto [sub, tok] = sim.isend(src, dst, q, sync);
          if (sync) acks[src].push_back(tok);
        } else {
          sim.send(src, dst, q, sync, rng() % 2);
        }
        if (blocking) {
          sim.submit(dst, Prog::clocked_call(20).wait(rt).snapshot(rt), rng() % 2);
        } else {
          pending[dst].push_back(rt);
        }
        reqs.step(sim, rng, n);
      }
      reqs.finish(sim, n);
      sim.drain();
      REQUIRE(sim.check_finished() == "");
    }
  }
}

TEST_CASE("engine: dropped receives release what they hold", "[engine]") {
  EngineSim sim(2, 1);
  // Posted as a wildcard (snapshot taken, never bound), then cancelled.
  const ReceiveToken a = sim.new_receive(1);
  sim.submit(1, Prog::unclocked(21).snapshot(a));
  // Never even snapshotted.
  const ReceiveToken b = sim.new_receive(1);
  sim.drain();
  sim.drop(1, a);
  sim.drop(1, b);
  // A wait on a dropped receive has nothing to wait for.
  const auto w = sim.wait_all(1, {a});
  // The queue is untouched: the next receive gets the first signal.
  sim.send(0, 1, kQ);
  const auto r = sim.recv(1, 0, kQ);
  sim.drain();
  REQUIRE(sim.check_finished() == "");
  CHECK(clock_of(sim, 1, w.call_index) == Clock{0, 1});
  CHECK(clock_of(sim, 1, r.call_index) == Clock{1, 2});
}

TEST_CASE("engine: replies follow program order and wait for their program", "[engine]") {
  EngineSim sim(2, 9);
  const ReceiveToken t = sim.post(1, 0, kQ);
  const auto a = sim.submit(1, Prog::clocked_call(20).wait(t).snapshot(t), true);
  const auto b = sim.submit(1, Prog::unclocked(4), true);
  sim.submit(1, Prog::clocked_call(5), false);
  const auto d = sim.submit(1, Prog::unclocked(6), true);
  sim.drain();
  CHECK(sim.host(1).replies.empty());
  CHECK(sim.check_replies(1) == "");
  sim.send(0, 1, kQ);
  sim.drain();
  REQUIRE(sim.check_finished() == "");
  CHECK(sim.host(1).replies == std::vector<std::uint64_t>{a.event_seq, b.event_seq, d.event_seq});
  // Unclocked programs neither tick nor appear among the clocked calls.
  REQUIRE(sim.calls(1).size() == 2);
  CHECK(sim.calls(1)[0].clock == Clock{1, 1});
  CHECK(sim.calls(1)[1].clock == Clock{1, 2});
  CHECK(sim.calls(1)[1].seq == 1);
  CHECK(sim.engine(1).clocked_calls() == 2);
}

TEST_CASE("engine: random point-to-point traffic matches the reference model", "[engine]") {
  for (std::uint64_t scenario = 1; scenario <= 80; ++scenario) {
    std::mt19937_64 gen(scenario * 7919);
    const std::uint32_t n = 2 + gen() % 5;
    const int steps = 40 + static_cast<int>(gen() % 40);
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      INFO("scenario " << scenario << " seed " << seed);
      std::mt19937_64 rng(scenario);  // same programs for every delivery order
      EngineSim sim(n, seed);
      RandomRequests reqs(n);
      auto& pending = reqs.pending;
      auto& acks = reqs.acks;
      for (int s = 0; s < steps; ++s) {
        const auto src = static_cast<std::uint32_t>(rng() % n);
        auto dst = static_cast<std::uint32_t>(rng() % (n - 1));
        if (dst >= src) ++dst;
        const QueueId q = rng() % 2 ? kQ : kQ2;
        const bool sync = rng() % 3 == 0;
        const bool nb_recv = rng() % 2;
        const bool nb_send = rng() % 2;
        ReceiveToken rt;
        if (nb_recv) rt = sim.irecv(dst, src, q);  // posted before the send
        if (nb_send) {
          auto [sub, tok] = sim.isend(src, dst, q, sync);
          if (sync) acks[src].push_back(tok);
        } else {
          sim.send(src, dst, q, sync, rng() % 2);
        }
        if (nb_recv) {
          pending[dst].push_back(rt);
        } else {
          sim.recv(dst, src, q, rng() % 2);
        }
        reqs.step(sim, rng, n);
      }
      reqs.finish(sim, n);
      sim.drain();
      REQUIRE(sim.check_finished() == "");
    }
  }
}

// ---------------------------------------------------------------------------
// Collectives

TEST_CASE("engine: one-to-all and all-to-one over a group in its own order", "[engine]") {
  // Group order differs from world order, and the root is not first.
  const std::vector<Rank> members = ranks({2, 0, 3, 1});
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(5, seed);
    const GroupId g{42};
    sim.register_group_everywhere(g, members);
    // Distinct prior clocks: rank r does r local calls; rank 4 is not a member.
    for (std::uint32_t r = 0; r < 5; ++r)
      for (std::uint32_t k = 0; k < r; ++k) sim.local(r);
    // Rank 4's knowledge reaches rank 1 (a member) before the collectives.
    sim.send(4, 1, kQ);  // rank 4: [0,0,0,0,5]
    sim.recv(1, 4, kQ);  // rank 1: [0,2,0,0,5]

    const CollectiveRef bcast = coll(g, 1, CollectiveKind::OneToAll, Rank{3});
    std::vector<EngineSim::Submitted> b(4);
    for (Rank m : members) b[m.value] = sim.collective(m.value, bcast);
    const CollectiveRef reduce = coll(g, 2, CollectiveKind::AllToOne, Rank{1});
    std::vector<EngineSim::Submitted> red(4);
    for (Rank m : members) red[m.value] = sim.collective(m.value, reduce);
    sim.drain();
    REQUIRE(sim.check_finished() == "");

    // Bcast: every member merges the root's post-tick clock [0,0,0,4,0].
    CHECK(clock_of(sim, 3, b[3].call_index) == Clock{0, 0, 0, 4, 0});
    CHECK(clock_of(sim, 0, b[0].call_index) == Clock{1, 0, 0, 4, 0});
    CHECK(clock_of(sim, 1, b[1].call_index) == Clock{0, 3, 0, 4, 5});
    CHECK(clock_of(sim, 2, b[2].call_index) == Clock{0, 0, 3, 4, 0});
    // Reduce to rank 1: the root merges every member's post-tick clock,
    // the others only tick.
    CHECK(clock_of(sim, 0, red[0].call_index) == Clock{2, 0, 0, 4, 0});
    CHECK(clock_of(sim, 2, red[2].call_index) == Clock{0, 0, 4, 4, 0});
    CHECK(clock_of(sim, 3, red[3].call_index) == Clock{0, 0, 0, 5, 0});
    CHECK(clock_of(sim, 1, red[1].call_index) == Clock{2, 4, 4, 5, 5});
  }
}

namespace {

// A random job: point-to-point traffic and blocking collectives over random,
// overlapping groups, generated as one sequential schedule (so it cannot
// deadlock) and replayed identically under different delivery orders.
struct CollStep {
  std::uint32_t group;  // index into the scenario's groups
  CollectiveRef ref;
};
struct P2PStep {
  std::uint32_t src, dst;
  QueueId q;
  bool sync;
};
struct Step {
  bool is_coll;
  CollStep c;
  P2PStep p;
};
struct Scenario {
  std::uint32_t n;
  std::vector<std::vector<Rank>> groups;
  std::vector<GroupId> ids;
  std::vector<Step> steps;
};

Scenario make_scenario(std::uint64_t seed, std::uint32_t max_n) {
  std::mt19937_64 rng(seed);
  Scenario s;
  s.n = 2 + static_cast<std::uint32_t>(rng() % (max_n - 1));
  const std::uint32_t ngroups = 1 + static_cast<std::uint32_t>(rng() % 4);
  for (std::uint32_t g = 0; g < ngroups; ++g) {
    std::vector<Rank> all = all_ranks(s.n);
    std::shuffle(all.begin(), all.end(), rng);
    const std::size_t size = 1 + rng() % s.n;
    all.resize(size);
    s.groups.push_back(all);
    s.ids.push_back(GroupId{0x1000 + seed * 16 + g});
  }
  std::vector<std::uint64_t> instance(ngroups, 0);
  const int steps = 20 + static_cast<int>(rng() % 30);
  for (int i = 0; i < steps; ++i) {
    Step st{};
    st.is_coll = rng() % 5 < 2;
    if (st.is_coll) {
      const auto g = static_cast<std::uint32_t>(rng() % ngroups);
      const auto& members = s.groups[g];
      const auto kind = static_cast<CollectiveKind>(rng() % 3);
      st.c.group = g;
      st.c.ref = coll(s.ids[g], ++instance[g], kind, members[rng() % members.size()]);
    } else {
      st.p.src = static_cast<std::uint32_t>(rng() % s.n);
      st.p.dst = static_cast<std::uint32_t>(rng() % (s.n - 1));
      if (st.p.dst >= st.p.src) ++st.p.dst;
      st.p.q = rng() % 2 ? kQ : kQ2;
      st.p.sync = rng() % 4 == 0;
    }
    s.steps.push_back(st);
  }
  return s;
}

// Replays the scenario; returns, per step, each participant's call index.
std::vector<std::vector<std::int64_t>> replay(EngineSim& sim, const Scenario& s,
                                              std::uint64_t seed) {
  std::mt19937_64 rng(seed);  // submission interleaving with deliveries
  for (std::size_t g = 0; g < s.groups.size(); ++g)
    sim.register_group_everywhere(s.ids[g], s.groups[g]);
  std::vector<std::vector<std::int64_t>> idx;
  for (const Step& st : s.steps) {
    std::vector<std::int64_t> row(s.n, -1);
    if (st.is_coll) {
      for (Rank m : s.groups[st.c.group])
        row[m.value] = sim.collective(m.value, st.c.ref).call_index;
    } else {
      row[st.p.src] = sim.send(st.p.src, st.p.dst, st.p.q, st.p.sync).call_index;
      row[st.p.dst] = sim.recv(st.p.dst, st.p.src, st.p.q).call_index;
    }
    idx.push_back(row);
    for (int k = static_cast<int>(rng() % 6); k > 0 && sim.step(); --k) {
    }
  }
  return idx;
}

// All-to-all result, computed from the engines' own records: the element-wise
// max of all members' clocks right after their tick (a full max-allreduce).
std::string check_all_to_all(const EngineSim& sim, const Scenario& s,
                             const std::vector<std::vector<std::int64_t>>& idx) {
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    const Step& st = s.steps[i];
    if (!st.is_coll || st.c.ref.kind != CollectiveKind::AllToAll) continue;
    Clock want(s.n, 0);
    for (Rank m : s.groups[st.c.group]) {
      const std::int64_t k = idx[i][m.value];
      Clock before = k == 0 ? Clock(s.n, 0) : sim.calls(m.value).at(k - 1).clock;
      ++before[m.value];
      for (std::uint32_t e = 0; e < s.n; ++e) want[e] = std::max(want[e], before[e]);
    }
    for (Rank m : s.groups[st.c.group]) {
      const Clock& got = sim.calls(m.value).at(idx[i][m.value]).clock;
      if (got != want)
        return "step " + std::to_string(i) + " rank " + std::to_string(m.value) + ": " + str(got) +
               " instead of the max-allreduce " + str(want);
    }
  }
  return "";
}

}  // namespace

TEST_CASE("engine: random collectives over random groups equal a full max-exchange",
          "[engine][collective]") {
  int all_to_all_seen = 0, singles = 0;
  for (std::uint64_t scenario = 1; scenario <= 150; ++scenario) {
    const Scenario s = make_scenario(scenario, 12);
    for (const auto& g : s.groups) singles += g.size() == 1;
    for (const auto& st : s.steps)
      all_to_all_seen += st.is_coll && st.c.ref.kind == CollectiveKind::AllToAll;
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      INFO("scenario " << scenario << " (n=" << s.n << ", " << s.groups.size()
                       << " groups) delivery seed " << seed);
      EngineSim sim(s.n, scenario * 1000 + seed);
      const auto idx = replay(sim, s, seed);
      sim.drain();
      REQUIRE(sim.check_finished() == "");
      REQUIRE(check_all_to_all(sim, s, idx) == "");
    }
  }
  // The generator really produced what this test is about.
  CHECK(all_to_all_seen > 200);
  CHECK(singles > 0);
}

TEST_CASE("engine: blocking all-to-alls over every rank contribute as their calls are queued",
          "[engine][collective]") {
  for (const bool ahead : {true, false}) {
    INFO((ahead ? "default" : "vclock.ahead = 0"));
    Options o;
    if (!ahead) o.set("vclock.ahead", "0");
    EngineSim sim(3, 7, o);
    sim.register_group_everywhere(kWorld, all_ranks(3));
    // Ranks 1 and 2 queue three barriers (rank 2 after a call of its own);
    // their engines do not run.
    sim.local(2);
    for (std::uint64_t k = 1; k <= 3; ++k)
      for (std::uint32_t r : {1u, 2u}) sim.collective(r, coll(kWorld, k));
    // Rank 0, the tree's root, queues the same and runs alone.
    std::vector<EngineSim::Submitted> mine;
    for (std::uint64_t k = 1; k <= 3; ++k) mine.push_back(sim.collective(0, coll(kWorld, k)));
    sim.engine(0).run();
    while (sim.net().deliver_one()) sim.engine(0).run();
    // What ranks 1 and 2 sent as they queued their calls is all rank 0
    // needs: it finishes while they have not run a single call. Without it,
    // rank 0 waits at its first barrier for them.
    CHECK(sim.engine(0).idle() == ahead);
    CHECK_FALSE(sim.engine(1).idle());
    sim.drain();
    REQUIRE(sim.check_finished() == "");
    CHECK(clock_of(sim, 0, mine[2].call_index) == Clock{3, 3, 4});
  }
}

TEST_CASE("engine: at most 256 all-to-alls are contributed ahead of the engine",
          "[engine][collective]") {
  constexpr std::uint64_t kBarriers = 300, kAhead = 256;
  EngineSim sim(2, 3);
  sim.register_group_everywhere(kWorld, all_ranks(2));
  for (std::uint64_t k = 1; k <= kBarriers; ++k) sim.collective(1, coll(kWorld, k));
  for (std::uint64_t k = 1; k <= kBarriers; ++k) sim.collective(0, coll(kWorld, k));
  sim.engine(0).run();
  while (sim.net().deliver_one()) sim.engine(0).run();
  // Rank 1's engine has not run: the root gets as far as its contributions.
  CHECK(sim.engine(0).backlog() == kBarriers - kAhead);
  // As rank 1's engine reaches them, the rest go.
  sim.drain();
  REQUIRE(sim.check_finished() == "");
  CHECK(sim.engine(0).idle());
  CHECK(sim.engine(1).idle());
}

TEST_CASE("engine: overlapping groups with interleaved instances", "[engine][collective]") {
  // Two overlapping groups; instances of both are interleaved differently on
  // the shared members (legal: each group's own order is the same everywhere).
  const GroupId ga{100}, gb{200};
  const std::vector<Rank> a = ranks({0, 1, 2, 3});
  const std::vector<Rank> b = ranks({3, 2, 4, 5});
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(6, seed);
    sim.register_group_everywhere(ga, a);
    sim.register_group_everywhere(gb, b);
    for (std::uint32_t r = 0; r < 6; ++r)
      for (std::uint32_t k = 0; k <= r; ++k) sim.local(r);
    // Ranks 2 and 3 are in both groups and call A#1 and B#1 in opposite
    // orders (B#1 is an all-to-one: non-roots do not wait, so no deadlock).
    for (Rank m : a) {
      if (m.value == 2 || m.value == 3) continue;
      sim.collective(m.value, coll(ga, 1));
      sim.collective(m.value, coll(ga, 2, CollectiveKind::OneToAll, Rank{1}));
    }
    for (Rank m : b) {
      if (m.value == 2 || m.value == 3) continue;
      sim.collective(m.value, coll(gb, 1, CollectiveKind::AllToOne, Rank{4}));
      sim.collective(m.value, coll(gb, 2));
    }
    sim.collective(2, coll(ga, 1));
    sim.collective(2, coll(gb, 1, CollectiveKind::AllToOne, Rank{4}));
    sim.collective(2, coll(ga, 2, CollectiveKind::OneToAll, Rank{1}));
    sim.collective(2, coll(gb, 2));
    sim.collective(3, coll(gb, 1, CollectiveKind::AllToOne, Rank{4}));
    sim.collective(3, coll(ga, 1));
    sim.collective(3, coll(ga, 2, CollectiveKind::OneToAll, Rank{1}));
    sim.collective(3, coll(gb, 2));
    sim.drain();
    REQUIRE(sim.check_finished() == "");
  }
}

TEST_CASE("engine: collective messages that arrive before the group is registered",
          "[engine][collective]") {
  const GroupId g{77};
  const std::vector<Rank> members = ranks({0, 1, 2, 3});
  struct Case {
    const char* name;
    CollectiveKind kind;
    Rank root;
  };
  // Rank 0 is the tree root for all-to-all (position 0), the root of the
  // all-to-one, and a leaf receiving the one-to-all's result from root 1.
  for (const Case c : {Case{"all-to-all", CollectiveKind::AllToAll, Rank{0}},
                       Case{"all-to-one", CollectiveKind::AllToOne, Rank{0}},
                       Case{"one-to-all", CollectiveKind::OneToAll, Rank{1}}}) {
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
      INFO(c.name << " delivery seed " << seed);
      EngineSim sim(4, seed);
      for (std::uint32_t r = 1; r < 4; ++r) {
        sim.register_group(r, g, members);
        sim.local(r);
        sim.collective(r, coll(g, 1, c.kind, c.root));
      }
      const std::uint64_t sent_before = sim.net().sent();
      sim.drain();  // rank 0 receives its messages with the group unknown
      CHECK(sim.net().sent() > sent_before);
      CHECK(sim.engine(0).idle());
      sim.local(0);
      sim.register_group(0, g, members);
      sim.collective(0, coll(g, 1, c.kind, c.root));
      sim.drain();
      REQUIRE(sim.check_finished() == "");
    }
  }
}

TEST_CASE("engine: registering a group again must name the same members", "[engine]") {
  EngineSim sim(3, 1);
  const GroupId g{5};
  sim.register_group(0, g, ranks({0, 1}));
  CHECK_NOTHROW(sim.control(0).register_group(g, ranks({0, 1})));
  CHECK_THROWS_AS(sim.control(0).register_group(g, ranks({0, 2})), SimFatal);
  CHECK_THROWS_AS(sim.control(0).register_group(g, ranks({1, 0})), SimFatal);
}

TEST_CASE("engine: malformed tool messages are fatal, not misread", "[engine]") {
  EngineSim sim(2, 1);
  const std::vector<std::uint8_t> shortmsg{1, 0, 0};  // a Signal header cut short
  sim.net().send(Rank{0}, Rank{1}, ToolPart::Exchange, shortmsg);
  CHECK_THROWS_AS(sim.drain(), SimFatal);
  EngineSim sim2(2, 1);
  // A well-formed header claiming a clock of another width.
  std::vector<std::uint8_t> wide(32 + 3 * 8, 0);
  wide[0] = 1;   // Signal
  wide[4] = 3;   // width 3 in a world of 2
  wide[24] = 1;  // seq 1
  sim2.net().send(Rank{0}, Rank{1}, ToolPart::Exchange, wide);
  CHECK_THROWS_AS(sim2.drain(), SimFatal);
}

TEST_CASE("engine: an all-to-one on a single-member group completes", "[engine][collective]") {
  // E.g. MPI_Reduce on MPI_COMM_SELF: the root has no child to wait for.
  EngineSim sim(2, 1);
  const GroupId self0{9};
  sim.register_group(0, self0, ranks({0}));
  const auto red = sim.collective(0, coll(self0, 1, CollectiveKind::AllToOne, Rank{0}), true);
  sim.drain();
  REQUIRE(sim.engine(0).idle());
  CHECK(clock_of(sim, 0, red.call_index) == Clock{1, 0});
  CHECK(sim.check_finished() == "");
}

// ---------------------------------------------------------------------------
// Known bugs, reproduced: each test states the rule it holds the engine to.

TEST_CASE("engine: a non-blocking all-to-all includes what members learned after contributing",
          "[engine]") {
  // Rank 0 starts the all-to-all, then sends to rank 1, which receives and only
  // then contributes. Rank 2's completion merges rank 1's contribution, which
  // includes rank 0's send: a full max-allreduce gives rank 2 entry 0 = 2.
  // (MPI: every member calls MPI_Ibarrier; contribution and completion are
  // separate calls, so the sparse contribution would lose rank 0's entry.)
  EngineSim sim(3, 1);
  sim.register_group_everywhere(kWorld, all_ranks(3));
  const CollectiveRef c = coll(kWorld, 1);
  sim.submit(0, Prog::clocked_call(31).contribute(c));  // Ibarrier at rank 0: [1,0,0]
  sim.send(0, 1, kQ);                                   // [2,0,0]
  sim.recv(1, 0, kQ);                                   // [2,1,0]
  sim.submit(1, Prog::clocked_call(31).contribute(c));  // contributes [2,2,0]
  sim.submit(1, Prog::clocked_call(32).complete(c));
  sim.submit(2, Prog::clocked_call(31).contribute(c));
  const auto r2 = sim.submit(2, Prog::clocked_call(32).complete(c));
  sim.submit(0, Prog::clocked_call(32).complete(c));
  sim.drain();
  REQUIRE(sim.all_idle());
  // Rank 2 ticked twice (initiation and completion are both clocked).
  CHECK(clock_of(sim, 2, r2.call_index) == Clock{2, 2, 2});
  CHECK(sim.compare_with_reference() == "");
}

TEST_CASE("engine: dropping a bound receive frees its queue position", "[engine]") {
  // A receive bound at posting (specific source and tag) and then cancelled
  // never matches: the next receive on that queue gets the first signal.
  EngineSim sim(2, 1);
  const ReceiveToken cancelled = sim.post(1, 0, kQ);
  const ReceiveToken next = sim.post(1, 0, kQ);
  sim.drop(1, cancelled);
  sim.send(0, 1, kQ);
  const auto w = sim.wait_all(1, {next});
  sim.drain();
  REQUIRE(sim.engine(1).idle());
  CHECK(clock_of(sim, 1, w.call_index) == Clock{1, 1});
}

// ---------------------------------------------------------------------------
// Prefix (scan) and bipartite (intercommunicator) collectives

TEST_CASE("engine: a blocking prefix gives member i the maximum of members 0..i-1",
          "[engine][collective]") {
  // Group order {2, 0, 3, 1}; rank r first makes r + 1 local calls.
  const GroupId g{61};
  const std::vector<Rank> members = ranks({2, 0, 3, 1});
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(4, seed);
    sim.register_group_everywhere(g, members);
    for (std::uint32_t r = 0; r < 4; ++r)
      for (std::uint32_t k = 0; k <= r; ++k) sim.local(r);
    std::vector<EngineSim::Submitted> scan(4);
    for (Rank m : members)
      scan[m.value] = sim.collective(m.value, coll(g, 1, CollectiveKind::Prefix));
    sim.drain();
    REQUIRE(sim.check_finished() == "");
    CHECK(clock_of(sim, 2, scan[2].call_index) == Clock{0, 0, 4, 0});  // first: only ticks
    CHECK(clock_of(sim, 0, scan[0].call_index) == Clock{2, 0, 4, 0});
    CHECK(clock_of(sim, 3, scan[3].call_index) == Clock{2, 0, 4, 5});
    CHECK(clock_of(sim, 1, scan[1].call_index) == Clock{2, 3, 4, 5});
  }
}

TEST_CASE("engine: a bipartite collective gives each side the maximum of the other side",
          "[engine][collective]") {
  // Sides {3, 0} and {4, 1, 2}; rank r first makes r + 1 local calls. Nothing
  // of a member's own side may reach it.
  const GroupId g{62};
  const std::vector<Rank> members = ranks({3, 0, 4, 1, 2});
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(5, seed);
    sim.register_group_everywhere(g, members, 2);
    for (std::uint32_t r = 0; r < 5; ++r)
      for (std::uint32_t k = 0; k <= r; ++k) sim.local(r);
    std::vector<EngineSim::Submitted> b(5);
    for (Rank m : members)
      b[m.value] = sim.collective(m.value, coll(g, 1, CollectiveKind::Bipartite));
    sim.drain();
    REQUIRE(sim.check_finished() == "");
    CHECK(clock_of(sim, 3, b[3].call_index) == Clock{0, 3, 4, 5, 6});
    CHECK(clock_of(sim, 0, b[0].call_index) == Clock{2, 3, 4, 0, 6});
    CHECK(clock_of(sim, 4, b[4].call_index) == Clock{2, 0, 0, 5, 6});
    CHECK(clock_of(sim, 1, b[1].call_index) == Clock{2, 3, 0, 5, 0});
    CHECK(clock_of(sim, 2, b[2].call_index) == Clock{2, 0, 4, 5, 0});
  }
}

namespace {

// Collectives whose members wait for different parts of the group (prefix
// chains, two-sided groups; all-to-all for contrast), blocking or split into
// contribution and completion with traffic in between, generated as one
// sequential schedule so that the replay cannot deadlock.
struct SGroup {
  GroupId id;
  std::vector<Rank> members;
  std::uint32_t second_side = 0;  // 0: one side
};
struct SInstance {
  std::uint32_t group = 0;
  CollectiveRef ref;
  bool blocking = true;
  // Split form, per position: is the contribution / completion a clocked call.
  std::vector<bool> clocked_contribute, clocked_complete;
};
struct SAction {
  enum Kind { Local, P2P, Blocking, Contribute, Complete } kind = Local;
  std::uint32_t rank = 0, dst = 0;  // Local, P2P; Contribute/Complete: position
  QueueId q{};
  bool sync = false;
  std::uint32_t inst = 0;
};
struct SScenario {
  std::uint32_t n = 0;
  std::vector<SGroup> groups;
  std::vector<SInstance> instances;
  std::vector<SAction> actions;
};
struct Mix {
  bool prefix = false, bipartite = false, all_to_all = false;
  bool blocking = false, split = false;
};

// Positions whose signal parts the member at `pos` merges.
std::vector<std::size_t> waits_for(const SGroup& g, CollectiveKind k, std::size_t pos) {
  std::vector<std::size_t> out;
  const std::size_t n = g.members.size();
  switch (k) {
    case CollectiveKind::Prefix:
      for (std::size_t i = 0; i < pos; ++i) out.push_back(i);
      break;
    case CollectiveKind::Bipartite: {
      const bool first = pos < g.second_side;
      for (std::size_t i = first ? g.second_side : 0; i < (first ? n : g.second_side); ++i)
        out.push_back(i);
      break;
    }
    default:
      for (std::size_t i = 0; i < n; ++i) out.push_back(i);
      break;
  }
  return out;
}

SScenario make_structured(std::uint64_t seed, std::uint32_t max_n, const Mix& mix) {
  std::mt19937_64 rng(seed);
  SScenario s;
  s.n = 2 + static_cast<std::uint32_t>(rng() % (max_n - 1));
  const bool one_sided = mix.prefix || mix.all_to_all;
  const std::uint32_t ngroups = 1 + static_cast<std::uint32_t>(rng() % 4);
  for (std::uint32_t gi = 0; gi < ngroups; ++gi) {
    std::vector<Rank> all = all_ranks(s.n);
    std::shuffle(all.begin(), all.end(), rng);
    SGroup g;
    g.id = GroupId{0x5000 + seed * 16 + gi};
    if (mix.bipartite && (!one_sided || rng() % 2)) {
      const std::size_t total = 2 + rng() % (s.n - 1);  // both sides non-empty
      all.resize(total);
      g.second_side = 1 + static_cast<std::uint32_t>(rng() % (total - 1));
    } else {
      all.resize(1 + rng() % s.n);
    }
    g.members = all;
    s.groups.push_back(g);
  }
  std::vector<std::uint64_t> instance_no(ngroups, 0);
  std::vector<std::int64_t> open(ngroups, -1);  // the group's split instance in progress
  std::vector<std::vector<bool>> contributed, completed;

  auto ready = [&](std::size_t i, std::size_t pos) {
    const SInstance& in = s.instances[i];
    if (!contributed[i][pos] || completed[i][pos]) return false;
    for (std::size_t j : waits_for(s.groups[in.group], in.ref.kind, pos))
      if (!contributed[i][j]) return false;
    return true;
  };
  auto pick = [&](bool completing) -> std::optional<std::pair<std::size_t, std::size_t>> {
    std::vector<std::pair<std::size_t, std::size_t>> c;
    for (std::uint32_t gi = 0; gi < ngroups; ++gi) {
      if (open[gi] < 0) continue;
      const auto i = static_cast<std::size_t>(open[gi]);
      for (std::size_t pos = 0; pos < s.groups[gi].members.size(); ++pos)
        if (completing ? ready(i, pos) : !contributed[i][pos]) c.emplace_back(i, pos);
    }
    if (c.empty()) return std::nullopt;
    return c[rng() % c.size()];
  };
  auto emit = [&](SAction::Kind kind, std::size_t i, std::size_t pos) {
    SAction a;
    a.kind = kind;
    a.inst = static_cast<std::uint32_t>(i);
    a.rank = static_cast<std::uint32_t>(pos);
    s.actions.push_back(a);
    (kind == SAction::Contribute ? contributed : completed)[i][pos] = true;
    const SInstance& in = s.instances[i];
    bool all_done = true;
    for (bool d : completed[i]) all_done = all_done && d;
    if (all_done) open[in.group] = -1;
  };

  const int steps = 30 + static_cast<int>(rng() % 30);
  for (int step = 0; step < steps; ++step) {
    const auto choice = rng() % 10;
    if (choice < 3) {
      SAction a;
      a.kind = SAction::P2P;
      a.rank = static_cast<std::uint32_t>(rng() % s.n);
      a.dst = static_cast<std::uint32_t>(rng() % (s.n - 1));
      if (a.dst >= a.rank) ++a.dst;
      a.q = rng() % 2 ? kQ : kQ2;
      a.sync = rng() % 4 == 0;
      s.actions.push_back(a);
    } else if (choice < 4) {
      SAction a;
      a.kind = SAction::Local;
      a.rank = static_cast<std::uint32_t>(rng() % s.n);
      s.actions.push_back(a);
    } else if (choice < 6) {
      const auto gi = static_cast<std::uint32_t>(rng() % ngroups);
      if (open[gi] >= 0) continue;  // one instance in progress per group
      const SGroup& g = s.groups[gi];
      CollectiveKind kind = CollectiveKind::Bipartite;
      if (g.second_side == 0) {
        const bool prefix = mix.prefix && (!mix.all_to_all || rng() % 2);
        kind = prefix ? CollectiveKind::Prefix : CollectiveKind::AllToAll;
      }
      SInstance in;
      in.group = gi;
      in.ref = coll(g.id, ++instance_no[gi], kind);
      in.blocking = mix.blocking && (!mix.split || rng() % 2);
      const std::size_t n = g.members.size();
      for (std::size_t pos = 0; pos < n; ++pos) {
        // A prefix's last member signals nobody and its first waits for
        // nobody: their parts may be unclocked, as the MPI translator makes
        // them for non-blocking scans.
        const bool prefix = kind == CollectiveKind::Prefix;
        in.clocked_contribute.push_back(!(prefix && pos + 1 == n && rng() % 2));
        in.clocked_complete.push_back(!(prefix && pos == 0 && rng() % 2));
      }
      s.instances.push_back(in);
      contributed.emplace_back(n, false);
      completed.emplace_back(n, false);
      const std::size_t i = s.instances.size() - 1;
      if (in.blocking) {
        SAction a;
        a.kind = SAction::Blocking;
        a.inst = static_cast<std::uint32_t>(i);
        s.actions.push_back(a);
        contributed[i].assign(n, true);
        completed[i].assign(n, true);
      } else {
        open[gi] = static_cast<std::int64_t>(i);
      }
    } else if (choice < 8) {
      if (auto c = pick(false)) emit(SAction::Contribute, c->first, c->second);
    } else {
      if (auto c = pick(true)) emit(SAction::Complete, c->first, c->second);
    }
  }
  // Settle what is still open: every contribution, then every completion.
  while (auto c = pick(false)) emit(SAction::Contribute, c->first, c->second);
  while (auto c = pick(true)) emit(SAction::Complete, c->first, c->second);
  return s;
}

struct SIndices {
  // Per instance and position: the call index of the contribution and of the
  // completion (-1 when unclocked); one call for a blocking collective.
  std::vector<std::vector<std::int64_t>> contribute, complete;
};

SIndices replay_structured(EngineSim& sim, const SScenario& s, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (const SGroup& g : s.groups) sim.register_group_everywhere(g.id, g.members, g.second_side);
  SIndices idx;
  for (const SInstance& in : s.instances) {
    idx.contribute.emplace_back(s.groups[in.group].members.size(), -1);
    idx.complete.emplace_back(s.groups[in.group].members.size(), -1);
  }
  for (const SAction& a : s.actions) {
    switch (a.kind) {
      case SAction::Local:
        sim.local(a.rank);
        break;
      case SAction::P2P:
        sim.send(a.rank, a.dst, a.q, a.sync);
        sim.recv(a.dst, a.rank, a.q);
        break;
      case SAction::Blocking: {
        const SInstance& in = s.instances[a.inst];
        const SGroup& g = s.groups[in.group];
        for (std::size_t pos = 0; pos < g.members.size(); ++pos) {
          const auto k = sim.collective(g.members[pos].value, in.ref).call_index;
          idx.contribute[a.inst][pos] = idx.complete[a.inst][pos] = k;
        }
        break;
      }
      case SAction::Contribute:
      case SAction::Complete: {
        const SInstance& in = s.instances[a.inst];
        const std::uint32_t m = s.groups[in.group].members[a.rank].value;
        const bool contrib = a.kind == SAction::Contribute;
        const bool clocked = contrib ? in.clocked_contribute[a.rank] : in.clocked_complete[a.rank];
        Prog p =
            clocked ? Prog::clocked_call(contrib ? 31 : 32) : Prog::unclocked(contrib ? 31 : 32);
        if (contrib)
          p.contribute(in.ref);
        else
          p.complete(in.ref);
        (contrib ? idx.contribute : idx.complete)[a.inst][a.rank] = sim.submit(m, p).call_index;
        break;
      }
    }
    for (int k = static_cast<int>(rng() % 6); k > 0 && sim.step(); --k) {
    }
  }
  return idx;
}

// The rule, computed from the engines' own records: a completion's clock is
// the member's clock after its tick merged with the clocks of the members it
// waits for as they were at their signal parts.
std::string check_structured(const EngineSim& sim, const SScenario& s, const SIndices& idx) {
  const auto before_tick = [&](std::uint32_t m, std::int64_t k) {
    Clock c = k == 0 ? Clock(s.n, 0) : sim.calls(m).at(static_cast<std::size_t>(k - 1)).clock;
    ++c[m];
    return c;
  };
  for (std::size_t i = 0; i < s.instances.size(); ++i) {
    const SInstance& in = s.instances[i];
    const SGroup& g = s.groups[in.group];
    std::vector<std::optional<Clock>> signal(g.members.size());
    for (std::size_t pos = 0; pos < g.members.size(); ++pos) {
      const std::uint32_t m = g.members[pos].value;
      const std::int64_t k = idx.contribute[i][pos];
      if (k < 0) continue;
      signal[pos] =
          in.blocking ? before_tick(m, k) : sim.calls(m).at(static_cast<std::size_t>(k)).clock;
    }
    for (std::size_t pos = 0; pos < g.members.size(); ++pos) {
      const std::uint32_t m = g.members[pos].value;
      const std::int64_t k = idx.complete[i][pos];
      if (k < 0) continue;
      Clock want = before_tick(m, k);
      for (std::size_t j : waits_for(g, in.ref.kind, pos)) {
        if (!signal[j]) return "instance " + std::to_string(i) + ": a waited-for part is unclocked";
        for (std::uint32_t e = 0; e < s.n; ++e) want[e] = std::max(want[e], (*signal[j])[e]);
      }
      const Clock& got = sim.calls(m).at(static_cast<std::size_t>(k)).clock;
      if (got != want)
        return "instance " + std::to_string(i) + " (kind " +
               std::to_string(static_cast<int>(in.ref.kind)) + ") position " + std::to_string(pos) +
               " rank " + std::to_string(m) + ": " + str(got) + " instead of " + str(want);
    }
  }
  return "";
}

void run_structured(const Mix& mix, std::uint64_t scenarios, std::uint64_t seeds,
                    std::uint32_t max_n, int& instances_seen) {
  for (std::uint64_t scenario = 1; scenario <= scenarios; ++scenario) {
    const SScenario s = make_structured(scenario, max_n, mix);
    instances_seen += static_cast<int>(s.instances.size());
    for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
      INFO("scenario " << scenario << " (n=" << s.n << ", " << s.groups.size() << " groups, "
                       << s.instances.size() << " collectives) delivery seed " << seed);
      EngineSim sim(s.n, scenario * 1000 + seed);
      const SIndices idx = replay_structured(sim, s, seed);
      sim.drain();
      REQUIRE(sim.check_finished() == "");
      REQUIRE(check_structured(sim, s, idx) == "");
    }
  }
}

}  // namespace

TEST_CASE("engine: random blocking prefix collectives over random groups", "[engine][collective]") {
  int seen = 0;
  run_structured(Mix{.prefix = true, .blocking = true}, 60, 3, 10, seen);
  CHECK(seen > 150);
}

TEST_CASE("engine: random split prefix collectives, traffic between contribution and completion",
          "[engine][collective]") {
  int seen = 0;
  run_structured(Mix{.prefix = true, .split = true}, 60, 3, 10, seen);
  CHECK(seen > 150);
}

TEST_CASE("engine: random bipartite collectives over random two-sided groups",
          "[engine][collective]") {
  int seen = 0;
  run_structured(Mix{.bipartite = true, .blocking = true, .split = true}, 60, 3, 10, seen);
  CHECK(seen > 150);
}

TEST_CASE("engine: prefix, bipartite and all-to-all mixed, blocking and split",
          "[engine][collective]") {
  int seen = 0;
  run_structured(
      Mix{.prefix = true, .bipartite = true, .all_to_all = true, .blocking = true, .split = true},
      40, 3, 12, seen);
  CHECK(seen > 100);
}

TEST_CASE("engine: prefix and bipartite messages that arrive before the group is registered",
          "[engine][collective]") {
  const GroupId g{78};
  struct Case {
    const char* name;
    CollectiveKind kind;
    std::vector<Rank> members;
    std::uint32_t second_side;
    std::uint32_t late;  // the rank that registers the group last
  };
  // Prefix: the late rank is in the middle of the chain (it receives from
  // below and must pass on); bipartite: it is the first member of a side,
  // which receives its side's total and the other side's.
  for (const Case& c : {Case{"prefix", CollectiveKind::Prefix, ranks({3, 0, 2, 1}), 0, 0},
                        Case{"bipartite", CollectiveKind::Bipartite, ranks({1, 3, 0, 2}), 2, 0}}) {
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
      INFO(c.name << " delivery seed " << seed);
      EngineSim sim(4, seed);
      for (Rank m : c.members) {
        if (m.value == c.late) continue;
        sim.register_group(m.value, g, c.members, c.second_side);
        sim.local(m.value);
        sim.collective(m.value, coll(g, 1, c.kind));
      }
      sim.drain();
      CHECK(sim.engine(c.late).idle());
      sim.local(c.late);
      sim.register_group(c.late, g, c.members, c.second_side);
      sim.collective(c.late, coll(g, 1, c.kind));
      sim.drain();
      REQUIRE(sim.check_finished() == "");
    }
  }
}

TEST_CASE("engine: a two-sided collective on a one-sided group is fatal", "[engine][collective]") {
  EngineSim sim(2, 1);
  const GroupId g{79};
  sim.register_group_everywhere(g, ranks({0, 1}));
  sim.collective(0, coll(g, 1, CollectiveKind::Bipartite));
  CHECK_THROWS_AS(sim.run_all(), SimFatal);
}

TEST_CASE("engine: registering a two-sided group again must name the same sides", "[engine]") {
  EngineSim sim(3, 1);
  const GroupId g{80};
  sim.register_group(0, g, ranks({0, 1, 2}), 1);
  CHECK_NOTHROW(sim.control(0).register_group(g, ranks({0, 1, 2}), 1));
  CHECK_THROWS_AS(sim.control(0).register_group(g, ranks({0, 1, 2}), 2), SimFatal);
  CHECK_THROWS_AS(sim.control(0).register_group(g, ranks({0, 1, 2})), SimFatal);
}

// ---------------------------------------------------------------------------
// Receives without an answer to give; the sparse all-to-all

TEST_CASE("engine: neighbour-style receives need no snapshot and release everything", "[engine]") {
  // A neighbourhood exchange as the MPI translator maps it: per instance a
  // queue of its own, a signal per out-edge, a receive per in-edge created
  // with new_receive(false) and bound at once, waited for at completion. The
  // edge 0 -> 2 is listed twice: two signals, two receives.
  constexpr std::uint32_t n = 4;
  const std::vector<std::vector<std::uint32_t>> out_edges{{1, 2, 2}, {2}, {3}, {0}};
  std::vector<std::vector<std::uint32_t>> in_edges(n);
  for (std::uint32_t r = 0; r < n; ++r)
    for (std::uint32_t d : out_edges[r]) in_edges[d].push_back(r);
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(n, seed);
    std::mt19937_64 rng(seed);
    for (std::uint64_t instance = 1; instance <= 3; ++instance) {
      const QueueId q{0xbeef, (std::uint64_t{1} << 40) | instance};
      std::vector<std::vector<ReceiveToken>> receives(n);
      for (std::uint32_t r = 0; r < n; ++r) {
        Prog init = Prog::clocked_call(50);
        for (std::uint32_t d : out_edges[r]) init.signal(Rank{d}, q, sim.reserve_send(r, d, q).seq);
        for (std::uint32_t s : in_edges[r]) {
          const ReceiveToken t = sim.new_receive(r, /*answers_synchronous=*/false);
          sim.bind(r, t, s, q);
          receives[r].push_back(t);
        }
        sim.submit(r, init);
        if (rng() % 2) sim.local(r);
      }
      for (int k = static_cast<int>(rng() % 8); k > 0 && sim.step(); --k) {
      }
      for (std::uint32_t r = 0; r < n; ++r) {
        std::shuffle(receives[r].begin(), receives[r].end(), rng);
        sim.wait_all(r, receives[r], rng() % 2);
      }
    }
    sim.drain();
    REQUIRE(sim.check_finished() == "");  // includes: no receive or clock left behind
    // Rank 2 merged both of rank 0's signals and rank 1's.
    CHECK(sim.calls(2).back().clock[0] > 0);
    CHECK(sim.calls(2).back().clock[1] > 0);
  }
}

TEST_CASE("engine: a neighbour-style receive is released whether its signal comes first or last",
          "[engine]") {
  const QueueId q{0xbeef, 1};
  SECTION("signal before the bind") {
    EngineSim sim(2, 1);
    sim.send(0, 1, q);
    sim.drain();
    const ReceiveToken t = sim.new_receive(1, false);
    sim.bind(1, t, 0, q);
    const auto w = sim.wait_all(1, {t});
    sim.drain();
    REQUIRE(sim.check_finished() == "");
    CHECK(clock_of(sim, 1, w.call_index) == Clock{1, 1});
  }
  SECTION("wait before the signal") {
    EngineSim sim(2, 1);
    const ReceiveToken t = sim.new_receive(1, false);
    sim.bind(1, t, 0, q);
    const auto w = sim.wait_all(1, {t}, true);
    sim.drain();
    CHECK_FALSE(sim.engine(1).idle());
    CHECK_FALSE(sim.engine(1).must_not_stall());  // bound: the signal will come
    sim.send(0, 1, q);
    sim.drain();
    REQUIRE(sim.check_finished() == "");
    CHECK(clock_of(sim, 1, w.call_index) == Clock{1, 1});
  }
}

TEST_CASE("engine: only a contribution marked blocking is sparse", "[engine][collective]") {
  // The scenario of the non-blocking all-to-all test above: rank 1 learns of
  // rank 0's send after rank 0 contributed and before contributing itself. A
  // full contribution carries rank 0's entry 2 on to rank 2; a sparse one
  // (own entry and non-members' only) does not. Marking rank 1's split
  // contribution blocking, which is untrue here, shows which path the engine
  // took: a real blocking collective cannot tell the two apart.
  for (const bool marked : {false, true}) {
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
      INFO((marked ? "marked blocking" : "not marked") << ", delivery seed " << seed);
      EngineSim sim(3, seed);
      sim.register_group_everywhere(kWorld, all_ranks(3));
      const CollectiveRef c = coll(kWorld, 1);
      const std::uint16_t flags = marked ? kCollectiveBlocking : 0;
      sim.submit(0, Prog::clocked_call(31).contribute(c));         // [1,0,0]
      sim.send(0, 1, kQ);                                          // [2,0,0]
      sim.recv(1, 0, kQ);                                          // [2,1,0]
      sim.submit(1, Prog::clocked_call(31).contribute(c, flags));  // [2,2,0]
      sim.submit(1, Prog::clocked_call(32).complete(c));
      sim.submit(2, Prog::clocked_call(31).contribute(c));
      const auto r2 = sim.submit(2, Prog::clocked_call(32).complete(c));
      sim.submit(0, Prog::clocked_call(32).complete(c));
      sim.drain();
      REQUIRE(sim.all_idle());
      CHECK(sim.check_no_leaks() == "");
      if (marked) {
        CHECK(clock_of(sim, 2, r2.call_index) == Clock{1, 2, 2});
      } else {
        CHECK(clock_of(sim, 2, r2.call_index) == Clock{2, 2, 2});
        CHECK(sim.compare_with_reference() == "");
      }
    }
  }
}

TEST_CASE("engine: a truly blocking all-to-all is exact with the sparse contribution",
          "[engine][collective]") {
  // Members that learned of each other and of a non-member before the
  // collective: the sparse contributions still give the full maximum.
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(4, seed);
    const GroupId g{90};
    sim.register_group_everywhere(g, ranks({2, 0, 1}));
    sim.local(3);
    sim.send(3, 0, kQ);  // rank 3 is no member; rank 0 carries its entry
    sim.recv(0, 3, kQ);
    sim.send(0, 1, kQ);
    sim.recv(1, 0, kQ);
    std::vector<EngineSim::Submitted> b(3);
    for (std::uint32_t r = 0; r < 3; ++r) b[r] = sim.collective(r, coll(g, 1));
    sim.drain();
    REQUIRE(sim.check_finished() == "");
    for (std::uint32_t r = 0; r < 3; ++r)
      CHECK(clock_of(sim, r, b[r].call_index) == Clock{3, 2, 1, 2});
  }
}

// ---------------------------------------------------------------------------
// Differential clocks (clock_baselines.h): the same clocks, fewer bytes

namespace {

struct WireCount {
  std::size_t clocks = 0, keeping = 0, deltas = 0, offers = 0, declines = 0, aside = 0;
  std::size_t clock_bytes = 0;
  std::uint32_t most_held = 0;  // baselines held by one engine at the end
};

// Runs rounds of sends from every rank to every other one and all-to-alls
// on the world, with engines given `diff_bytes`, and counts what crossed
// the wire. The reference model checks every clock.
WireCount run_traffic(std::uint32_t n, std::uint64_t seed, std::uint64_t diff_bytes) {
  Options o;
  o.set("vclock.diff-bytes", std::to_string(diff_bytes));
  EngineSim sim(n, seed, o);
  WireCount w;
  sim.net().set_tap([&](bool delivered, Rank, Rank, ToolPart part,
                        std::span<const std::uint8_t> bytes) {
    if (delivered || part != ToolPart::Exchange) return;
    const auto type = static_cast<vclock::MsgType>(bytes[0]);
    if (type == vclock::MsgType::DiffOffer) ++w.offers;
    if (type == vclock::MsgType::DiffDecline) ++w.declines;
    const bool coll = type == vclock::MsgType::CollUp || type == vclock::MsgType::CollDown ||
                      type == vclock::MsgType::CollCross;
    const std::uint8_t encoding = bytes[coll ? 2 : 1];
    const std::size_t header = coll ? sizeof(vclock::CollHeader) : sizeof(vclock::P2PHeader);
    if (bytes.size() == header) return;  // no clock
    ++w.clocks;
    w.clock_bytes += bytes.size() - header;
    w.keeping += (encoding & vclock::kEncodingKeep) != 0;
    w.aside += (encoding & vclock::kEncodingAside) != 0;
    w.deltas += (encoding & vclock::kEncodingDelta) != 0;
  });
  sim.register_group_everywhere(kWorld, all_ranks(n));
  std::mt19937_64 rng(seed);
  for (std::uint64_t round = 1; round <= 6; ++round) {
    for (std::uint32_t s = 0; s < n; ++s)
      for (std::uint32_t d = 0; d < n; ++d)
        if (s != d) sim.isend(s, d, kQ);
    for (std::uint32_t d = 0; d < n; ++d) {
      std::vector<std::uint32_t> from;
      for (std::uint32_t s = 0; s < n; ++s)
        if (s != d) from.push_back(s);
      std::shuffle(from.begin(), from.end(), rng);
      for (std::uint32_t s : from) sim.recv(d, s, kQ);
      if (rng() % 2) sim.local(d);
    }
    for (std::uint32_t r = 0; r < n; ++r)
      sim.collective(r, coll(kWorld, round, CollectiveKind::AllToAll, Rank{0}));
    for (int k = static_cast<int>(rng() % 50); k > 0 && sim.step(); --k) {
    }
  }
  sim.drain();
  const std::string problem = sim.check_finished();
  if (!problem.empty()) throw std::runtime_error(problem);
  for (std::uint32_t r = 0; r < n; ++r)
    w.most_held = std::max(
        w.most_held,
        static_cast<const vclock::VclockEngine&>(sim.engine(r)).baselines().baselines_held());
  return w;
}

}  // namespace

TEST_CASE("engine: differential clocks change no clock, and send fewer bytes",
          "[engine][diff]") {
  constexpr std::uint32_t n = 5;
  const std::uint64_t baseline = n * sizeof(ClockValue);
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    INFO("seed " << seed);
    const WireCount off = run_traffic(n, seed, 0);
    CHECK(off.keeping == 0);
    CHECK(off.offers == 0);
    // The all-to-alls' contributions leave as their calls are queued, out of
    // program order: aside, keeping nothing, whatever the budget.
    CHECK(off.aside == 6 * (n - 1));

    const WireCount all = run_traffic(n, seed, vclock::kDefaultDiffBytes);
    CHECK(all.clocks == off.clocks);
    // Every pair keeps from its first clock, except what goes aside.
    CHECK(all.aside == off.aside);
    CHECK(all.keeping + all.aside == all.clocks);
    CHECK(all.offers == 0);
    CHECK(all.deltas > 0);
    CHECK(all.clock_bytes < off.clock_bytes);

    // One room each way: every engine offers to the first peer it hears
    // from; an engine offered by several takes one and declines the rest.
    const WireCount one = run_traffic(n, seed, 2 * baseline);
    CHECK(one.clocks == off.clocks);
    CHECK(one.offers >= 1);
    CHECK(one.offers <= n + one.declines);  // a declined room is offered again
    CHECK(one.declines < one.offers);
    CHECK(one.most_held <= 2);
    CHECK(all.most_held == 2 * (n - 1));
    CHECK(one.keeping > 0);
    CHECK(one.keeping < one.clocks);
    CHECK(one.clock_bytes <= off.clock_bytes);
  }
}


TEST_CASE("engine: clocks that break the differential protocol are fatal, with one clear reason",
          "[engine][diff]") {
  // A whole clock that keeps, to an engine that keeps nothing: the tools run
  // with different budgets.
  Options off;
  off.set("vclock.diff-bytes", "0");
  EngineSim sim(2, 1, off);
  std::vector<std::uint8_t> keeps(32 + 2 * 4, 0);
  keeps[0] = static_cast<std::uint8_t>(vclock::MsgType::Signal);
  keeps[1] = static_cast<std::uint8_t>(vclock::ClockEncoding::Dense32) | vclock::kEncodingKeep;
  keeps[4] = 2;   // width
  keeps[24] = 1;  // seq 1
  sim.net().send(Rank{0}, Rank{1}, ToolPart::Exchange, keeps);
  CHECK_THROWS_WITH(sim.drain(), Contains("same vclock.diff-bytes"));

  // A delta to an engine that keeps every pair's baseline is fine; a plain
  // clock is not (the sender keeps nothing).
  Options all;
  all.set("vclock.diff-bytes", std::to_string(vclock::kDefaultDiffBytes));
  EngineSim sim2(2, 1, all);
  std::vector<std::uint8_t> plain = keeps;
  plain[1] = static_cast<std::uint8_t>(vclock::ClockEncoding::Dense32);
  sim2.net().send(Rank{0}, Rank{1}, ToolPart::Exchange, plain);
  CHECK_THROWS_WITH(sim2.drain(), Contains("same vclock.diff-bytes"));

  // A DiffDecline for an offer never made.
  EngineSim sim3(2, 1, all);
  std::vector<std::uint8_t> decline(32, 0);
  decline[0] = static_cast<std::uint8_t>(vclock::MsgType::DiffDecline);
  sim3.net().send(Rank{0}, Rank{1}, ToolPart::Exchange, decline);
  CHECK_THROWS_WITH(sim3.drain(), Contains("DiffDecline"));
}
