// FlagDeposition (engines/vclock/flag_deposition.h), alone: the registered
// writes to this PE's flags and which of them a wait merges. The rule, from
// the header: a wait merges the registrations before its snapshot whose value
// says they came before the value it read (a store of that very value, a
// counter step not past it), read as the waited value's type; it cannot
// decide while a registration before its snapshot has no value yet, or
// merges and has no clock yet; which writes it merges never depends on the
// timing of the messages. Deposits below the engine's clock, and writes that
// stored nothing, are dropped, their clocks going back to the pool.
//
// The expectations come from an oracle written here from that rule
// (oracle_merges), not from the implementation.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "clock_pool.h"
#include "flag_deposition.h"
#include "vcx/call_program.h"
#include "vcx/vector_clock.h"

using namespace vcx;
using namespace vcx::vclock;

namespace {

constexpr std::size_t kWidth = 4;
constexpr std::uint64_t kFlag = 0x1000;
constexpr std::uint64_t kOtherFlag = 0x2000;

using Values = std::vector<ClockValue>;

VectorClock vc(const Values& v) {
  VectorClock c(v.size());
  c.assign(v);
  return c;
}
Values values(const VectorClock& c) { return Values(c.view().begin(), c.view().end()); }
Values max_of(Values a, const Values& b) {
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = std::max(a[i], b[i]);
  return a;
}

// The waited value's type reads both values: signed or not, `width` bytes.
int compare_as(std::uint64_t a, std::uint64_t b, unsigned width, bool is_signed) {
  auto three_way = [](auto x, auto y) { return x < y ? -1 : (x > y ? 1 : 0); };
  if (is_signed) {
    switch (width) {
      case 1: return three_way(static_cast<std::int8_t>(a), static_cast<std::int8_t>(b));
      case 2: return three_way(static_cast<std::int16_t>(a), static_cast<std::int16_t>(b));
      case 4: return three_way(static_cast<std::int32_t>(a), static_cast<std::int32_t>(b));
      default: return three_way(static_cast<std::int64_t>(a), static_cast<std::int64_t>(b));
    }
  }
  switch (width) {
    case 1: return three_way(static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(b));
    case 2: return three_way(static_cast<std::uint16_t>(a), static_cast<std::uint16_t>(b));
    case 4: return three_way(static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b));
    default: return three_way(a, b);
  }
}

// The rule: a store of the value read, an increment to at most it, a
// decrement to at least it; values of another width never.
bool oracle_merges(std::uint16_t deposit_bits, std::uint64_t deposit_value,
                   std::uint16_t wait_bits, std::uint64_t read) {
  const unsigned width = flag_width(wait_bits);
  if (flag_width(deposit_bits) != width) return false;
  const int c = compare_as(deposit_value, read, width, flag_signed(wait_bits));
  switch (flag_mode(deposit_bits)) {
    case kFlagStore: return c == 0;
    case kFlagUp: return c <= 0;
    case kFlagDown: return c >= 0;
    default: return false;  // pending, wrote nothing
  }
}

// Every test ends with the deposition gone and no clock left out of the pool.
struct Fixture {
  ClockPool pool{kWidth};
  std::optional<FlagDeposition> holder;
  FlagDeposition& dep = holder.emplace();
  ~Fixture() {
    holder.reset();
    CHECK(pool.in_use() == 0);
  }

  void give_clock(Rank writer, std::uint64_t flag, std::uint64_t id, const Values& v) {
    dep.clock(writer, flag, id, pool.take_copy(v));
  }
  std::vector<MissingWrite> missing(const FlagWaitQuery& q) const {
    std::vector<MissingWrite> out;
    dep.any_missing(q, [&](const MissingWrite& m) {
      out.push_back(m);
      return false;
    });
    return out;
  }
};

const std::uint16_t kStore4 = flag_bits(kFlagStore, 4, false);
const std::uint16_t kUp4 = flag_bits(kFlagUp, 4, false);
const std::uint16_t kDown4 = flag_bits(kFlagDown, 4, false);
const std::uint16_t kPending4 = flag_bits(kFlagPending, 4, false);
const std::uint16_t kNoWrite4 = flag_bits(kFlagNoWrite, 4, false);
const std::uint16_t kWait4 = flag_bits(kFlagPending, 4, false);  // a wait names only the type

}  // namespace

