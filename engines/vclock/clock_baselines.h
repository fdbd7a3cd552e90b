// Differential clock transmission (Singhal and Kshemkalyani): an engine keeps,
// for each peer it exchanges clocks with, the last clock sent on that ordered
// pair (its baseline), and sends only the entries that changed when that is
// smaller than the whole clock (clock_codec.h, the delta layouts). The
// receiver keeps the same baseline and rebuilds the whole clock.
//
// A baseline costs a clock (8 bytes per rank) on each side of a pair, so the
// memory is bounded (`vclock.diff-bytes`, per engine, half for each
// direction):
//
//   Implicit   the budget holds a baseline for every peer in both directions.
//              Every pair starts with an all-zero baseline (allocated at its
//              first message) and every clock message keeps.
//   Granted    otherwise a receiver grants a baseline: at the first clock
//              from a peer it reserves one if it has room left and sends
//              DiffOffer; the sender takes it if it has room left for one
//              more (from then on its clocks keep, the first against zeros)
//              or answers DiffDecline, which frees the receiver's room. A
//              receiver never keeps for a peer it did not offer to.
//   Off        a budget below one baseline per direction (0 turns it off).
//
// Whichever mode, both sides of a pair hold the same baseline after each
// message, so the clocks delivered are exactly the clocks sent.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "vcx/types.h"

namespace vcx::vclock {

inline constexpr std::uint64_t kDefaultDiffBytes = std::uint64_t{64} << 20;

class PeerBaselines {
 public:
  enum class Mode : std::uint8_t { Off, Granted, Implicit };

  PeerBaselines(Rank self, std::uint32_t world, std::uint64_t budget_bytes);

  Mode mode() const { return mode_; }
  // Baselines each direction may hold (Granted: also how many peers).
  std::uint32_t slots() const { return slots_; }

  // ---- sending ----
  // The baseline to encode a clock for dst against (pack_message updates it),
  // or nullptr: send a plain layout and keep nothing.
  ClockValue* sending(Rank dst);
  // A DiffOffer from `src`: true when taken (this engine's clocks to src keep
  // from now on); false when the sender must answer DiffDecline.
  bool take_offer(Rank src);

  // ---- receiving ----
  // What to do with a clock message from `src` that keeps (or not).
  struct Arrival {
    ClockValue* base = nullptr;  // decode against it, then copy the clock into it
    bool offer = false;          // send src a DiffOffer now
    bool invalid = false;        // src keeps without an offer: a protocol error
  };
  Arrival receiving(Rank src, bool keeps);
  // A DiffDecline from `src`: frees the room reserved for it.
  bool declined(Rank src);

  // Counters for the tool's statistics.
  std::uint32_t baselines_held() const { return held_out_ + held_in_; }

 private:
  enum class In : std::uint8_t { None, Offered, Keeping, Refused };
  enum class Out : std::uint8_t { None, Keeping, Declined };

  ClockValue* allocate(std::unique_ptr<ClockValue[]>& slot);

  Rank self_;
  std::uint32_t width_;
  Mode mode_ = Mode::Off;
  std::uint32_t slots_ = 0;
  std::uint32_t reserved_in_ = 0;  // Granted: rooms offered or in use
  std::uint32_t taken_out_ = 0;    // Granted: offers taken
  std::uint32_t held_out_ = 0, held_in_ = 0;
  std::vector<In> in_state_;
  std::vector<Out> out_state_;
  std::vector<std::unique_ptr<ClockValue[]>> out_, in_;
};

}  // namespace vcx::vclock
