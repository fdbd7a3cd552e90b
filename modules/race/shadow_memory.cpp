#include "shadow_memory.h"

#include <algorithm>

namespace vcx::race {

void ShadowMemory::add(AccessRecord r) {
  auto& v = spaces_[r.space];
  // Records sorted by lo; those starting at or after r.hi cannot overlap.
  const auto end = std::lower_bound(v.begin(), v.end(), r.hi,
                                    [](const AccessRecord& x, std::uint64_t hi) { return x.lo < hi; });
  bool duplicate = false;
  for (auto it = v.begin(); it != end; ++it) {
    if (it->hi <= r.lo) continue;
    ++compared_;
    if (it->conflicts_with(r) && it->concurrent_with(r)) on_race_(*it, r);
    duplicate = duplicate || (it->repeats(r) && it->done == r.done && it->done_seq == r.done_seq &&
                              it->start == r.start && it->start_seq <= r.start_seq);
  }
  if (duplicate) return;
  const auto at = std::upper_bound(v.begin(), v.end(), r.lo,
                                   [](std::uint64_t lo, const AccessRecord& x) { return lo < x.lo; });
  v.insert(at, std::move(r));
  ++stored_;
  peak_ = std::max(peak_, stored_);
}

}  // namespace vcx::race