// ---------------------------------------------------------------------------
// Which writes a value read merges

TEST_CASE("flag deposition: merges() follows the rule for every mode, width and signedness",
          "[vclock-parts][flag-deposition]") {
  // A few cases spelled out, as the rule says them.
  using F = FlagDeposition;
  CHECK(F::merges(kStore4, 5, kWait4, 5));
  CHECK_FALSE(F::merges(kStore4, 4, kWait4, 5));
  CHECK(F::merges(kUp4, 4, kWait4, 5));       // incremented to 4, read 5: before
  CHECK(F::merges(kUp4, 5, kWait4, 5));
  CHECK_FALSE(F::merges(kUp4, 6, kWait4, 5));  // past the value read
  CHECK(F::merges(kDown4, 6, kWait4, 5));
  CHECK_FALSE(F::merges(kDown4, 4, kWait4, 5));
  CHECK_FALSE(F::merges(kPending4, 5, kWait4, 5));
  CHECK_FALSE(F::merges(kNoWrite4, 5, kWait4, 5));
  // Another width never merges, whatever the value.
  CHECK_FALSE(F::merges(kStore4, 5, flag_bits(kFlagPending, 8, false), 5));
  CHECK_FALSE(F::merges(flag_bits(kFlagStore, 2, false), 5, kWait4, 5));
  // Only the value's bytes count.
  CHECK(F::merges(flag_bits(kFlagStore, 2, false), 0x12340005, flag_bits(kFlagPending, 2, false), 5));
  CHECK(F::merges(flag_bits(kFlagStore, 1, false), 5, flag_bits(kFlagPending, 1, false), 0xff05));
  // Signedness is the waited value's: 0xff is -1 signed, 255 unsigned.
  CHECK(F::merges(flag_bits(kFlagUp, 1, false), 0xff, flag_bits(kFlagPending, 1, true), 1));
  CHECK_FALSE(F::merges(flag_bits(kFlagUp, 1, false), 0xff, flag_bits(kFlagPending, 1, false), 1));
  CHECK(F::merges(flag_bits(kFlagDown, 8, false), 1, flag_bits(kFlagPending, 8, true), ~0ull));
  CHECK_FALSE(F::merges(flag_bits(kFlagDown, 8, false), 1, flag_bits(kFlagPending, 8, false), ~0ull));

  // And over many values against the oracle, near the types' boundaries.
  std::mt19937_64 rng(42);
  const unsigned widths[] = {1, 2, 4, 8};
  const FlagMode modes[] = {kFlagPending, kFlagStore, kFlagUp, kFlagDown, kFlagNoWrite};
  auto pick_value = [&](unsigned width) -> std::uint64_t {
    const std::uint64_t top = width >= 8 ? 0 : std::uint64_t{1} << (8 * width);
    switch (rng() % 5) {
      case 0: return rng() % 8;
      case 1: return top - 1 - rng() % 4;                    // -1.. unsigned maximum
      case 2: return (top >> 1) - 2 + rng() % 4;             // around the sign bit
      case 3: return (rng() << (8 * (width % 8))) | rng() % 8;  // junk above the width
      default: return rng();
    }
  };
  int merged = 0;
  for (int i = 0; i < 20000; ++i) {
    const unsigned wd = widths[rng() % 4];
    const unsigned ww = rng() % 8 == 0 ? widths[rng() % 4] : wd;
    const std::uint16_t dbits = flag_bits(modes[rng() % 5], wd, rng() % 2);
    const std::uint16_t wbits = flag_bits(kFlagPending, ww, rng() % 2);
    const std::uint64_t dv = pick_value(wd);
    const std::uint64_t v = rng() % 3 == 0 ? dv : pick_value(ww);
    const bool expected = oracle_merges(dbits, dv, wbits, v);
    merged += expected;
    INFO("deposit bits " << dbits << " value " << dv << ", wait bits " << wbits << " value " << v);
    REQUIRE(F::merges(dbits, dv, wbits, v) == expected);
  }
  // Both answers came up often.
  CHECK(merged > 2000);
  CHECK(merged < 18000);
}

