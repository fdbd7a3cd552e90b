// The layouts clocks travel in between engines (engines/vclock/clock_codec.h).
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "../../engines/vclock/clock_codec.h"
#include "../../engines/vclock/messages.h"

using namespace vcx;
using namespace vcx::vclock;

namespace {

std::vector<std::uint8_t> encode(const std::vector<ClockValue>& c, ClockLayout layout) {
  std::vector<std::uint8_t> out(layout.bytes());
  encode_clock(c.data(), static_cast<std::uint32_t>(c.size()), layout, out.data());
  return out;
}

std::vector<ClockValue> decode(const std::vector<std::uint8_t>& bytes, ClockLayout layout,
                               std::uint32_t width, bool* ok = nullptr) {
  std::vector<ClockValue> out(width, 0xdeadbeef);
  const bool good = decode_clock(bytes, static_cast<std::uint8_t>(layout.encoding),
                                 layout.items, width, out.data());
  if (ok) *ok = good;
  return out;
}

// The smallest of the four layouts, counted independently of the codec.
std::size_t smallest_bytes(const std::vector<ClockValue>& c) {
  std::size_t non_zero = 0;
  bool narrow = true;
  for (ClockValue v : c) {
    non_zero += v != 0;
    narrow = narrow && v <= 0xffffffffu;
  }
  const std::size_t dense = c.size() * (narrow ? 4 : 8);
  const std::size_t sparse = non_zero * (narrow ? 8 : 12);
  return std::min(dense, sparse);
}

}  // namespace

TEST_CASE("clock codec: every layout a clock can take reads back the same clock",
          "[vclock][codec]") {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 400; ++round) {
    const std::uint32_t width = 1 + rng() % 70;
    const int density = static_cast<int>(rng() % 4);  // none, few, half, all non-zero
    const bool wide = rng() % 3 == 0;
    std::vector<ClockValue> c(width, 0);
    for (auto& v : c) {
      const bool set = density == 3 || (density == 2 && rng() % 2) || (density == 1 && rng() % 8 == 0);
      if (!set) continue;
      v = 1 + rng() % 1000;
      if (wide && rng() % 4 == 0) v += std::uint64_t{1} << 32;
    }
    bool narrow = true;
    for (ClockValue v : c) narrow = narrow && v <= 0xffffffffu;
    std::uint32_t non_zero = 0;
    for (ClockValue v : c) non_zero += v != 0;

    std::vector<ClockLayout> fitting = {{ClockEncoding::Dense64, width},
                                        {ClockEncoding::Sparse64, non_zero}};
    if (narrow) {
      fitting.push_back({ClockEncoding::Dense32, width});
      fitting.push_back({ClockEncoding::Sparse32, non_zero});
    }
    for (const ClockLayout& layout : fitting) {
      bool ok = false;
      const auto back = decode(encode(c, layout), layout, width, &ok);
      REQUIRE(ok);
      REQUIRE(back == c);
    }
    const ClockLayout chosen = choose_layout(c.data(), width);
    CHECK(chosen.bytes() == smallest_bytes(c));
    bool ok = false;
    CHECK(decode(encode(c, chosen), chosen, width, &ok) == c);
    CHECK(ok);
  }
}

TEST_CASE("clock codec: entries past 2^32 keep all 64 bits", "[vclock][codec]") {
  std::vector<ClockValue> c = {3, std::numeric_limits<std::uint32_t>::max(), 0, 0};
  CHECK(choose_layout(c.data(), 4).encoding == ClockEncoding::Dense32);
  c[2] = std::uint64_t{1} << 32;
  const ClockLayout wide = choose_layout(c.data(), 4);
  CHECK(wide.encoding == ClockEncoding::Dense64);
  CHECK(decode(encode(c, wide), wide, 4) == c);

  std::vector<ClockValue> one_big(64, 0);
  one_big[40] = std::numeric_limits<ClockValue>::max();
  const ClockLayout sparse = choose_layout(one_big.data(), 64);
  CHECK(sparse.encoding == ClockEncoding::Sparse64);
  CHECK(sparse.items == 1);
  CHECK(decode(encode(one_big, sparse), sparse, 64) == one_big);
}

