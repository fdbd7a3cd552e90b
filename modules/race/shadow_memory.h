// The completed accesses to one rank's exposed memory, compared as they
// arrive: two accesses race when they conflict (overlapping bytes, one
// writes, not atomic with each other) and neither was complete before the
// other started. Accesses arrive out of order (each once its completion is
// known, from any rank), so every pair is compared when the later of the two
// arrives.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <unordered_map>
#include <vector>

#include "access_record.h"

namespace vcx::race {

class ShadowMemory {
 public:
  using OnRace = std::function<void(const AccessRecord& earlier, const AccessRecord& later)>;
  explicit ShadowMemory(OnRace on_race) : on_race_(std::move(on_race)) {}

  // Compares `r` with the accesses of its space, then keeps it, unless it
  // repeats a kept one made no later in the same epoch (same clocks, same
  // completion): whatever races with `r` then races with the kept one.
  void add(AccessRecord r);

  // Drops the kept accesses no access still to come can race with (the
  // caller decides, from what it knows of the ranks' future accesses).
  template <class Droppable>
  void collect(Droppable&& droppable) {
    for (auto& [id, space] : spaces_)
      stored_ -= std::erase_if(space.records,
                               [&](const auto& entry) { return droppable(entry.second); });
  }

  // Lets `f` change what is known of each kept access (not its bytes).
  template <class F>
  void update(F&& f) {
    for (auto& [id, space] : spaces_)
      for (auto& [lo, r] : space.records) f(r);
  }

  std::size_t stored() const { return stored_; }
  std::size_t peak_stored() const { return peak_; }
  std::uint64_t compared() const { return compared_; }

 private:
  OnRace on_race_;
  // Per space, by lo: a new access compares with those whose range can
  // overlap its own, which start at most `longest` bytes before. A tree, so
  // that keeping one more costs no move of the others.
  struct Space {
    std::multimap<std::uint64_t, AccessRecord> records;
    std::uint64_t longest = 0;
  };
  std::unordered_map<std::uint64_t, Space> spaces_;
  std::size_t stored_ = 0;
  std::size_t peak_ = 0;
  std::uint64_t compared_ = 0;
};

}  // namespace vcx::race
