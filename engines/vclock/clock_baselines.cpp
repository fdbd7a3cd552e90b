#include "clock_baselines.h"

#include <algorithm>

namespace vcx::vclock {

PeerBaselines::PeerBaselines(Rank self, std::uint32_t world, std::uint64_t budget_bytes)
    : self_(self), width_(world) {
  const std::uint64_t per_baseline = std::uint64_t{world} * sizeof(ClockValue);
  const std::uint64_t per_direction = per_baseline ? budget_bytes / 2 / per_baseline : 0;
  const std::uint64_t peers = world > 0 ? world - 1 : 0;
  if (per_direction == 0) return;
  if (per_direction >= peers) {
    mode_ = Mode::Implicit;
    slots_ = static_cast<std::uint32_t>(peers);
  } else {
    mode_ = Mode::Granted;
    slots_ = static_cast<std::uint32_t>(per_direction);
    in_state_.assign(world, In::None);
    out_state_.assign(world, Out::None);
  }
  out_.resize(world);
  in_.resize(world);
}

ClockValue* PeerBaselines::allocate(std::unique_ptr<ClockValue[]>& slot) {
  // Once per pair and direction, never per message.
  slot = std::make_unique<ClockValue[]>(width_);  // all zero
  return slot.get();
}

ClockValue* PeerBaselines::sending(Rank dst) {
  if (mode_ == Mode::Off || dst == self_) return nullptr;
  auto& slot = out_[dst.value];
  if (slot) return slot.get();
  if (mode_ == Mode::Granted) return nullptr;  // created when an offer is taken
  ++held_out_;
  return allocate(slot);
}

bool PeerBaselines::take_offer(Rank src) {
  if (mode_ != Mode::Granted || src == self_ || out_state_[src.value] != Out::None) return false;
  if (taken_out_ == slots_) {
    out_state_[src.value] = Out::Declined;
    return false;
  }
  out_state_[src.value] = Out::Keeping;
  ++taken_out_;
  ++held_out_;
  allocate(out_[src.value]);
  return true;
}

PeerBaselines::Arrival PeerBaselines::receiving(Rank src, bool keeps) {
  Arrival a;
  if (src == self_ || mode_ == Mode::Off) {
    a.invalid = keeps;
    return a;
  }
  auto& slot = in_[src.value];
  if (mode_ == Mode::Implicit) {
    // Every clock between two engines keeps; a plain one means the sender
    // runs with another budget.
    a.invalid = !keeps;
    if (keeps) {
      if (!slot) ++held_in_;
      a.base = slot ? slot.get() : allocate(slot);
    }
    return a;
  }
  In& state = in_state_[src.value];
  if (!keeps) {
    switch (state) {
      case In::None:
        if (reserved_in_ < slots_) {
          ++reserved_in_;
          state = In::Offered;
          a.offer = true;
        } else {
          state = In::Refused;
        }
        break;
      case In::Keeping:
        a.invalid = true;  // a sender never goes back to plain clocks
        break;
      case In::Offered:  // sent before the offer arrived
      case In::Refused:
        break;
    }
    return a;
  }
  if (state == In::Offered) {
    state = In::Keeping;
    ++held_in_;
    allocate(slot);
  }
  if (state != In::Keeping) {
    a.invalid = true;
    return a;
  }
  a.base = slot.get();
  return a;
}

bool PeerBaselines::declined(Rank src) {
  if (mode_ != Mode::Granted || src == self_ || in_state_[src.value] != In::Offered) return false;
  in_state_[src.value] = In::Refused;
  --reserved_in_;
  return true;
}

}  // namespace vcx::vclock
