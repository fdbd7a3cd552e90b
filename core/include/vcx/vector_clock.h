// Dense vector clock over the application's world ranks.
//
// Entries are 64-bit: a clock entry counts clocked calls of one rank and a long
// run at millions of calls per second would overflow 32 bits within an hour.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "vcx/types.h"

namespace vcx {

using ClockSpan = std::span<const ClockValue>;
using MutableClockSpan = std::span<ClockValue>;

// Element-wise maximum: into[i] = max(into[i], from[i]). Sizes must match.
void clock_merge(MutableClockSpan into, ClockSpan from) noexcept;
// a <= b element-wise.
bool clock_leq(ClockSpan a, ClockSpan b) noexcept;
bool clock_equal(ClockSpan a, ClockSpan b) noexcept;
std::string clock_to_string(ClockSpan c);

class VectorClock {
 public:
  VectorClock() = default;
  explicit VectorClock(std::size_t n) : v_(n, 0) {}

  std::size_t size() const noexcept { return v_.size(); }
  ClockValue operator[](std::size_t i) const noexcept { return v_[i]; }
  ClockValue& operator[](std::size_t i) noexcept { return v_[i]; }

  void tick(Rank self) noexcept { ++v_[self.value]; }
  void merge(ClockSpan other) noexcept { clock_merge(v_, other); }
  void assign(ClockSpan other) { v_.assign(other.begin(), other.end()); }
  void reset(std::size_t n) { v_.assign(n, 0); }

  ClockSpan view() const noexcept { return v_; }
  MutableClockSpan mutable_view() noexcept { return v_; }
  operator ClockSpan() const noexcept { return v_; }

  bool operator==(const VectorClock& o) const noexcept { return v_ == o.v_; }

 private:
  std::vector<ClockValue> v_;
};

}  // namespace vcx