TEST_CASE("flag deposition: a wait merges exactly the writes its value says came before it",
          "[vclock-parts][flag-deposition]") {
  Fixture f;
  // Writers 0..3 each write once to the flag; the wait reads 5.
  struct W {
    std::uint32_t writer;
    std::uint16_t bits;
    std::uint64_t value;
    Values clock;
  };
  const std::vector<W> writes{
      {1, kStore4, 5, {0, 3, 0, 0}},                       // the value read: merges
      {2, kStore4, 6, {0, 0, 4, 0}},                       // another value
      {3, kUp4, 4, {0, 0, 0, 7}},                          // counter not past 5: merges
      {0, kUp4, 7, {9, 0, 0, 0}},                          // past it
      {2, kDown4, 5, {0, 0, 6, 0}},                        // down to 5: merges
      {1, kDown4, 3, {0, 8, 0, 0}},                        // down past it
      {3, flag_bits(kFlagStore, 8, false), 5, {0, 0, 0, 9}},  // another width
  };
  for (std::size_t i = 0; i < writes.size(); ++i) {
    const W& w = writes[i];
    f.dep.announce(Rank{w.writer}, kFlag, 100 + i, w.bits, w.value);
    f.give_clock(Rank{w.writer}, kFlag, 100 + i, w.clock);
  }
  CHECK(f.dep.deposits() == writes.size());
  CHECK(f.pool.in_use() == writes.size());

  VectorClock clock = vc({1, 1, 1, 1});
  std::vector<Rank> writers;
  const FlagWaitQuery q{kFlag, f.dep.registrations(), kWait4, 5};
  CHECK(f.missing(q).empty());
  REQUIRE(f.dep.wait(q, clock, writers));
  CHECK(values(clock) == Values{1, 3, 6, 7});
  CHECK(writers == std::vector<Rank>{Rank{1}, Rank{3}, Rank{2}});
  // Merged ones are gone; of the others, those now below the clock too
  // (the store of 6, {0,0,4,0}); the three with an entry above it stay.
  CHECK(f.dep.deposits() == 3);
  CHECK(f.pool.in_use() == 3);

  // Waiting again merges nothing twice.
  std::vector<Rank> again;
  const Values before = values(clock);
  REQUIRE(f.dep.wait(q, clock, again));
  CHECK(again.empty());
  CHECK(values(clock) == before);
}

TEST_CASE("flag deposition: signed and unsigned waits read a deposit's bytes differently",
          "[vclock-parts][flag-deposition]") {
  for (const bool is_signed : {false, true}) {
    Fixture f;
    // A one-byte counter incremented to 0xff, waited for as 1: -1 <= 1 when
    // signed, 255 > 1 when not.
    f.dep.announce(Rank{2}, kFlag, 1, flag_bits(kFlagUp, 1, false), 0xff);
    f.give_clock(Rank{2}, kFlag, 1, {0, 0, 5, 0});
    // A store of 0x101: as one byte, 1.
    f.dep.announce(Rank{3}, kFlag, 2, flag_bits(kFlagStore, 1, false), 0x101);
    f.give_clock(Rank{3}, kFlag, 2, {0, 0, 0, 5});
    VectorClock clock(kWidth);
    std::vector<Rank> writers;
    REQUIRE(f.dep.wait({kFlag, f.dep.registrations(), flag_bits(kFlagPending, 1, is_signed), 1},
                       clock, writers));
    if (is_signed) {
      CHECK(values(clock) == Values{0, 0, 5, 5});
      CHECK(writers == std::vector<Rank>{Rank{2}, Rank{3}});
    } else {
      CHECK(values(clock) == Values{0, 0, 0, 5});
      CHECK(writers == std::vector<Rank>{Rank{3}});
    }
  }
}

