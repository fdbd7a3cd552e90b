// ClockPool and PooledClock (engines/vclock/clock_pool.h), alone: a handle
// owns one buffer of the pool's width, hands it back when it goes (reset,
// destruction, being overwritten by a move), and released buffers are handed
// out again, so that a steady state of takes and releases does not grow the
// pool.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "clock_pool.h"

using namespace vcx;
using namespace vcx::vclock;

namespace {

constexpr std::size_t kWidth = 5;

std::vector<ClockValue> values(const PooledClock& c, std::size_t width) {
  return std::vector<ClockValue>(c.data(), c.data() + width);
}

}  // namespace

TEST_CASE("clock pool: take_zeroed and take_copy fill the buffer, in_use counts live handles",
          "[vclock-parts][clock-pool]") {
  ClockPool pool(kWidth);
  CHECK(pool.width() == kWidth);
  CHECK(pool.in_use() == 0);

  // Dirty a buffer first, so that a zeroed take cannot pass by luck.
  {
    PooledClock dirty = pool.take();
    for (std::size_t i = 0; i < kWidth; ++i) dirty[i] = 1000 + i;
  }
  CHECK(pool.in_use() == 0);

  PooledClock z = pool.take_zeroed();
  REQUIRE(z);
  CHECK(pool.in_use() == 1);
  CHECK(values(z, kWidth) == std::vector<ClockValue>(kWidth, 0));

  const std::vector<ClockValue> src{3, 1, 4, 1, 5};
  PooledClock c = pool.take_copy(src);
  CHECK(pool.in_use() == 2);
  CHECK(values(c, kWidth) == src);
  // A copy, not a view of the source.
  CHECK(c.data() != src.data());

  PooledClock t = pool.take();
  CHECK(t);
  CHECK(pool.in_use() == 3);
  // Three live handles, three different buffers.
  CHECK(std::set<const ClockValue*>{z.data(), c.data(), t.data()}.size() == 3);
}

TEST_CASE("clock pool: an empty handle holds nothing and gives nothing back",
          "[vclock-parts][clock-pool]") {
  ClockPool pool(kWidth);
  PooledClock empty;
  CHECK_FALSE(empty);
  CHECK(empty.data() == nullptr);
  empty.reset();  // harmless
  CHECK(pool.in_use() == 0);

  PooledClock c = pool.take_zeroed();
  c.reset();
  CHECK_FALSE(c);
  CHECK(c.data() == nullptr);
  CHECK(pool.in_use() == 0);
  c.reset();  // a second reset must not release again
  CHECK(pool.in_use() == 0);
}

TEST_CASE("clock pool: the buffer goes back when its handle is destroyed",
          "[vclock-parts][clock-pool]") {
  ClockPool pool(kWidth);
  {
    PooledClock a = pool.take();
    PooledClock b = pool.take_zeroed();
    CHECK(pool.in_use() == 2);
  }
  CHECK(pool.in_use() == 0);
}

TEST_CASE("clock pool: moving a handle moves the buffer, not a copy of it",
          "[vclock-parts][clock-pool]") {
  ClockPool pool(kWidth);
  const std::vector<ClockValue> src{9, 8, 7, 6, 5};
  PooledClock a = pool.take_copy(src);
  const ClockValue* buffer = a.data();

  PooledClock b(std::move(a));
  CHECK_FALSE(a);
  CHECK(a.data() == nullptr);
  CHECK(b.data() == buffer);
  CHECK(values(b, kWidth) == src);
  CHECK(pool.in_use() == 1);

  // Into an empty handle: nothing to give back.
  PooledClock c;
  c = std::move(b);
  CHECK_FALSE(b);
  CHECK(c.data() == buffer);
  CHECK(pool.in_use() == 1);

  // The moved-from handles' destruction or reset must not release it.
  a.reset();
  b.reset();
  CHECK(pool.in_use() == 1);
  CHECK(values(c, kWidth) == src);
}

TEST_CASE("clock pool: move assignment gives back the buffer it overwrites",
          "[vclock-parts][clock-pool]") {
  ClockPool pool(kWidth);
  PooledClock a = pool.take_zeroed();
  PooledClock b = pool.take_zeroed();
  const ClockValue* kept = b.data();
  CHECK(pool.in_use() == 2);
  a = std::move(b);
  CHECK(pool.in_use() == 1);
  CHECK(a.data() == kept);

  // Assigning a handle to itself keeps its buffer.
  PooledClock& alias = a;
  a = std::move(alias);
  CHECK(a.data() == kept);
  CHECK(pool.in_use() == 1);

  // Assigning an empty handle releases the held one and leaves it empty.
  a = PooledClock{};
  CHECK_FALSE(a);
  CHECK(pool.in_use() == 0);
}

