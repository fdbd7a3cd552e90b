// Fixed-size clock buffers recycled through a free list, so that storing a
// deposited clock does not allocate once the pool has warmed up.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "vcx/vector_clock.h"

namespace vcx::vclock {

class ClockPool {
 public:
  explicit ClockPool(std::size_t width) : width_(width) {}
  ClockPool(const ClockPool&) = delete;
  ClockPool& operator=(const ClockPool&) = delete;

  std::size_t width() const { return width_; }

  ClockValue* acquire() {
    if (free_.empty()) grow();
    ClockValue* p = free_.back();
    free_.pop_back();
    ++in_use_;
    return p;
  }
  ClockValue* acquire_copy(ClockSpan from) {
    ClockValue* p = acquire();
    std::copy(from.begin(), from.end(), p);
    return p;
  }
  void release(ClockValue* p) {
    if (!p) return;
    free_.push_back(p);
    --in_use_;
  }
  MutableClockSpan view(ClockValue* p) const { return {p, width_}; }
  std::size_t in_use() const { return in_use_; }

 private:
  void grow() {
    const std::size_t count = chunks_.empty() ? 16 : 64;
    chunks_.push_back(std::make_unique<ClockValue[]>(count * width_));
    ClockValue* base = chunks_.back().get();
    free_.reserve(free_.size() + count);
    for (std::size_t i = 0; i < count; ++i) free_.push_back(base + i * width_);
  }

  std::size_t width_;
  std::size_t in_use_ = 0;
  std::vector<std::unique_ptr<ClockValue[]>> chunks_;
  std::vector<ClockValue*> free_;
};

}  // namespace vcx::vclock
