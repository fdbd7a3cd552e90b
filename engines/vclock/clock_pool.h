// Fixed-size clock buffers recycled through a free list, so that storing a
// deposited clock does not allocate once the pool has warmed up, and the
// move-only handle that owns one of them: whoever holds a PooledClock holds
// the clock, and the buffer goes back to the pool when the handle goes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "vcx/vector_clock.h"

namespace vcx::vclock {

class ClockPool;

class PooledClock {
 public:
  PooledClock() = default;
  PooledClock(PooledClock&& o) noexcept : pool_(o.pool_), p_(std::exchange(o.p_, nullptr)) {}
  PooledClock& operator=(PooledClock&& o) noexcept {
    if (this != &o) {
      reset();
      pool_ = o.pool_;
      p_ = std::exchange(o.p_, nullptr);
    }
    return *this;
  }
  PooledClock(const PooledClock&) = delete;
  PooledClock& operator=(const PooledClock&) = delete;
  ~PooledClock() { reset(); }

  explicit operator bool() const noexcept { return p_ != nullptr; }
  // The entries; null without a clock (what a message without one sends).
  const ClockValue* data() const noexcept { return p_; }
  inline ClockSpan view() const noexcept;
  inline MutableClockSpan mutable_view() noexcept;
  ClockValue& operator[](std::size_t i) noexcept { return p_[i]; }
  void merge(ClockSpan other) noexcept { clock_merge(mutable_view(), other); }
  void assign(ClockSpan other) noexcept { std::copy(other.begin(), other.end(), p_); }
  // Gives the buffer back; the handle is empty afterwards.
  inline void reset() noexcept;

 private:
  friend class ClockPool;
  PooledClock(ClockPool* pool, ClockValue* p) noexcept : pool_(pool), p_(p) {}

  ClockPool* pool_ = nullptr;
  ClockValue* p_ = nullptr;
};

class ClockPool {
 public:
  explicit ClockPool(std::size_t width) : width_(width) {}
  ClockPool(const ClockPool&) = delete;
  ClockPool& operator=(const ClockPool&) = delete;

  std::size_t width() const { return width_; }

  // A clock whose entries are whatever the buffer held: to be overwritten.
  PooledClock take() { return PooledClock(this, acquire()); }
  PooledClock take_zeroed() {
    PooledClock c = take();
    std::fill_n(c.p_, width_, ClockValue{0});
    return c;
  }
  PooledClock take_copy(ClockSpan from) {
    PooledClock c = take();
    std::copy(from.begin(), from.end(), c.p_);
    return c;
  }
  std::size_t in_use() const { return in_use_; }

 private:
  friend class PooledClock;
  ClockValue* acquire() {
    if (free_.empty()) grow();
    ClockValue* p = free_.back();
    free_.pop_back();
    ++in_use_;
    return p;
  }
  void release(ClockValue* p) noexcept {
    // free_ has room for every buffer the pool made (grow reserves it).
    free_.push_back(p);
    --in_use_;
  }
  void grow() {
    const std::size_t count = chunks_.empty() ? 16 : 64;
    chunks_.push_back(std::make_unique<ClockValue[]>(count * width_));
    ClockValue* base = chunks_.back().get();
    made_ += count;
    free_.reserve(made_);
    for (std::size_t i = 0; i < count; ++i) free_.push_back(base + i * width_);
  }

  std::size_t width_;
  std::size_t in_use_ = 0;
  std::size_t made_ = 0;
  std::vector<std::unique_ptr<ClockValue[]>> chunks_;
  std::vector<ClockValue*> free_;
};

ClockSpan PooledClock::view() const noexcept { return {p_, pool_->width()}; }
MutableClockSpan PooledClock::mutable_view() noexcept { return {p_, pool_->width()}; }
void PooledClock::reset() noexcept {
  if (p_) pool_->release(std::exchange(p_, nullptr));
}

}  // namespace vcx::vclock