TEST_CASE("clock pool: a handle moved between pools gives its buffer back to its own pool",
          "[vclock-parts][clock-pool]") {
  ClockPool p1(kWidth), p2(kWidth);
  PooledClock from1 = p1.take_zeroed();
  PooledClock from2 = p2.take_zeroed();
  // Overwriting p2's buffer gives it to p2; the handle now owns p1's.
  from2 = std::move(from1);
  CHECK(p1.in_use() == 1);
  CHECK(p2.in_use() == 0);
  from2.reset();
  CHECK(p1.in_use() == 0);
  CHECK(p2.in_use() == 0);
}

TEST_CASE("clock pool: view, merge, assign and indexing act on the handle's entries",
          "[vclock-parts][clock-pool]") {
  ClockPool pool(kWidth);
  PooledClock c = pool.take_copy(std::vector<ClockValue>{1, 5, 0, 7, 2});
  ClockSpan v = c.view();
  CHECK(v.size() == kWidth);
  CHECK(v.data() == c.data());
  CHECK(c.mutable_view().size() == kWidth);

  // merge: element-wise maximum.
  c.merge(std::vector<ClockValue>{4, 2, 0, 9, 1});
  CHECK(values(c, kWidth) == std::vector<ClockValue>{4, 5, 0, 9, 2});

  // assign: overwrites every entry, also with smaller values.
  c.assign(std::vector<ClockValue>{0, 0, 3, 0, 0});
  CHECK(values(c, kWidth) == std::vector<ClockValue>{0, 0, 3, 0, 0});

  c[4] = 11;
  c.mutable_view()[0] = 12;
  CHECK(values(c, kWidth) == std::vector<ClockValue>{12, 0, 3, 0, 11});
}

TEST_CASE("clock pool: live buffers never overlap, also across the pool's growth",
          "[vclock-parts][clock-pool]") {
  ClockPool pool(kWidth);
  // Many more live buffers than any first allocation would make.
  constexpr std::size_t kLive = 300;
  std::vector<PooledClock> live;
  for (std::size_t k = 0; k < kLive; ++k) {
    live.push_back(pool.take());
    for (std::size_t i = 0; i < kWidth; ++i) live.back()[i] = k * 100 + i;
  }
  CHECK(pool.in_use() == kLive);
  // Writing each one wrote only itself.
  for (std::size_t k = 0; k < kLive; ++k)
    for (std::size_t i = 0; i < kWidth; ++i) REQUIRE(live[k].view()[i] == k * 100 + i);
  live.clear();
  CHECK(pool.in_use() == 0);
}

TEST_CASE("clock pool: released buffers are reused, so a steady state does not grow",
          "[vclock-parts][clock-pool]") {
  ClockPool pool(kWidth);
  std::mt19937 rng(7);
  constexpr std::size_t kMaxLive = 10;
  constexpr int kSteps = 20000;
  std::vector<PooledClock> live;
  std::set<const ClockValue*> seen;
  std::size_t peak = 0;
  for (int step = 0; step < kSteps; ++step) {
    // Take while below the bound, otherwise release a random one.
    if (live.size() < kMaxLive && (live.empty() || rng() % 2 == 0)) {
      live.push_back(pool.take_zeroed());
      seen.insert(live.back().data());
    } else {
      std::swap(live[rng() % live.size()], live.back());
      live.pop_back();
    }
    REQUIRE(pool.in_use() == live.size());
    peak = std::max(peak, pool.in_use());
  }
  CHECK(peak <= kMaxLive);
  // Thousands of takes, but only a pool's worth of buffers: a pool that did
  // not reuse them would have handed out a new one per take.
  CHECK(seen.size() <= 128);
  live.clear();
  CHECK(pool.in_use() == 0);

  // Once warmed up to a peak, taking as many again hands out known buffers.
  std::vector<PooledClock> round;
  std::set<const ClockValue*> first;
  for (int i = 0; i < 200; ++i) round.push_back(pool.take());
  for (const PooledClock& c : round) first.insert(c.data());
  round.clear();
  std::set<const ClockValue*> again;
  for (int r = 0; r < 20; ++r) {
    for (int i = 0; i < 200; ++i) round.push_back(pool.take());
    for (const PooledClock& c : round) again.insert(c.data());
    round.clear();
  }
  std::set<const ClockValue*> all = first;
  all.insert(seen.begin(), seen.end());
  all.insert(again.begin(), again.end());
  // At most the buffers of the first round plus the ones the pool had made
  // before it and did not hand out then (fewer than a round).
  CHECK(all.size() < first.size() + 200);
  CHECK(pool.in_use() == 0);
}
