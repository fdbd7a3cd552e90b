#include "shadow_memory.h"

#include <algorithm>

namespace vcx::race {

void ShadowMemory::add(AccessRecord r) {
  Space& space = spaces_[r.space];
  auto& v = space.records;
  space.longest = std::max(space.longest, r.hi - r.lo);
  // Records sorted by lo: those that can overlap start in
  // [r.lo - longest, r.hi).
  const std::uint64_t from = r.lo > space.longest ? r.lo - space.longest : 0;
  const auto by_lo = [](const AccessRecord& x, std::uint64_t lo) { return x.lo < lo; };
  const auto first = std::lower_bound(v.begin(), v.end(), from, by_lo);
  const auto end = std::lower_bound(first, v.end(), r.hi, by_lo);
  bool duplicate = false;
  for (auto it = first; it != end; ++it) {
    if (it->hi <= r.lo) continue;
    ++compared_;
    if (it->conflicts_with(r) && it->concurrent_with(r)) on_race_(*it, r);
    duplicate = duplicate || (it->repeats(r) && it->done == r.done && it->done_seq == r.done_seq &&
                              it->start == r.start && it->start_seq <= r.start_seq);
  }
  if (duplicate) return;
  const auto at =
      std::upper_bound(v.begin(), v.end(), r.lo,
                       [](std::uint64_t lo, const AccessRecord& x) { return lo < x.lo; });
  v.insert(at, std::move(r));
  ++stored_;
  peak_ = std::max(peak_, stored_);
}

}  // namespace vcx::race