TEST_CASE("clock codec: an all-zero clock travels as no pairs at all", "[vclock][codec]") {
  const std::vector<ClockValue> zero(16, 0);
  const ClockLayout layout = choose_layout(zero.data(), 16);
  CHECK(layout.encoding == ClockEncoding::Sparse32);
  CHECK(layout.bytes() == 0);
  CHECK(decode({}, layout, 16) == zero);
}

TEST_CASE("clock codec: bytes that cannot be a clock of this job are refused",
          "[vclock][codec]") {
  const std::vector<ClockValue> c = {1, 0, 0, 9};
  const ClockLayout sparse{ClockEncoding::Sparse32, 2};
  auto bytes = encode(c, sparse);
  bool ok = true;
  decode(bytes, sparse, 3, &ok);  // index 3 lies outside a 3-entry clock
  CHECK_FALSE(ok);
  bytes.pop_back();
  decode(bytes, sparse, 4, &ok);  // short
  CHECK_FALSE(ok);

  const ClockLayout dense{ClockEncoding::Dense32, 4};
  const auto dense_bytes = encode(c, dense);
  decode(dense_bytes, dense, 5, &ok);  // another job's width
  CHECK_FALSE(ok);
  std::vector<ClockValue> out(4);
  CHECK_FALSE(decode_clock(dense_bytes, 4, 4, 4, out.data()));  // unknown encoding
}

TEST_CASE("clock codec: a packed message is its header then the chosen layout",
          "[vclock][codec]") {
  std::vector<ClockValue> c(100, 0);
  c[5] = 7;
  c[99] = 8;
  P2PHeader h{};
  h.type = MsgType::Signal;
  h.seq = 42;
  std::vector<std::uint8_t> out;
  pack_message(h, c.data(), 100, out);
  REQUIRE(out.size() == sizeof(P2PHeader) + 2 * 8);
  P2PHeader back;
  std::memcpy(&back, out.data(), sizeof back);
  CHECK(back.seq == 42);
  CHECK(back.encoding == static_cast<std::uint8_t>(ClockEncoding::Sparse32));
  CHECK(back.width == 2);
  std::vector<ClockValue> read(100);
  CHECK(decode_clock(std::span(out).subspan(sizeof back), back.encoding, back.width, 100,
                     read.data()));
  CHECK(read == c);

  pack_message(h, nullptr, 100, out);  // a message without a clock
  CHECK(out.size() == sizeof(P2PHeader));
  std::memcpy(&back, out.data(), sizeof back);
  CHECK(back.width == 0);
}

// ---------------------------------------------------------------------------
// Differential clocks: a pair's sequence of clocks against its baseline

namespace {

// Bytes of the smallest layout for `c` on a pair whose baseline is `base`,
// counted independently of the codec.
std::size_t smallest_bytes(const std::vector<ClockValue>& c, const std::vector<ClockValue>& base) {
  std::size_t changed = 0;
  bool narrow = true;
  for (std::size_t i = 0; i < c.size(); ++i) {
    changed += c[i] != base[i];
    narrow = narrow && c[i] <= 0xffffffffu;
  }
  return std::min(smallest_bytes(c), changed * (narrow ? 8 : 12));
}

}  // namespace

