// PointToPoint alone (engines/vclock/point_to_point.h): receives bound to
// queue positions, signals merged at their position, answers to synchronous
// senders from the receive's snapshot, and the rules that move positions
// (dropped and held receives) and order answers (MPI's receive order). The
// expected clocks follow from the rules, over a recording outbox.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "point_to_point.h"
#include "support/recording_outbox.h"

namespace {

using vcx::ClockValue;
using vcx::QueueId;
using vcx::Rank;
using vcx::ReceiveToken;
using vcx::VectorClock;
using vcx::test::PartFatal;
using vcx::test::RecordingOutbox;
using vcx::vclock::ClockPool;
using vcx::vclock::MsgType;
using vcx::vclock::P2PHeader;
using vcx::vclock::PointToPoint;
using Clock = std::vector<ClockValue>;

constexpr std::uint32_t kWidth = 4;
constexpr QueueId kQueue{7, 0};

struct Rig {
  ClockPool pool{kWidth};
  RecordingOutbox out{kWidth};
  PointToPoint p2p{pool, out};
  VectorClock clock{kWidth};

  void signal(Rank src, std::uint64_t seq, const Clock& c, bool synchronous = false,
              QueueId q = kQueue) {
    P2PHeader h{};
    h.type = MsgType::Signal;
    h.flags = synchronous ? vcx::kSignalSynchronous : 0;
    h.queue_a = q.a;
    h.queue_b = q.b;
    h.seq = seq;
    p2p.on_signal(src, h, pool.take_copy(c));
  }
  void ack(Rank src, std::uint64_t seq, const Clock& c) {
    P2PHeader h{};
    h.type = MsgType::Ack;
    h.queue_a = kQueue.a;
    h.queue_b = kQueue.b;
    h.seq = seq;
    p2p.on_ack(src, h, pool.take_copy(c));
  }
  void need_ack(Rank src, std::uint64_t seq) {
    P2PHeader h{};
    h.type = MsgType::NeedAck;
    h.queue_a = kQueue.a;
    h.queue_b = kQueue.b;
    h.seq = seq;
    p2p.on_need_ack(src, h);
  }
  ReceiveToken bound(Rank src, bool answers_synchronous = false) {
    const ReceiveToken t = p2p.new_receive(answers_synchronous);
    p2p.bind_receive(t, src, kQueue);
    return t;
  }
  bool wait(ReceiveToken t, PointToPoint::Matched* m = nullptr) {
    PointToPoint::Matched matched;
    const bool done = p2p.wait(t.value, clock, matched);
    if (m) *m = matched;
    return done;
  }
  Clock now() const { return Clock(clock.view().begin(), clock.view().end()); }
};

Clock join(const Clock& a, const Clock& b) {
  Clock c(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) c[i] = std::max(a[i], b[i]);
  return c;
}

class Pending final : public vcx::PendingReceives {
 public:
  bool could_bind_later(Rank, QueueId) const override { return pending; }
  bool pending = false;
};

}  // namespace

TEST_CASE("p2p: the n-th receive bound on a queue merges the n-th signal sent on it",
          "[vclock-parts][p2p]") {
  Rig rig;
  const ReceiveToken first = rig.bound(Rank{1});
  const ReceiveToken second = rig.bound(Rank{1});
  CHECK_FALSE(rig.wait(second));  // nothing arrived

  const Clock s2{0, 5, 0, 0}, s1{0, 3, 1, 0};
  rig.signal(Rank{1}, 2, s2);
  PointToPoint::Matched m;
  REQUIRE(rig.wait(second, &m));
  CHECK(rig.now() == s2);
  CHECK(m.message);
  CHECK(m.peer == Rank{1});
  CHECK(m.queue == kQueue);
  CHECK(m.pos == 2);

  CHECK_FALSE(rig.wait(first));
  rig.signal(Rank{1}, 1, s1);
  REQUIRE(rig.wait(first, &m));
  CHECK(m.pos == 1);
  CHECK(rig.now() == join(s1, s2));
  // Non-synchronous signals are never answered.
  CHECK(rig.out.sent.empty());
  CHECK(rig.p2p.live_receives() == 0);
  CHECK(rig.pool.in_use() == 0);
}