TEST_CASE("flag deposition: a wait merges only registrations before its snapshot",
          "[vclock-parts][flag-deposition]") {
  Fixture f;
  f.dep.announce(Rank{1}, kFlag, 1, kStore4, 5);
  // Registrations are numbered over every flag.
  f.dep.announce(Rank{2}, kOtherFlag, 1, kStore4, 5);
  const std::uint64_t snapshot = f.dep.registrations();
  CHECK(snapshot == 2);
  f.dep.announce(Rank{3}, kFlag, 1, kStore4, 5);  // after the read: not merged
  f.dep.announce(Rank{0}, kFlag, 1, kPending4, 0);  // pending, but after: no obstacle
  f.give_clock(Rank{1}, kFlag, 1, {0, 4, 0, 0});
  f.give_clock(Rank{2}, kOtherFlag, 1, {0, 0, 4, 0});
  f.give_clock(Rank{3}, kFlag, 1, {0, 0, 0, 4});

  VectorClock clock(kWidth);
  std::vector<Rank> writers;
  const FlagWaitQuery q{kFlag, snapshot, kWait4, 5};
  CHECK(f.missing(q).empty());
  REQUIRE(f.dep.wait(q, clock, writers));
  CHECK(values(clock) == Values{0, 4, 0, 0});
  CHECK(writers == std::vector<Rank>{Rank{1}});

  // A later wait whose snapshot includes it merges the later store.
  const FlagWaitQuery later{kFlag, f.dep.registrations(), kWait4, 5};
  // ... once the pending write before it is known.
  std::vector<Rank> w2;
  CHECK_FALSE(f.dep.wait(later, clock, w2));
  f.dep.value(Rank{0}, kFlag, 1, kStore4, 9);
  REQUIRE(f.dep.wait(later, clock, w2));
  CHECK(values(clock) == Values{0, 4, 0, 4});
  CHECK(w2 == std::vector<Rank>{Rank{3}});
}

TEST_CASE("flag deposition: a wait cannot decide while a value or a merged clock is missing",
          "[vclock-parts][flag-deposition]") {
  Fixture f;
  f.dep.announce(Rank{1}, kFlag, 7, kPending4, 0);  // value to come
  f.dep.announce(Rank{2}, kFlag, 8, kStore4, 5);    // merges, clock to come
  f.dep.announce(Rank{3}, kFlag, 9, kStore4, 6);    // does not merge: its clock is not needed
  const FlagWaitQuery q{kFlag, f.dep.registrations(), kWait4, 5};

  VectorClock clock = vc({1, 0, 0, 0});
  std::vector<Rank> writers;
  auto refused = [&] {
    const bool ok = f.dep.wait(q, clock, writers);
    // Nothing merged, nobody named.
    CHECK(values(clock) == Values{1, 0, 0, 0});
    CHECK(writers.empty());
    return !ok;
  };
  CHECK(refused());
  std::vector<MissingWrite> m = f.missing(q);
  REQUIRE(m.size() == 2);
  CHECK(m[0].writer == Rank{1});
  CHECK(m[0].value_pending);
  CHECK(m[1].writer == Rank{2});
  CHECK_FALSE(m[1].value_pending);
  // any_missing stops at the first f that says so.
  int calls = 0;
  CHECK(f.dep.any_missing(q, [&](const MissingWrite&) { return ++calls == 1; }));
  CHECK(calls == 1);

  // The value is a store of 5: now its clock is missing too.
  f.dep.value(Rank{1}, kFlag, 7, kStore4, 5);
  CHECK(refused());
  m = f.missing(q);
  REQUIRE(m.size() == 2);
  CHECK(m[0].writer == Rank{1});
  CHECK_FALSE(m[0].value_pending);

  f.give_clock(Rank{2}, kFlag, 8, {0, 0, 3, 0});
  CHECK(refused());
  f.give_clock(Rank{1}, kFlag, 7, {0, 2, 0, 0});
  CHECK(f.missing(q).empty());
  CHECK_FALSE(f.dep.any_missing(q, [](const MissingWrite&) { return true; }));
  REQUIRE(f.dep.wait(q, clock, writers));
  CHECK(values(clock) == Values{1, 2, 3, 0});
  CHECK(writers == std::vector<Rank>{Rank{1}, Rank{2}});
  // A wait on a flag nobody wrote has nothing to wait for.
  std::vector<Rank> none;
  CHECK(f.dep.wait({kOtherFlag, f.dep.registrations(), kWait4, 5}, clock, none));
  CHECK(none.empty());
  CHECK_FALSE(f.dep.any_missing({kOtherFlag, f.dep.registrations(), kWait4, 5},
                                [](const MissingWrite&) { return true; }));
}

