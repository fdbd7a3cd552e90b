#include "flag_deposition.h"

#include <algorithm>

namespace vcx::vclock {
namespace {

std::int64_t sign_extend(std::uint64_t v, unsigned width) {
  if (width == 0 || width >= 8) return static_cast<std::int64_t>(v);
  const unsigned shift = 64 - 8 * width;
  return static_cast<std::int64_t>(v << shift) >> shift;
}

std::uint64_t width_mask(unsigned width) {
  return width == 0 || width >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * width)) - 1;
}

// -1, 0, 1 as a is below, equal to or above b, read as the waited value's type.
int compare_values(std::uint64_t a, std::uint64_t b, std::uint16_t wait_bits) {
  const unsigned width = flag_width(wait_bits);
  if (flag_signed(wait_bits)) {
    const std::int64_t x = sign_extend(a, width), y = sign_extend(b, width);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  const std::uint64_t m = width_mask(width), x = a & m, y = b & m;
  return x < y ? -1 : x > y ? 1 : 0;
}

}  // namespace

bool FlagDeposition::merges(std::uint16_t deposit_bits, std::uint64_t deposit_value,
                            std::uint16_t wait_bits, std::uint64_t value) {
  if (flag_width(deposit_bits) != flag_width(wait_bits)) return false;
  switch (flag_mode(deposit_bits)) {
    case kFlagStore: return compare_values(deposit_value, value, wait_bits) == 0;
    case kFlagUp: return compare_values(deposit_value, value, wait_bits) <= 0;
    case kFlagDown: return compare_values(deposit_value, value, wait_bits) >= 0;
    default: return false;
  }
}

FlagDeposition::Deposit* FlagDeposition::find(std::uint64_t flag, Rank writer, std::uint64_t id) {
  auto it = flags_.find(flag);
  if (it == flags_.end()) return nullptr;
  // From the newest: values and clocks follow their registrations closely.
  auto& ds = it->second;
  for (auto d = ds.rbegin(); d != ds.rend(); ++d)
    if (d->writer == writer && d->id == id) return &*d;
  return nullptr;
}

void FlagDeposition::announce(Rank writer, std::uint64_t flag, std::uint64_t id,
                              std::uint16_t bits, std::uint64_t value) {
  const std::uint64_t index = registrations_++;
  if (flag_mode(bits) == kFlagNoWrite) return;
  Deposit d;
  d.writer = writer;
  d.id = id;
  d.index = index;
  d.bits = bits;
  d.value = value;
  flags_[flag].push_back(std::move(d));
  ++deposits_;
}

void FlagDeposition::value(Rank writer, std::uint64_t flag, std::uint64_t id, std::uint16_t bits,
                           std::uint64_t value) {
  // Unknown when it was dropped already (its clock was below this one).
  Deposit* d = find(flag, writer, id);
  if (!d) return;
  d->bits = bits;
  d->value = value;
  if (flag_mode(bits) != kFlagNoWrite) return;
  auto& ds = flags_[flag];
  ds.erase(ds.begin() + (d - ds.data()));
  --deposits_;
}

void FlagDeposition::clock(Rank writer, std::uint64_t flag, std::uint64_t id, PooledClock clock) {
  Deposit* d = find(flag, writer, id);
  // Gone or not kept: the write stored nothing (the clock goes back).
  if (!d || d->clock) return;
  d->clock = std::move(clock);
}

bool FlagDeposition::wait(const FlagWaitQuery& q, VectorClock& clock, std::vector<Rank>& writers) {
  auto it = flags_.find(q.flag);
  if (it == flags_.end()) return true;  // nothing registered: nothing to merge
  // Decide first: every registration before the snapshot must be known.
  if (any_missing(q, [](const MissingWrite&) { return true; })) return false;
  std::vector<Deposit>& ds = it->second;
  for (auto d = ds.begin(); d != ds.end() && d->index < q.snapshot;) {
    if (!merges(d->bits, d->value, q.bits, q.value)) {
      ++d;
      continue;
    }
    clock.merge(d->clock.view());
    writers.push_back(d->writer);
    d = ds.erase(d);
    --deposits_;
  }
  prune(q.flag, clock.view());
  return true;
}

void FlagDeposition::prune(std::uint64_t flag, ClockSpan now) {
  auto it = flags_.find(flag);
  if (it == flags_.end()) return;
  auto& ds = it->second;
  const auto gone = std::remove_if(ds.begin(), ds.end(), [&](const Deposit& d) {
    return d.clock && clock_leq(d.clock.view(), now);
  });
  deposits_ -= static_cast<std::size_t>(ds.end() - gone);
  ds.erase(gone, ds.end());
  if (ds.empty()) flags_.erase(it);
}

void FlagDeposition::maybe_sweep(ClockSpan now) {
  if (deposits_ <= sweep_at_) return;
  std::vector<std::uint64_t> ids;
  ids.reserve(flags_.size());
  for (const auto& [id, ds] : flags_) ids.push_back(id);
  for (const std::uint64_t id : ids) prune(id, now);
  sweep_at_ = std::max<std::size_t>(1024, 2 * deposits_);
}

}  // namespace vcx::vclock