TEST_CASE("p2p: sends are numbered from 1 per peer and queue", "[vclock-parts][p2p]") {
  Rig rig;
  // More queues than the engine's cache of recent queues, interleaved.
  for (std::uint64_t round = 1; round <= 3; ++round)
    for (std::uint32_t peer = 0; peer < 3; ++peer)
      for (std::uint64_t q = 0; q < 6; ++q) {
        const vcx::SendToken t = rig.p2p.reserve_send(Rank{peer}, QueueId{q, q + 1});
        CHECK(t.dst == Rank{peer});
        CHECK(t.queue == QueueId{q, q + 1});
        CHECK(t.seq == round);
      }
}

TEST_CASE("p2p: a synchronous sender is answered with the receive's snapshot",
          "[vclock-parts][p2p]") {
  const Clock posted{1, 0, 0, 2}, sent{0, 0, 4, 0};
  SECTION("snapshot first") {
    Rig rig;
    const ReceiveToken r = rig.bound(Rank{2}, true);
    rig.p2p.snapshot(r.value, posted);
    CHECK(rig.out.sent.empty());  // nothing to answer yet
    rig.signal(Rank{2}, 1, sent, true);
    const auto acks = rig.out.of(MsgType::Ack);
    REQUIRE(acks.size() == 1);
    CHECK(acks[0].dst == Rank{2});
    CHECK(acks[0].queue == kQueue);
    CHECK(acks[0].seq == 1);
    CHECK(acks[0].clock == posted);
    REQUIRE(rig.wait(r));
    CHECK(rig.now() == sent);
    CHECK(rig.pool.in_use() == 0);
  }
  SECTION("signal first") {
    Rig rig;
    const ReceiveToken r = rig.bound(Rank{2}, true);
    rig.signal(Rank{2}, 1, sent, true);
    CHECK(rig.out.of(MsgType::Ack).empty());  // the posting clock is not known yet
    rig.p2p.snapshot(r.value, posted);
    const auto acks = rig.out.of(MsgType::Ack);
    REQUIRE(acks.size() == 1);
    CHECK(acks[0].clock == posted);
    REQUIRE(rig.wait(r));
    CHECK(rig.p2p.live_receives() == 0);
    CHECK(rig.pool.in_use() == 0);
  }
}

TEST_CASE("p2p: a send waits for its answer, asking for it once", "[vclock-parts][p2p]") {
  Rig rig;
  bool asked = false;
  CHECK_FALSE(rig.p2p.wait_ack(Rank{3}, kQueue, 1, asked, rig.clock));
  CHECK_FALSE(rig.p2p.wait_ack(Rank{3}, kQueue, 1, asked, rig.clock));
  const auto asks = rig.out.of(MsgType::NeedAck);
  REQUIRE(asks.size() == 1);
  CHECK(asks[0].dst == Rank{3});
  CHECK(asks[0].seq == 1);
  CHECK_FALSE(asks[0].clock.has_value());

  P2PHeader deferred{};
  deferred.queue_a = kQueue.a;
  deferred.seq = 1;
  rig.p2p.on_deferred(Rank{3}, deferred);
  CHECK(rig.p2p.answer_deferred(Rank{3}, kQueue, 1));
  CHECK_FALSE(rig.p2p.answer_deferred(Rank{3}, kQueue, 2));

  const Clock answer{0, 1, 0, 9};
  rig.ack(Rank{3}, 1, answer);
  REQUIRE(rig.p2p.wait_ack(Rank{3}, kQueue, 1, asked, rig.clock));
  CHECK(rig.now() == answer);
  CHECK_FALSE(rig.p2p.answer_deferred(Rank{3}, kQueue, 1));
  CHECK(rig.pool.in_use() == 0);
}