TEST_CASE("flag deposition: writes that stored nothing are dropped, and so are their clocks",
          "[vclock-parts][flag-deposition]") {
  Fixture f;
  // Announced as no write: counted as a registration, kept as nothing.
  f.dep.announce(Rank{1}, kFlag, 1, kNoWrite4, 5);
  CHECK(f.dep.registrations() == 1);
  CHECK(f.dep.deposits() == 0);
  f.give_clock(Rank{1}, kFlag, 1, {0, 9, 0, 0});
  CHECK(f.pool.in_use() == 0);

  // Pending, then told it wrote nothing: clock first, value after.
  f.dep.announce(Rank{2}, kFlag, 2, kPending4, 0);
  f.give_clock(Rank{2}, kFlag, 2, {0, 0, 9, 0});
  CHECK(f.dep.deposits() == 1);
  CHECK(f.pool.in_use() == 1);
  f.dep.value(Rank{2}, kFlag, 2, kNoWrite4, 5);
  CHECK(f.dep.deposits() == 0);
  CHECK(f.pool.in_use() == 0);

  // Pending, told it wrote nothing, then its clock arrives.
  f.dep.announce(Rank{3}, kFlag, 3, kPending4, 0);
  f.dep.value(Rank{3}, kFlag, 3, kNoWrite4, 5);
  CHECK(f.dep.deposits() == 0);
  f.give_clock(Rank{3}, kFlag, 3, {0, 0, 0, 9});
  CHECK(f.pool.in_use() == 0);

  // None of them holds up or adds to a wait for the value they would have written.
  VectorClock clock(kWidth);
  std::vector<Rank> writers;
  const FlagWaitQuery q{kFlag, f.dep.registrations(), kWait4, 5};
  CHECK(f.missing(q).empty());
  REQUIRE(f.dep.wait(q, clock, writers));
  CHECK(values(clock) == Values(kWidth, 0));
  CHECK(writers.empty());
}

TEST_CASE("flag deposition: a clock for a deposit merged or dropped already goes back",
          "[vclock-parts][flag-deposition]") {
  Fixture f;
  f.dep.announce(Rank{1}, kFlag, 1, kStore4, 5);
  f.give_clock(Rank{1}, kFlag, 1, {0, 1, 0, 0});
  VectorClock clock(kWidth);
  std::vector<Rank> writers;
  REQUIRE(f.dep.wait({kFlag, f.dep.registrations(), kWait4, 5}, clock, writers));
  CHECK(f.dep.deposits() == 0);
  CHECK(f.pool.in_use() == 0);
  // A duplicate clock, and one for a write never announced.
  f.give_clock(Rank{1}, kFlag, 1, {0, 2, 0, 0});
  f.give_clock(Rank{2}, kFlag, 77, {0, 0, 2, 0});
  CHECK(f.pool.in_use() == 0);
  CHECK(f.dep.deposits() == 0);
}

TEST_CASE("flag deposition: after a wait the flag's deposits below the waiter's clock go",
          "[vclock-parts][flag-deposition]") {
  Fixture f;
  f.dep.announce(Rank{1}, kFlag, 1, kStore4, 1);  // below the clock after the wait
  f.give_clock(Rank{1}, kFlag, 1, {0, 2, 0, 0});
  f.dep.announce(Rank{2}, kFlag, 2, kStore4, 2);  // above it in one entry
  f.give_clock(Rank{2}, kFlag, 2, {0, 0, 9, 0});
  f.dep.announce(Rank{3}, kFlag, 3, kStore4, 3);  // below only once the merge is in
  f.give_clock(Rank{3}, kFlag, 3, {0, 0, 0, 4});
  f.dep.announce(Rank{3}, kFlag, 4, kStore4, 4);  // merged: entry 3 becomes 5
  f.give_clock(Rank{3}, kFlag, 4, {0, 0, 0, 5});
  f.dep.announce(Rank{3}, kFlag, 5, kStore4, 1);  // after the snapshot, below: goes too
  const std::uint64_t snapshot = f.dep.registrations() - 1;
  f.give_clock(Rank{3}, kFlag, 5, {0, 0, 0, 1});
  f.dep.announce(Rank{1}, kFlag, 6, kStore4, 1);  // no clock yet: stays
  // Another flag's deposit below the clock stays until its flag is waited for.
  f.dep.announce(Rank{1}, kOtherFlag, 1, kStore4, 1);
  f.give_clock(Rank{1}, kOtherFlag, 1, {0, 1, 0, 0});
  CHECK(f.dep.deposits() == 7);

  VectorClock clock = vc({0, 5, 5, 0});
  std::vector<Rank> writers;
  REQUIRE(f.dep.wait({kFlag, snapshot, kWait4, 4}, clock, writers));
  CHECK(values(clock) == Values{0, 5, 5, 5});
  CHECK(writers == std::vector<Rank>{Rank{3}});
  // Left: write 2 (above), write 6 (no clock), the other flag's.
  CHECK(f.dep.deposits() == 3);
  CHECK(f.pool.in_use() == 2);
  // Write 2 is still there for a wait that reads its value.
  std::vector<Rank> w2;
  REQUIRE(f.dep.wait({kFlag, snapshot, kWait4, 2}, clock, w2));
  CHECK(w2 == std::vector<Rank>{Rank{2}});
  CHECK(values(clock) == Values{0, 5, 9, 5});
}

