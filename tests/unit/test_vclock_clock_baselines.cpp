// Which pairs keep baselines for differential clocks, and how much memory
// they take (engines/vclock/clock_baselines.h).
#include <catch2/catch.hpp>

#include "../../engines/vclock/clock_baselines.h"
#include "../../engines/vclock/vclock_options.h"

using namespace vcx;
using namespace vcx::vclock;
using Mode = PeerBaselines::Mode;

namespace {

constexpr std::uint64_t kClock8 = 8 * sizeof(ClockValue);  // one baseline at 8 ranks

}  // namespace

TEST_CASE("baselines: the engine's declared default is the budget's", "[vclock][diff]") {
  CHECK(vcx::option_count(vcx::Options{}, vcx::vclock::kVclockOptions, "vclock.diff-bytes") ==
        vcx::vclock::kDefaultDiffBytes);
}

TEST_CASE("baselines: the budget picks the mode", "[vclock][diff]") {
  CHECK(PeerBaselines(Rank{0}, 8, 0).mode() == Mode::Off);
  CHECK(PeerBaselines(Rank{0}, 8, 2 * kClock8 - 1).mode() == Mode::Off);
  const PeerBaselines one(Rank{0}, 8, 2 * kClock8);
  CHECK(one.mode() == Mode::Granted);
  CHECK(one.slots() == 1);
  CHECK(PeerBaselines(Rank{0}, 8, 2 * 6 * kClock8).slots() == 6);
  CHECK(PeerBaselines(Rank{0}, 8, 2 * 6 * kClock8).mode() == Mode::Granted);
  const PeerBaselines all(Rank{0}, 8, 2 * 7 * kClock8);
  CHECK(all.mode() == Mode::Implicit);
  CHECK(all.slots() == 7);
  CHECK(PeerBaselines(Rank{3}, 8, kDefaultDiffBytes).mode() == Mode::Implicit);
  // The default holds a baseline for every peer up to 2048 ranks.
  CHECK(PeerBaselines(Rank{0}, 2048, kDefaultDiffBytes).mode() == Mode::Implicit);
  CHECK(PeerBaselines(Rank{0}, 2049, kDefaultDiffBytes).mode() == Mode::Granted);
}

TEST_CASE("baselines: implicit pairs keep from the first clock, never with oneself",
          "[vclock][diff]") {
  PeerBaselines b(Rank{1}, 4, kDefaultDiffBytes);
  CHECK(b.sending(Rank{1}) == nullptr);
  ClockValue* to2 = b.sending(Rank{2});
  REQUIRE(to2 != nullptr);
  for (int i = 0; i < 4; ++i) CHECK(to2[i] == 0);
  CHECK(b.sending(Rank{2}) == to2);
  const auto a = b.receiving(Rank{3}, true);
  CHECK(a.base != nullptr);
  CHECK_FALSE(a.offer);
  CHECK_FALSE(a.invalid);
  CHECK(b.receiving(Rank{3}, true).base == a.base);
  CHECK(b.baselines_held() == 2);
  // A plain clock from a peer means it runs with another budget.
  CHECK(b.receiving(Rank{0}, false).invalid);
  CHECK(b.receiving(Rank{1}, true).invalid);
  CHECK_FALSE(b.receiving(Rank{1}, false).invalid);
  CHECK_FALSE(b.take_offer(Rank{2}));
}

TEST_CASE("baselines: granted pairs, one room each way", "[vclock][diff]") {
  PeerBaselines b(Rank{0}, 8, 2 * kClock8);
  REQUIRE(b.mode() == Mode::Granted);
  // Sending keeps nothing before an offer is taken.
  CHECK(b.sending(Rank{1}) == nullptr);
  // The first plain clock from a peer gets an offer; the room is then taken,
  // so the next new peer is refused, for good.
  auto a = b.receiving(Rank{1}, false);
  CHECK(a.offer);
  CHECK(a.base == nullptr);
  CHECK_FALSE(b.receiving(Rank{1}, false).offer);  // sent before the offer arrived
  CHECK_FALSE(b.receiving(Rank{2}, false).offer);
  CHECK_FALSE(b.receiving(Rank{2}, false).offer);
  CHECK(b.receiving(Rank{2}, true).invalid);        // never offered
  // Peer 1 took it: its clocks keep, the first against zeros.
  a = b.receiving(Rank{1}, true);
  REQUIRE(a.base != nullptr);
  for (int i = 0; i < 8; ++i) CHECK(a.base[i] == 0);
  CHECK(b.receiving(Rank{1}, false).invalid);       // no way back to plain clocks
  // Offers to send: the first is taken, the second declined.
  CHECK(b.take_offer(Rank{5}));
  CHECK(b.sending(Rank{5}) != nullptr);
  CHECK_FALSE(b.take_offer(Rank{6}));
  CHECK(b.sending(Rank{6}) == nullptr);
  CHECK(b.baselines_held() == 2);
  CHECK_FALSE(b.declined(Rank{1}));  // it did not decline: it keeps
}

TEST_CASE("baselines: a declined offer frees the room for the next peer", "[vclock][diff]") {
  PeerBaselines b(Rank{0}, 8, 2 * kClock8);
  CHECK(b.receiving(Rank{3}, false).offer);
  CHECK_FALSE(b.receiving(Rank{4}, false).offer);  // no room: refused
  CHECK(b.declined(Rank{3}));
  CHECK_FALSE(b.declined(Rank{3}));
  CHECK(b.receiving(Rank{3}, true).invalid);
  CHECK(b.receiving(Rank{5}, false).offer);        // the room again
  CHECK_FALSE(b.receiving(Rank{4}, false).offer);  // refused stays refused
  CHECK(b.baselines_held() == 0);
}
