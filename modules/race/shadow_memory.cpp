#include "shadow_memory.h"

#include <algorithm>

namespace vcx::race {

void ShadowMemory::add(AccessRecord r) {
  Space& space = spaces_[r.space];
  auto& records = space.records;
  space.longest = std::max(space.longest, r.hi - r.lo);
  // Those that can overlap start in [r.lo - longest, r.hi).
  const std::uint64_t from = r.lo > space.longest ? r.lo - space.longest : 0;
  bool duplicate = false;
  for (auto it = records.lower_bound(from); it != records.end() && it->first < r.hi; ++it) {
    const AccessRecord& x = it->second;
    if (x.hi <= r.lo) continue;
    ++compared_;
    if (x.conflicts_with(r) && x.concurrent_with(r)) on_race_(x, r);
    duplicate = duplicate || (x.repeats(r) && x.done == r.done && x.done_seq == r.done_seq &&
                              x.start == r.start && x.start_seq <= r.start_seq);
  }
  if (duplicate) return;
  const std::uint64_t lo = r.lo;
  records.emplace_hint(records.upper_bound(lo), lo, std::move(r));
  ++stored_;
  peak_ = std::max(peak_, stored_);
}

}  // namespace vcx::race