TEST_CASE("flag deposition: maybe_sweep drops deposits below the clock once more than 1024",
          "[vclock-parts][flag-deposition]") {
  Fixture f;
  const Values now{10, 10, 10, 10};
  // 1024 deposits over several flags, every other one below `now`.
  std::size_t above = 0;
  for (std::uint64_t i = 0; i < 1024; ++i) {
    const bool is_above = i % 2 == 0;
    above += is_above;
    f.dep.announce(Rank{1}, kFlag + i % 7, i, kStore4, i);
    f.give_clock(Rank{1}, kFlag + i % 7, i, is_above ? Values{0, 11, 0, 0} : Values{0, 10, 3, 0});
  }
  REQUIRE(f.dep.deposits() == 1024);
  // Not many yet: nothing goes.
  f.dep.maybe_sweep(now);
  CHECK(f.dep.deposits() == 1024);
  CHECK(f.pool.in_use() == 1024);

  // One more (below, and on a flag of its own): now they do, on every flag.
  f.dep.announce(Rank{2}, kFlag + 100, 0, kStore4, 0);
  f.give_clock(Rank{2}, kFlag + 100, 0, {0, 0, 1, 0});
  // One without its clock yet cannot be judged: it stays.
  f.dep.announce(Rank{2}, kFlag + 101, 0, kStore4, 0);
  f.dep.maybe_sweep(now);
  CHECK(f.dep.deposits() == above + 1);
  CHECK(f.pool.in_use() == above);
  // Those left are whole: a wait on one of them still merges it.
  VectorClock clock(kWidth);
  std::vector<Rank> writers;
  REQUIRE(f.dep.wait({kFlag, f.dep.registrations(), kWait4, 0}, clock, writers));
  CHECK(writers == std::vector<Rank>{Rank{1}});
  CHECK(values(clock) == Values{0, 11, 0, 0});
}

