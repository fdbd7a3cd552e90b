// The clock-condition correction of traces: small cases worked out by hand
// from the extended controlled logical clock, and random runs whose true
// times are known, skewed per rank as unsynchronised nodes would see them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

#include "clock_condition.h"

using vcx::ClockValue;
using vcx::trace::CorrectionOptions;
using vcx::trace::Timelines;

namespace {

void add(Timelines& t, std::uint32_t rank, std::int64_t enter, std::int64_t leave,
         std::vector<ClockValue> clock) {
  t.add_call(rank, static_cast<std::uint64_t>(enter), static_cast<std::uint64_t>(leave), clock);
}

}  // namespace

TEST_CASE("clock condition: a receive before its send moves forward, its past with it",
          "[trace][correct]") {
  // Rank 0 sends (enter 100); rank 1's receive returns at 90 by its clock.
  Timelines t(2);
  add(t, 0, 100, 110, {1, 0});
  add(t, 1, 50, 90, {1, 1});
  REQUIRE(t.count_violations(1) == 1);
  const auto r = t.correct(CorrectionOptions{});
  // Forward: the return goes to 100 + 1 (min latency), a jump of 11 over
  // its bare value 90. Backward: spread over 11 / 0.01 = 1100 before it,
  // from no shift at -1010 to 11 at 90: the enter at 50 moves by
  // 11 * 1060 / 1100 = 10.6, rounded down.
  CHECK(t.enter(1, 0) == 60);
  CHECK(t.leave(1, 0) == 101);
  CHECK(t.enter(0, 0) == 100);
  CHECK(t.leave(0, 0) == 110);
  CHECK(r.violations == 1);
  CHECK(r.ranks[1].violations == 1);
  CHECK(r.violations_after == 0);
  CHECK(r.ranks[1].moved == 2);
  CHECK(r.ranks[1].max_shift_ns == 11);
  CHECK(r.ranks[0].moved == 0);
  CHECK(r.unresolved == 0);
}

TEST_CASE("clock condition: amortisation bends where an earlier send must stay before its "
          "receive",
          "[trace][correct]") {
  // Rank 1 sends to 0 (enter 40), rank 0 receives it (returns 48), later
  // sends back (enter 100); rank 1's receive returns at 90 by its clock.
  Timelines t(2);
  add(t, 0, 30, 48, {1, 1});
  add(t, 0, 100, 110, {2, 1});
  add(t, 1, 40, 45, {0, 1});
  add(t, 1, 50, 90, {2, 2});
  REQUIRE(t.count_violations(1) == 1);
  const auto r = t.correct(CorrectionOptions{});
  // The jump of 11 at 90 would move the send's enter at 40 by 10.5 on the
  // straight line from -1010, to 50, after its receive returned (48). It
  // may go to 48 - 1 = 47 only (shift 7): the line bends there, and the
  // events between it and the jump follow the piece from (40, 7) to (90, 11):
  // 45 -> 45 + 7.4, 50 -> 50 + 7.8, rounded down.
  CHECK(t.enter(1, 0) == 47);
  CHECK(t.leave(1, 0) == 52);
  CHECK(t.enter(1, 1) == 57);
  CHECK(t.leave(1, 1) == 101);
  CHECK(t.enter(0, 0) == 30);
  CHECK(t.leave(0, 0) == 48);
  CHECK(r.violations_after == 0);
  CHECK(r.ranks[0].moved == 0);
  CHECK(r.ranks[1].max_shift_ns == 11);
}

TEST_CASE("clock condition: every member of an all-to-all returns after every member entered",
          "[trace][correct]") {
  // A barrier of three ranks; rank 2's clock runs 500 behind, so its call
  // (enter 10, return 110 by its clock) returns before the others entered.
  Timelines t(3);
  add(t, 0, 500, 620, {1, 1, 1});
  add(t, 1, 510, 615, {1, 1, 1});
  add(t, 2, 10, 110, {1, 1, 1});
  REQUIRE(t.count_violations(1) == 2);  // rank 2's return, against each enter
  const auto r = t.correct(CorrectionOptions{});
  CHECK(r.violations_after == 0);
  // The return goes to the latest enter plus the latency, 511: a jump of
  // 401, spread over 40100 before it; the enter moves 401 * 40000 / 40100.
  CHECK(t.leave(2, 0) == 511);
  CHECK(t.enter(2, 0) == 410);
  CHECK(r.ranks[2].violations == 2);
  CHECK(r.ranks[0].moved == 0);
  CHECK(r.ranks[1].moved == 0);
}

