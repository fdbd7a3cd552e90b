#include "vcx/vector_clock.h"

#include <algorithm>

namespace vcx {

void clock_merge(MutableClockSpan into, ClockSpan from) noexcept {
  const std::size_t n = std::min(into.size(), from.size());
  ClockValue* __restrict a = into.data();
  const ClockValue* __restrict b = from.data();
  // Written as a plain loop so the compiler vectorises it.
  for (std::size_t i = 0; i < n; ++i) a[i] = a[i] < b[i] ? b[i] : a[i];
}

bool clock_leq(ClockSpan a, ClockSpan b) noexcept {
  const std::size_t n = std::min(a.size(), b.size());
  bool ok = true;
  for (std::size_t i = 0; i < n; ++i) ok &= a[i] <= b[i];
  return ok;
}

bool clock_equal(ClockSpan a, ClockSpan b) noexcept {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

std::string clock_to_string(ClockSpan c) {
  std::string s = "[";
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(c[i]);
  }
  s += ']';
  return s;
}

}  // namespace vcx