TEST_CASE("flag deposition: what a wait merges does not depend on when values and clocks arrive",
          "[vclock-parts][flag-deposition]") {
  // Random writes, some with their value to come (some of those storing
  // nothing); their values and clocks arrive in a random order, a wait
  // retried after each. It must refuse exactly while a registration before
  // its snapshot misses what the rule needs, and then merge what the rule says.
  const FlagMode modes[] = {kFlagStore, kFlagUp, kFlagDown};
  for (std::uint32_t seed = 1; seed <= 200; ++seed) {
    std::mt19937 rng(seed);
    INFO("seed " << seed);
    ClockPool pool(kWidth);
    std::vector<Rank> writers;
    VectorClock clock(kWidth);
    {
      FlagDeposition dep;
      struct Write {
        Rank writer;
        std::uint64_t flag, id;
        std::uint16_t bits;      // final
        std::uint64_t value;     // final
        bool announced_pending;  // its value comes later
        Values clock;
        bool value_in = false, clock_in = false;
      };
      const int n = 1 + static_cast<int>(rng() % 12);
      const int before_snapshot = static_cast<int>(rng() % (n + 1));
      std::vector<Write> ws;
      std::uint64_t snapshot = 0;
      for (int i = 0; i < n; ++i) {
        if (i == before_snapshot) snapshot = dep.registrations();
        Write w;
        w.writer = Rank{static_cast<std::uint32_t>(rng() % kWidth)};
        w.flag = rng() % 5 == 0 ? kOtherFlag : kFlag;
        w.id = 1000 + i;
        const unsigned width = rng() % 6 == 0 ? 8 : 4;
        w.bits = rng() % 8 == 0 ? flag_bits(kFlagNoWrite, width, false)
                                : flag_bits(modes[rng() % 3], width, false);
        w.value = rng() % 7;
        w.announced_pending = rng() % 3 == 0;
        for (std::size_t e = 0; e < kWidth; ++e) w.clock.push_back(rng() % 10);
        if (w.announced_pending) {
          dep.announce(w.writer, w.flag, w.id, kPending4, 0);
        } else {
          dep.announce(w.writer, w.flag, w.id, w.bits, w.value);
          w.value_in = true;
        }
        ws.push_back(std::move(w));
      }
      if (before_snapshot == n) snapshot = dep.registrations();
      const bool is_signed = rng() % 2;
      const FlagWaitQuery q{kFlag, snapshot, flag_bits(kFlagPending, 4, is_signed),
                            rng() % 7};
      const Values start = [&] {
        Values v;
        for (std::size_t e = 0; e < kWidth; ++e) v.push_back(rng() % 6);
        return v;
      }();
      clock.assign(start);

      // The oracle, from the writes' final values.
      Values expected = start;
      std::vector<Rank> expected_writers;
      for (std::size_t i = 0; i < ws.size(); ++i)
        if (ws[i].flag == kFlag && static_cast<int>(i) < before_snapshot &&
            oracle_merges(ws[i].bits, ws[i].value, q.bits, q.value)) {
          expected = max_of(expected, ws[i].clock);
          expected_writers.push_back(ws[i].writer);
        }
      auto blocked = [&] {
        std::vector<MissingWrite> out;
        for (std::size_t i = 0; i < ws.size(); ++i) {
          const Write& w = ws[i];
          if (w.flag != kFlag || static_cast<int>(i) >= before_snapshot) continue;
          if (!w.value_in)
            out.push_back({w.writer, true});
          else if (!w.clock_in && oracle_merges(w.bits, w.value, q.bits, q.value))
            out.push_back({w.writer, false});
        }
        return out;
      };

      // The messages still to come, shuffled: values and clocks.
      std::vector<std::pair<std::size_t, bool>> msgs;  // (write, is value)
      for (std::size_t i = 0; i < ws.size(); ++i) {
        if (ws[i].announced_pending) msgs.push_back({i, true});
        msgs.push_back({i, false});
      }
      std::shuffle(msgs.begin(), msgs.end(), rng);
      bool done = false;
      for (std::size_t k = 0; k <= msgs.size(); ++k) {
        if (!done) {
          const std::vector<MissingWrite> exp_missing = blocked();
          std::vector<MissingWrite> got_missing;
          dep.any_missing(q, [&](const MissingWrite& m) {
            got_missing.push_back(m);
            return false;
          });
          REQUIRE(got_missing.size() == exp_missing.size());
          for (std::size_t j = 0; j < got_missing.size(); ++j) {
            CHECK(got_missing[j].writer == exp_missing[j].writer);
            CHECK(got_missing[j].value_pending == exp_missing[j].value_pending);
          }
          const bool ok = dep.wait(q, clock, writers);
          REQUIRE(ok == exp_missing.empty());
          if (ok) {
            CHECK(values(clock) == expected);
            CHECK(writers == expected_writers);
            done = true;
          } else {
            CHECK(values(clock) == start);
            CHECK(writers.empty());
          }
        }
        if (k == msgs.size()) break;
        Write& w = ws[msgs[k].first];
        if (msgs[k].second) {
          dep.value(w.writer, w.flag, w.id, w.bits, w.value);
          w.value_in = true;
        } else {
          dep.clock(w.writer, w.flag, w.id, pool.take_copy(w.clock));
          w.clock_in = true;
        }
      }
      CHECK(done);
      // Every clock held belongs to a deposit still kept.
      CHECK(pool.in_use() <= dep.deposits());
    }
    CHECK(pool.in_use() == 0);
  }
}