TEST_CASE("clock codec: a pair's clocks against its baseline read back exactly, each in the "
          "smallest layout",
          "[vclock][codec]") {
  std::mt19937_64 rng(11);
  std::size_t deltas = 0, plain = 0;
  for (int pair = 0; pair < 60; ++pair) {
    const std::uint32_t width = 1 + rng() % 90;
    std::vector<ClockValue> sender_base(width, 0), receiver_base(width, 0), c(width, 0);
    std::vector<std::uint8_t> out;
    for (int message = 0; message < 40; ++message) {
      // Mostly growth in a few entries, as a rank's clock grows; sometimes
      // a clock that is not the last one's successor (an all-to-all's up
      // half, a lock's older release): entries drop, even to 0.
      const int kind = static_cast<int>(rng() % 6);
      for (auto& v : c) {
        if (kind == 0 && rng() % 2) v = 0;
        if (kind == 1) v = rng() % 3 ? v + rng() % 5 : 0;
        if (kind >= 2 && rng() % 10 == 0) v += 1 + rng() % 100;
        if (kind == 5 && rng() % 7 == 0) v += std::uint64_t{1} << 32;
      }
      INFO("pair " << pair << " message " << message << " width " << width);
      const std::size_t want_bytes = smallest_bytes(c, sender_base);
      P2PHeader h{};
      h.type = MsgType::Signal;
      pack_message(h, c.data(), width, out, sender_base.data());
      CHECK(sender_base == c);
      P2PHeader got;
      std::memcpy(&got, out.data(), sizeof got);
      REQUIRE((got.encoding & kEncodingKeep) != 0);
      const std::uint8_t layout = got.encoding & ~kEncodingKeep;
      CHECK(out.size() - sizeof got == want_bytes);
      (layout & kEncodingDelta ? deltas : plain) += 1;
      std::vector<ClockValue> back(width, 0xdeadbeef);
      REQUIRE(decode_clock(std::span<const std::uint8_t>(out).subspan(sizeof got), layout,
                           got.width, width, back.data(), receiver_base.data()));
      REQUIRE(back == c);
      receiver_base = back;
    }
  }
  // Both kinds of layouts occur, or the test proves nothing about either.
  CHECK(deltas > 100);
  CHECK(plain > 100);
}

TEST_CASE("clock codec: without a baseline nothing keeps and no delta is chosen",
          "[vclock][codec]") {
  const std::vector<ClockValue> c{0, 5, 0, 7};
  std::vector<std::uint8_t> out;
  P2PHeader h{};
  h.type = MsgType::Signal;
  pack_message(h, c.data(), 4, out);
  P2PHeader got;
  std::memcpy(&got, out.data(), sizeof got);
  CHECK((got.encoding & (kEncodingKeep | kEncodingDelta)) == 0);
}

TEST_CASE("clock codec: delta bytes that cannot be a clock are refused", "[vclock][codec]") {
  const std::vector<ClockValue> base{1, 2, 3};
  std::vector<ClockValue> c = base;
  c[1] = 9;
  const ClockLayout delta = choose_layout(c.data(), base.data(), 3);
  REQUIRE(delta.encoding == ClockEncoding::Delta32);
  REQUIRE(delta.items == 1);
  std::vector<std::uint8_t> bytes(delta.bytes());
  encode_clock(c.data(), 3, delta, bytes.data(), base.data());
  std::vector<ClockValue> out(3);
  const auto enc = static_cast<std::uint8_t>(delta.encoding);
  CHECK(decode_clock(bytes, enc, 1, 3, out.data(), base.data()));
  CHECK(out == c);
  // No baseline to apply it to.
  CHECK_FALSE(decode_clock(bytes, enc, 1, 3, out.data(), nullptr));
  // An index outside the clock.
  CHECK_FALSE(decode_clock(bytes, enc, 1, 1, out.data(), base.data()));
  // The delta bit without pairs is no layout.
  CHECK_FALSE(decode_clock(bytes, kEncodingDelta, 1, 3, out.data(), base.data()));
  CHECK_FALSE(decode_clock(bytes, kEncodingDelta | kEncodingNarrow, 1, 3, out.data(), base.data()));
  CHECK_FALSE(decode_clock(bytes, 8, 1, 3, out.data(), base.data()));
}