TEST_CASE("p2p: an answer that only a receive not bound yet can give is deferred",
          "[vclock-parts][p2p]") {
  Rig rig;
  Pending pending;
  rig.p2p.add_pending_receives(&pending);

  // Nothing pending: the sender simply waits for the receive.
  rig.need_ack(Rank{1}, 1);
  CHECK(rig.out.of(MsgType::Deferred).empty());
  CHECK_FALSE(rig.p2p.defers_answers());

  // A receive that may still be bound there appears: the sender is told.
  pending.pending = true;
  rig.p2p.recheck_deferrals();
  auto deferred = rig.out.of(MsgType::Deferred);
  REQUIRE(deferred.size() == 1);
  CHECK(deferred[0].dst == Rank{1});
  CHECK(deferred[0].seq == 1);
  CHECK(rig.p2p.defers_answers());
  rig.p2p.recheck_deferrals();
  CHECK(rig.out.of(MsgType::Deferred).size() == 1);  // told once

  // Once bound, the answer no longer waits for the application.
  const ReceiveToken r = rig.bound(Rank{1}, true);
  CHECK_FALSE(rig.p2p.defers_answers());
  const Clock posted{2, 0, 0, 0};
  rig.p2p.snapshot(r.value, posted);
  rig.signal(Rank{1}, 1, {0, 1, 0, 0}, true);
  REQUIRE(rig.out.of(MsgType::Ack).size() == 1);
  CHECK(rig.out.of(MsgType::Ack)[0].clock == posted);
  REQUIRE(rig.wait(r));
  CHECK(rig.pool.in_use() == 0);
}

TEST_CASE("p2p: a dropped receive gives its position to the receives bound after it",
          "[vclock-parts][p2p]") {
  Rig rig;
  const ReceiveToken cancelled = rig.bound(Rank{1});
  const ReceiveToken second = rig.bound(Rank{1});
  const ReceiveToken third = rig.bound(Rank{1});
  rig.p2p.drop_receive(cancelled);
  const Clock s1{0, 1, 0, 0}, s2{0, 2, 0, 0};
  rig.signal(Rank{1}, 1, s1);
  rig.signal(Rank{1}, 2, s2);
  PointToPoint::Matched m;
  REQUIRE(rig.wait(second, &m));
  CHECK(m.pos == 1);
  CHECK(rig.now() == s1);
  REQUIRE(rig.wait(third, &m));
  CHECK(m.pos == 2);
  CHECK(rig.now() == s2);
  CHECK(rig.p2p.live_receives() == 0);
  CHECK(rig.pool.in_use() == 0);
}

TEST_CASE("p2p: receives behind a held one wait until it is known to have matched",
          "[vclock-parts][p2p]") {
  for (const bool cancelled : {false, true}) {
    Rig rig;
    const ReceiveToken held = rig.bound(Rank{1});
    const ReceiveToken later = rig.bound(Rank{1});
    rig.p2p.hold_receive(held);
    const Clock s1{0, 1, 0, 0}, s2{0, 2, 0, 0};
    rig.signal(Rank{1}, 1, s1);
    rig.signal(Rank{1}, 2, s2);
    CHECK_FALSE(rig.wait(later));
    CHECK(rig.p2p.wait_needs_application(later.value, [](Rank) { return false; }));
    if (cancelled) {
      // It matched nothing: the later receive takes its message.
      rig.p2p.drop_receive(held);
      REQUIRE(rig.wait(later));
      CHECK(rig.now() == s1);
    } else {
      rig.p2p.release_hold(held);
      CHECK_FALSE(rig.p2p.wait_needs_application(later.value, [](Rank) { return false; }));
      CHECK(rig.p2p.wait_needs_application(later.value, [](Rank r) { return r == Rank{1}; }));
      REQUIRE(rig.wait(later));
      CHECK(rig.now() == s2);
      REQUIRE(rig.wait(held));
      CHECK(rig.now() == join(s1, s2));
    }
    CHECK(rig.p2p.live_receives() == 0);
    // Cancelled: signal 2 is kept for the next receive bound on the queue.
    CHECK(rig.pool.in_use() == (cancelled ? 1u : 0u));
  }
}