TEST_CASE("clock condition: a one-to-all orders only the root before the others",
          "[trace][correct]") {
  // A broadcast from rank 0: the others learn rank 0's entry, not each other's.
  Timelines t(3);
  add(t, 0, 1000, 1010, {1, 0, 0});
  add(t, 1, 100, 200, {1, 1, 0});   // returns 800 before the root entered
  add(t, 2, 1500, 1600, {1, 0, 1});
  const auto r = t.correct(CorrectionOptions{});
  CHECK(r.violations == 1);
  CHECK(r.violations_after == 0);
  CHECK(t.leave(1, 0) == 1001);
  CHECK(r.ranks[2].moved == 0);
  CHECK(r.ranks[0].moved == 0);
}

TEST_CASE("clock condition: measured offsets move a rank onto rank 0's clock, linearly",
          "[trace][correct]") {
  // Rank 1's clock: 1000 behind rank 0's at local time 0, and 1400 behind
  // at local time 1,000,000 (it runs 400 ppm slow).
  Timelines t(2);
  add(t, 0, 10'000, 10'100, {1, 0});
  add(t, 1, 9'000, 9'200, {1, 1});        // receives from rank 0
  add(t, 1, 500'000, 500'100, {1, 2});
  std::vector<std::vector<vcx::ClockSync>> syncs(2);
  syncs[1] = {{0, 1000, 0, 50}, {1, 1400, 1'000'000, 60}};
  REQUIRE(t.count_violations(1) == 1);  // returns at 9200, before the enter at 10000
  t.align(syncs);
  // t + 1000 + 400 * t / 1e6, rounded
  CHECK(t.enter(1, 0) == 9'000 + 1000 + 4);
  CHECK(t.leave(1, 0) == 9'200 + 1000 + 4);
  CHECK(t.enter(1, 1) == 500'000 + 1000 + 200);
  CHECK(t.enter(0, 0) == 10'000);  // rank 0 is the reference, without measurements
  const auto r = t.correct(CorrectionOptions{});
  CHECK(r.ranks[1].aligned);
  CHECK(r.ranks[1].offset_start_ns == 1000);
  CHECK(r.ranks[1].offset_end_ns == 1400);
  CHECK(r.ranks[1].drift_ppm == Approx(400));
  CHECK(r.ranks[1].violations_measured == 1);
  CHECK(r.violations_measured == 1);
  // The return moved to 10204, after rank 0's enter at 10000.
  CHECK(r.violations == 0);
  CHECK(r.violations_after == 0);

  // One measurement only: a constant offset.
  Timelines one(2);
  add(one, 1, 100, 200, {0, 1});
  std::vector<std::vector<vcx::ClockSync>> start_only(2);
  start_only[1] = {{0, -50, 0, 10}};
  one.align(start_only);
  CHECK(one.enter(1, 0) == 50);
  CHECK(one.leave(1, 0) == 150);
}

TEST_CASE("clock condition: a rank on rank 0's clock is not moved by its measurements",
          "[trace][correct]") {
  // Round trips of 0: the rank read rank 0's clock and measured nothing.
  Timelines t(2);
  add(t, 0, 1000, 1100, {1, 0});
  add(t, 1, 1200, 1300, {1, 1});
  std::vector<std::vector<vcx::ClockSync>> syncs(2);
  syncs[0] = {{0, 0, 500, 0}, {1, 0, 5000, 0}};
  syncs[1] = {{0, 0, 400, 0}, {1, 0, 6000, 0}};
  t.align(syncs);
  CHECK(t.enter(1, 0) == 1200);
  CHECK(t.leave(1, 0) == 1300);
  const auto r = t.correct(CorrectionOptions{});
  CHECK(r.ranks[1].aligned);
  CHECK(r.ranks[1].shared_clock);
  CHECK(r.ranks[1].offset_start_ns == 0);
  CHECK(r.ranks[1].drift_ppm == 0);
  CHECK(r.ranks[1].moved == 0);
  CHECK(r.ranks[0].moved == 0);
}

TEST_CASE("clock condition: a drift no clock has is refused for the tighter measurement",
          "[trace][correct]") {
  // Start: offset +1430 us with a 3 ms round trip (a busy node); end, 7 ms
  // later: +21 ns with a 2 us round trip. Taken linearly that is a drift of
  // about -204,000 ppm; the end's offset alone is kept instead.
  Timelines t(2);
  add(t, 1, 1'000'000, 1'000'100, {0, 1});
  add(t, 1, 7'000'000, 7'000'100, {0, 2});
  std::vector<std::vector<vcx::ClockSync>> syncs(2);
  syncs[1] = {{0, 1'430'000, 0, 3'000'000}, {1, 21, 7'000'000, 2'000}};
  t.align(syncs);
  CHECK(t.enter(1, 0) == 1'000'021);
  CHECK(t.enter(1, 1) == 7'000'021);
  const auto r = t.correct(CorrectionOptions{});
  CHECK_FALSE(r.ranks[1].shared_clock);
  CHECK(r.ranks[1].drift_refused_ppm == Approx((21.0 - 1'430'000.0) / 7'000'000.0 * 1e6));
  CHECK(r.ranks[1].drift_ppm == 0);
  CHECK(r.ranks[1].offset_start_ns == 21);
  CHECK(r.ranks[1].offset_end_ns == 21);

  // Within what clocks do (300 ppm), the drift is taken as measured.
  Timelines ok(2);
  add(ok, 1, 1'000'000, 1'000'100, {0, 1});
  std::vector<std::vector<vcx::ClockSync>> fine(2);
  fine[1] = {{0, 1000, 0, 3'000'000}, {1, 4000, 10'000'000, 2'000}};
  ok.align(fine);
  CHECK(ok.enter(1, 0) == 1'000'000 + 1000 + 300);
  const auto q = ok.correct(CorrectionOptions{});
  CHECK(q.ranks[1].drift_refused_ppm == 0);
  CHECK(q.ranks[1].drift_ppm == Approx(300));
}

namespace {

// A random run with known true times: point-to-point messages and
// all-to-all collectives, clocks by the definition (a call ticks its own
// entry; a receive merges the send's clock, a collective every member's).
struct Run {
  std::uint32_t n;
  struct Call {
    std::int64_t enter, leave;
    std::vector<ClockValue> clock;
  };
  std::vector<std::vector<Call>> calls;
};

Run random_run(std::mt19937_64& rng, std::uint32_t n, int steps) {
  Run run{n, std::vector<std::vector<Run::Call>>(n)};
  std::vector<std::int64_t> now(n, 1'000'000);
  std::vector<std::vector<ClockValue>> clock(n, std::vector<ClockValue>(n, 0));
  auto dur = [&] { return static_cast<std::int64_t>(1 + rng() % 2000); };
  for (int s = 0; s < steps; ++s) {
    const int kind = static_cast<int>(rng() % 10);
    if (kind < 7) {  // a message from a to b
      const std::uint32_t a = static_cast<std::uint32_t>(rng() % n);
      std::uint32_t b = static_cast<std::uint32_t>(rng() % n);
      if (a == b) b = (b + 1) % n;
      now[a] += dur();
      const std::int64_t sent = now[a];
      ++clock[a][a];
      run.calls[a].push_back({sent, sent + dur(), clock[a]});
      const auto send_clock = clock[a];
      now[a] = run.calls[a].back().leave;
      now[b] += dur();
      const std::int64_t enter = now[b];
      // The receive returns after the message arrived (latency >= 1).
      const std::int64_t leave = std::max(enter, sent) + 1 + static_cast<std::int64_t>(rng() % 500);
      ++clock[b][b];
      for (std::uint32_t k = 0; k < n; ++k) clock[b][k] = std::max(clock[b][k], send_clock[k]);
      run.calls[b].push_back({enter, leave, clock[b]});
      now[b] = leave;
    } else {  // an all-to-all over every rank
      std::int64_t last_enter = 0;
      std::vector<std::int64_t> enters(n);
      std::vector<ClockValue> merged(n, 0);
      for (std::uint32_t r = 0; r < n; ++r) {
        now[r] += dur();
        enters[r] = now[r];
        last_enter = std::max(last_enter, now[r]);
        ++clock[r][r];
        for (std::uint32_t k = 0; k < n; ++k) merged[k] = std::max(merged[k], clock[r][k]);
      }
      for (std::uint32_t r = 0; r < n; ++r) {
        clock[r] = merged;
        const std::int64_t leave = last_enter + 1 + static_cast<std::int64_t>(rng() % 300);
        run.calls[r].push_back({enters[r], leave, clock[r]});
        now[r] = leave;
      }
    }
  }
  return run;
}

Timelines skewed(const Run& run, const std::vector<std::int64_t>& offset,
                 const std::vector<double>& drift) {
  Timelines t(run.n);
  for (std::uint32_t r = 0; r < run.n; ++r)
    for (const auto& c : run.calls[r]) {
      auto seen = [&](std::int64_t v) {
        return v + offset[r] + static_cast<std::int64_t>(drift[r] * static_cast<double>(v));
      };
      add(t, r, seen(c.enter), seen(c.leave), c.clock);
    }
  return t;
}

}  // namespace

TEST_CASE("clock condition: random runs under skew come out with no violation, order kept",
          "[trace][correct]") {
  std::mt19937_64 rng(4242);
  const CorrectionOptions o;
  for (int round = 0; round < 60; ++round) {
    const std::uint32_t n = 2 + static_cast<std::uint32_t>(rng() % 6);
    const Run run = random_run(rng, n, 50 + static_cast<int>(rng() % 400));
    INFO("round " << round << ", " << n << " ranks");

    // True times: nothing to correct, nothing moves.
    {
      Timelines exact = skewed(run, std::vector<std::int64_t>(n, 0), std::vector<double>(n, 0));
      REQUIRE(exact.count_violations(o.min_latency_ns) == 0);
      const auto r = exact.correct(o);
      REQUIRE(r.violations == 0);
      for (const auto& rc : r.ranks) REQUIRE(rc.moved == 0);
    }

    std::vector<std::int64_t> offset(n);
    std::vector<double> drift(n);
    for (std::uint32_t r = 0; r < n; ++r) {
      offset[r] = static_cast<std::int64_t>(rng() % 20001) - 10000;
      drift[r] = (static_cast<double>(rng() % 2001) - 1000) * 1e-6;  // up to 1000 ppm
    }
    Timelines t = skewed(run, offset, drift);
    Timelines before = t;
    const auto r = t.correct(o);
    REQUIRE(r.violations == before.count_violations(o.min_latency_ns));
    REQUIRE(r.violations_after == 0);
    REQUIRE(t.count_violations(o.min_latency_ns) == 0);
    REQUIRE(r.unresolved == 0);
    for (std::uint32_t k = 0; k < n; ++k) {
      std::int64_t prev = 0;
      std::int64_t prev_measured = 0;
      for (std::size_t i = 0; i < t.calls(k); ++i) {
        for (int side = 0; side < 2; ++side) {
          const std::int64_t v = side ? t.leave(k, i) : t.enter(k, i);
          const std::int64_t m = side ? before.leave(k, i) : before.enter(k, i);
          // Only forward, and never out of local order.
          REQUIRE(v >= m);
          if (i + side > 0) {
            REQUIRE(v >= prev + o.min_gap_ns);
            // An interval shrinks to no less than gamma of its measured length.
            REQUIRE(v - prev >= static_cast<std::int64_t>(o.gamma *
                                                          static_cast<double>(m - prev_measured)) -
                                    1);
          }
          prev = v;
          prev_measured = m;
        }
      }
    }
  }
}
