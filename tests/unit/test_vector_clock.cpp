// Vector clock primitives against a naive element-by-element reference, on
// random vectors of many sizes (odd ones too, so a vectorised loop's tail is
// exercised) and values across the whole 64-bit range.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "vcx/vector_clock.h"

using namespace vcx;

namespace {

using Vec = std::vector<ClockValue>;

Vec ref_merge(const Vec& a, const Vec& b) {
  Vec r(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) r[i] = a[i] > b[i] ? a[i] : b[i];
  return r;
}

bool ref_leq(const Vec& a, const Vec& b) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] > b[i]) return false;
  return true;
}

// Values drawn so that equal, adjacent and extreme entries all occur often:
// a comparison written with the wrong operator or a narrowing cast shows up.
ClockValue draw(std::mt19937_64& rng) {
  switch (rng() % 6) {
    case 0:
      return 0;
    case 1:
      return rng() % 4;
    case 2:
      return std::numeric_limits<ClockValue>::max() - rng() % 3;
    case 3:
      return (ClockValue{1} << 32) + rng() % 3 - 1;  // around the 32-bit boundary
    default:
      return rng();
  }
}

Vec random_vec(std::mt19937_64& rng, std::size_t n) {
  Vec v(n);
  for (auto& x : v) x = draw(rng);
  return v;
}

// b derived from a so that leq/equal are true often enough to matter.
Vec related_vec(std::mt19937_64& rng, const Vec& a) {
  Vec b = a;
  for (auto& x : b) {
    switch (rng() % 4) {
      case 0:
        break;
      case 1:
        if (x != std::numeric_limits<ClockValue>::max()) ++x;
        break;
      case 2:
        if (x != 0) --x;
        break;
      default:
        x = draw(rng);
    }
  }
  return b;
}

}  // namespace

TEST_CASE("clock_merge, clock_leq and clock_equal agree with a naive reference", "[vclock]") {
  std::mt19937_64 rng(0x5eed0001);
  for (int iter = 0; iter < 4000; ++iter) {
    const std::size_t n = rng() % 70;
    const Vec a = random_vec(rng, n);
    const Vec b = (rng() % 2) ? related_vec(rng, a) : random_vec(rng, n);
    INFO("n=" << n << " a=" << clock_to_string(a) << " b=" << clock_to_string(b));

    Vec m = a;
    clock_merge(m, b);
    REQUIRE(m == ref_merge(a, b));

    REQUIRE(clock_leq(a, b) == ref_leq(a, b));
    REQUIRE(clock_leq(b, a) == ref_leq(b, a));
    REQUIRE(clock_equal(a, b) == (a == b));
    REQUIRE(clock_equal(a, a));

    // Lattice laws: the merge is an upper bound of both, and the least one.
    REQUIRE(clock_leq(a, m));
    REQUIRE(clock_leq(b, m));
    Vec m2 = b;
    clock_merge(m2, a);
    REQUIRE(m2 == m);  // commutative
    Vec idem = m;
    clock_merge(idem, a);
    REQUIRE(idem == m);  // merging what is already included changes nothing
  }
}

TEST_CASE("leq is false as soon as one entry is larger, wherever it is", "[vclock]") {
  for (std::size_t n = 1; n <= 40; ++n) {
    for (std::size_t k = 0; k < n; ++k) {
      Vec a(n, 5), b(n, 5);
      a[k] = 6;
      INFO("n=" << n << " k=" << k);
      CHECK_FALSE(clock_leq(a, b));
      CHECK(clock_leq(b, a));
      CHECK_FALSE(clock_equal(a, b));
      Vec m = b;
      clock_merge(m, a);
      CHECK(m == a);
    }
  }
}

TEST_CASE("clocks of different sizes are never equal", "[vclock]") {
  const Vec a{1, 2, 3};
  const Vec b{1, 2, 3, 0};
  CHECK_FALSE(clock_equal(a, b));
  CHECK_FALSE(clock_equal(b, a));
  CHECK(clock_equal(Vec{}, Vec{}));
}

TEST_CASE("VectorClock tick, merge, assign and reset follow the reference", "[vclock]") {
  std::mt19937_64 rng(0x5eed0002);
  for (int iter = 0; iter < 500; ++iter) {
    const std::size_t n = 1 + rng() % 33;
    VectorClock vc(n);
    Vec ref(n, 0);
    REQUIRE(vc.size() == n);
    for (int step = 0; step < 40; ++step) {
      if (rng() % 3 == 0) {
        const Vec other = random_vec(rng, n);
        vc.merge(other);
        ref = ref_merge(ref, other);
      } else {
        const auto self = static_cast<std::uint32_t>(rng() % n);
        if (ref[self] == std::numeric_limits<ClockValue>::max()) continue;
        vc.tick(Rank{self});
        ++ref[self];
      }
      REQUIRE(Vec(vc.view().begin(), vc.view().end()) == ref);
    }
    for (std::size_t i = 0; i < n; ++i) REQUIRE(vc[i] == ref[i]);

    VectorClock copy;
    copy.assign(vc);
    REQUIRE(copy == vc);
    copy.tick(Rank{0});
    REQUIRE_FALSE(copy == vc);

    vc.reset(n + 1);
    REQUIRE(vc.size() == n + 1);
    REQUIRE(std::all_of(vc.view().begin(), vc.view().end(), [](ClockValue v) { return v == 0; }));
  }
}

TEST_CASE("tick changes only its own entry, by exactly one", "[vclock]") {
  VectorClock vc(5);
  vc[0] = 7;
  vc[4] = 9;
  vc.tick(Rank{2});
  CHECK(clock_to_string(vc) == "[7,0,1,0,9]");
  vc.tick(Rank{2});
  vc.tick(Rank{4});
  CHECK(clock_to_string(vc) == "[7,0,2,0,10]");
}

TEST_CASE("clock_to_string prints the entries in order", "[vclock]") {
  CHECK(clock_to_string(Vec{}) == "[]");
  CHECK(clock_to_string(Vec{3}) == "[3]");
  CHECK(clock_to_string(Vec{1, 0, 18446744073709551615ULL}) == "[1,0,18446744073709551615]");
}
