// How a clock travels between engines: the smallest of six layouts.
//
//   Dense64   width entries of 8 bytes
//   Dense32   width entries of 4 bytes (every entry below 2^32)
//   Sparse64  (u32 index, u64 value) for each non-zero entry
//   Sparse32  (u32 index, u32 value) for each non-zero entry below 2^32
//   Delta64   (u32 index, u64 value) for each entry that differs from the
//   Delta32   pair's baseline, the last clock sent from this engine to that
//             one (differential transmission, clock_baselines.h)
//
// A message whose encoding carries kEncodingKeep updates the pair's baseline
// on both sides: the sender's before it leaves, the receiver's once decoded;
// one carrying kEncodingAside leaves the baseline alone on both sides.
// The tool transports keep each ordered pair FIFO, so both sides see the same
// sequence of baselines. The receiver rebuilds the whole clock before it is
// stored, so a clock consumed long after it arrived (a receive that matches
// a later message first) is the one that was sent.
//
// Entries stay 64-bit in the engines; 4-byte entries only shrink the wire
// (an entry reaches 2^32 after four billion events of one rank, and then that
// message falls back to 8 bytes). Sparse pays where most entries are zero: an
// all-to-all's up message on the world carries only the subtree's own entries
// (collectives.cpp), early clocks know of few ranks. Choosing costs one pass
// over the clock, as copying it did.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <vector>

#include "vcx/types.h"