TEST_CASE("p2p: what nobody waits for is let go on arrival", "[vclock-parts][p2p]") {
  Rig rig;
  const ReceiveToken r = rig.bound(Rank{1});
  rig.p2p.abandon_receive(r);
  rig.signal(Rank{1}, 1, {0, 4, 0, 0});
  CHECK(rig.p2p.live_receives() == 0);
  CHECK(rig.pool.in_use() == 0);
  CHECK(rig.now() == Clock(kWidth, 0));

  // An answer discarded before it arrives, and one after.
  rig.p2p.discard_answer(vcx::SendToken{Rank{2}, kQueue, 1});
  rig.ack(Rank{2}, 1, {0, 0, 1, 0});
  rig.ack(Rank{2}, 2, {0, 0, 2, 0});
  CHECK(rig.pool.in_use() == 1);
  rig.p2p.discard_answer(vcx::SendToken{Rank{2}, kQueue, 2});
  CHECK(rig.pool.in_use() == 0);
}

TEST_CASE("p2p: an answer carries what the receives it was ordered after matched",
          "[vclock-parts][p2p]") {
  Rig rig;
  // `earlier` (from rank 1) was pending when `later` (from rank 2) matched.
  const ReceiveToken earlier = rig.p2p.new_receive(false);
  rig.p2p.bind_receive(earlier, Rank{1}, kQueue);
  const ReceiveToken later = rig.p2p.new_receive(true);
  rig.p2p.order_receive_after(later, earlier);
  rig.p2p.bind_receive(later, Rank{2}, kQueue);
  const Clock posted{0, 0, 0, 1}, from2{0, 0, 2, 0}, from1{0, 3, 0, 0};
  rig.p2p.snapshot(later.value, posted);

  rig.signal(Rank{2}, 1, from2, true);
  // The earlier match is not in: the sender must not wait for this application.
  CHECK(rig.out.of(MsgType::Ack).empty());
  const auto deferred = rig.out.of(MsgType::Deferred);
  REQUIRE(deferred.size() == 1);
  CHECK(deferred[0].dst == Rank{2});

  rig.signal(Rank{1}, 1, from1);
  const auto acks = rig.out.of(MsgType::Ack);
  REQUIRE(acks.size() == 1);
  CHECK(acks[0].dst == Rank{2});
  CHECK(acks[0].clock == join(posted, from1));

  REQUIRE(rig.wait(later));
  REQUIRE(rig.wait(earlier));
  CHECK(rig.now() == join(from1, from2));
  CHECK(rig.p2p.live_receives() == 0);
  CHECK(rig.pool.in_use() == 0);
}

TEST_CASE("p2p: where a wait stands, and a signal sent twice", "[vclock-parts][p2p]") {
  Rig rig;
  const ReceiveToken unbound = rig.p2p.new_receive(false);
  CHECK(rig.p2p.describe_wait(unbound.value) == ": a receive whose match is not known yet");
  CHECK(rig.p2p.wait_needs_application(unbound.value, [](Rank) { return false; }));
  rig.p2p.bind_receive(unbound, Rank{3}, kQueue);
  CHECK(rig.p2p.describe_wait(unbound.value) == ": signal 1 from rank 3");
  rig.signal(Rank{3}, 1, {0, 0, 0, 1});
  REQUIRE(rig.wait(unbound));
  CHECK_THROWS_AS(rig.signal(Rank{3}, 1, {0, 0, 0, 1}), PartFatal);
}
