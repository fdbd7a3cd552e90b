// Objects addressed by a small integer handle that stays valid until freed;
// freed slots are reused, so steady-state use does not allocate. Handles carry
// a generation so a stale handle is detected instead of aliasing a new object.
#pragma once

#include <cstdint>
#include <vector>

namespace vcx::vclock {

template <class T>
class Slab {
 public:
  // Handle layout: low 32 bits slot index + 1, high 32 bits generation.
  std::uint64_t create() {
    std::uint32_t idx;
    if (!free_.empty()) {
      idx = free_.back();
      free_.pop_back();
    } else {
      idx = static_cast<std::uint32_t>(slots_.size());
      slots_.push_back(Slot{});
    }
    Slot& s = slots_[idx];
    s.live = true;
    ++live_;
    return (static_cast<std::uint64_t>(s.generation) << 32) | (idx + 1);
  }
  T* get(std::uint64_t h) {
    const std::uint32_t low = static_cast<std::uint32_t>(h);
    if (low == 0 || low > slots_.size()) return nullptr;
    Slot& s = slots_[low - 1];
    if (!s.live || s.generation != static_cast<std::uint32_t>(h >> 32)) return nullptr;
    return &s.value;
  }
  const T* get(std::uint64_t h) const { return const_cast<Slab*>(this)->get(h); }
  void destroy(std::uint64_t h) {
    if (!get(h)) return;
    const std::uint32_t idx = static_cast<std::uint32_t>(h) - 1;
    slots_[idx].value = T{};  // what it owns goes now; a reused slot starts fresh
    slots_[idx].live = false;
    ++slots_[idx].generation;
    free_.push_back(idx);
    --live_;
  }
  std::size_t live() const { return live_; }

  template <class F>
  void for_each(F&& f) {
    for (std::size_t i = 0; i < slots_.size(); ++i)
      if (slots_[i].live)
        f((static_cast<std::uint64_t>(slots_[i].generation) << 32) | (i + 1), slots_[i].value);
  }

 private:
  struct Slot {
    T value{};
    std::uint32_t generation = 1;
    bool live = false;
  };
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_;
  std::size_t live_ = 0;
};

}  // namespace vcx::vclock