namespace vcx::vclock {

enum class ClockEncoding : std::uint8_t {
  Dense64 = 0,
  Dense32 = 1,
  Sparse64 = 2,
  Sparse32 = 3,
  Delta64 = 6,
  Delta32 = 7,
};
inline constexpr std::uint8_t kEncodingNarrow = 1;  // 4-byte values
inline constexpr std::uint8_t kEncodingSparse = 2;  // (index, value) pairs
inline constexpr std::uint8_t kEncodingDelta = 4;   // pairs against the baseline
inline constexpr std::uint8_t kEncodingKeep = 8;    // not a layout: keep as the baseline
// Not a layout: a clock sent out of the engine's program order (an
// all-to-all contribution sent as its call is queued), in a plain layout
// that neither side takes as, or compares with, the pair's baseline, so
// that the baselines follow the messages sent in program order alone.
inline constexpr std::uint8_t kEncodingAside = 16;

inline constexpr std::size_t encoded_item_bytes(ClockEncoding e) {
  const auto bits = static_cast<std::uint8_t>(e);
  const std::size_t value = (bits & kEncodingNarrow) ? 4 : 8;
  return (bits & kEncodingSparse) ? 4 + value : value;
}
static_assert(encoded_item_bytes(ClockEncoding::Dense64) == 8);
static_assert(encoded_item_bytes(ClockEncoding::Dense32) == 4);
static_assert(encoded_item_bytes(ClockEncoding::Sparse64) == 12);
static_assert(encoded_item_bytes(ClockEncoding::Sparse32) == 8);
static_assert(encoded_item_bytes(ClockEncoding::Delta64) == 12);
static_assert(encoded_item_bytes(ClockEncoding::Delta32) == 8);

inline constexpr bool is_delta(ClockEncoding e) {
  return (static_cast<std::uint8_t>(e) & kEncodingDelta) != 0;
}

struct ClockLayout {
  ClockEncoding encoding = ClockEncoding::Dense64;
  std::uint32_t items = 0;  // entries (dense) or pairs (sparse)
  std::size_t bytes() const { return items * encoded_item_bytes(encoding); }
};

// The smallest layout for `clock`, one pass over it. With `base`, the
// baseline of the pair it is sent on, the entries that differ from it
// compete too. Ties go to dense, then to the layouts without a baseline
// (cheaper to decode).
inline ClockLayout choose_layout(const ClockValue* clock, const ClockValue* base,
                                 std::uint32_t width) {
  std::uint32_t non_zero = 0, changed = 0;
  ClockValue largest = 0;
  for (std::uint32_t i = 0; i < width; ++i) {
    non_zero += clock[i] != 0;
    if (base) changed += clock[i] != base[i];
    largest = std::max(largest, clock[i]);
  }
  const bool narrow = largest <= std::numeric_limits<std::uint32_t>::max();
  const ClockEncoding dense = narrow ? ClockEncoding::Dense32 : ClockEncoding::Dense64;
  const ClockEncoding sparse = narrow ? ClockEncoding::Sparse32 : ClockEncoding::Sparse64;
  const ClockEncoding delta = narrow ? ClockEncoding::Delta32 : ClockEncoding::Delta64;
  ClockLayout best{dense, width};
  if (std::size_t{non_zero} * encoded_item_bytes(sparse) < best.bytes()) best = {sparse, non_zero};
  if (base && std::size_t{changed} * encoded_item_bytes(delta) < best.bytes())
    best = {delta, changed};
  return best;
}
inline ClockLayout choose_layout(const ClockValue* clock, std::uint32_t width) {
  return choose_layout(clock, nullptr, width);
}

// Writes `clock` in `layout` at `out`, which has layout.bytes() of room;
// `base` is the pair's baseline (needed by the delta layouts only).
inline void encode_clock(const ClockValue* clock, std::uint32_t width, ClockLayout layout,
                         std::uint8_t* out, const ClockValue* base = nullptr) {
  switch (layout.encoding) {
    case ClockEncoding::Dense64:
      std::memcpy(out, clock, std::size_t{width} * sizeof(ClockValue));
      return;
    case ClockEncoding::Dense32:
      for (std::uint32_t i = 0; i < width; ++i, out += 4) {
        const auto v = static_cast<std::uint32_t>(clock[i]);
        std::memcpy(out, &v, 4);
      }
      return;
    case ClockEncoding::Sparse64:
    case ClockEncoding::Sparse32:
    case ClockEncoding::Delta64:
    case ClockEncoding::Delta32: {
      // Pairs for the entries that differ from 0 (sparse) or from the baseline.
      const bool narrow = (static_cast<std::uint8_t>(layout.encoding) & kEncodingNarrow) != 0;
      const bool delta = is_delta(layout.encoding);
      for (std::uint32_t i = 0; i < width; ++i) {
        if (clock[i] == (delta ? base[i] : 0)) continue;
        std::memcpy(out, &i, 4);
        if (narrow) {
          const auto v = static_cast<std::uint32_t>(clock[i]);
          std::memcpy(out + 4, &v, 4);
          out += 8;
        } else {
          std::memcpy(out + 4, &clock[i], 8);
          out += 12;
        }
      }
      return;
    }
  }
}

// Reads a clock of `width` entries written by encode_clock (`encoding`
// without kEncodingKeep); a delta layout is applied to `base`, the pair's
// baseline. False when the bytes cannot be one: a wrong size, an unknown
// encoding, an index outside the clock, a delta without a baseline.
inline bool decode_clock(std::span<const std::uint8_t> in, std::uint8_t encoding,
                         std::uint32_t items, std::uint32_t width, ClockValue* out,
                         const ClockValue* base = nullptr) {
  if (encoding > static_cast<std::uint8_t>(ClockEncoding::Delta32) ||
      (encoding & (kEncodingDelta | kEncodingSparse)) == kEncodingDelta)
    return false;
  const ClockLayout layout{static_cast<ClockEncoding>(encoding), items};
  if (in.size() != layout.bytes()) return false;
  const std::uint8_t* p = in.data();
  switch (layout.encoding) {
    case ClockEncoding::Dense64:
      if (items != width) return false;
      std::memcpy(out, p, std::size_t{width} * sizeof(ClockValue));
      return true;
    case ClockEncoding::Dense32:
      if (items != width) return false;
      for (std::uint32_t i = 0; i < width; ++i, p += 4) {
        std::uint32_t v;
        std::memcpy(&v, p, 4);
        out[i] = v;
      }
      return true;
    case ClockEncoding::Sparse64:
    case ClockEncoding::Sparse32:
    case ClockEncoding::Delta64:
    case ClockEncoding::Delta32: {
      if (items > width) return false;
      const bool narrow = (encoding & kEncodingNarrow) != 0;
      if (!is_delta(layout.encoding))
        std::fill_n(out, width, ClockValue{0});
      else if (base)
        std::copy_n(base, width, out);
      else
        return false;
      for (std::uint32_t k = 0; k < items; ++k) {
        std::uint32_t index;
        std::memcpy(&index, p, 4);
        if (index >= width) return false;
        if (narrow) {
          std::uint32_t v;
          std::memcpy(&v, p + 4, 4);
          out[index] = v;
          p += 8;
        } else {
          std::memcpy(&out[index], p + 4, 8);
          p += 12;
        }
      }
      return true;
    }
  }
  return false;
}

// Header then clock, in the smallest layout, into `out` (its capacity is
// reserved once, so sending allocates nothing). Header types carry the
// layout in `encoding` and the item count in `width`. With `base`, the pair's
// baseline, the delta layouts compete too, the message tells the receiver to
// keep the clock as the new baseline, and `base` becomes `clock`.
template <class Header>
void pack_message(Header h, const ClockValue* clock, std::uint32_t width,
                  std::vector<std::uint8_t>& out, ClockValue* base = nullptr) {
  ClockLayout layout{};
  if (clock) layout = choose_layout(clock, base, width);
  h.encoding = static_cast<std::uint8_t>(layout.encoding);
  if (clock && base) h.encoding |= kEncodingKeep;
  h.width = clock ? layout.items : 0;
  out.resize(sizeof h + layout.bytes());
  std::memcpy(out.data(), &h, sizeof h);
  if (!clock) return;
  encode_clock(clock, width, layout, out.data() + sizeof h, base);
  if (base) std::copy_n(clock, width, base);
}

}  // namespace vcx::vclock
