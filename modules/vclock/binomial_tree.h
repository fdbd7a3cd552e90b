// Binomial tree over the positions 0..size-1 of a group, rooted at `root`.
// Positions are renumbered relative to the root; the parent of relative
// position r is r with its lowest set bit cleared, so the depth is
// ceil(log2(size)) and every node has at most log2(size) children.
#pragma once

#include <cstdint>
#include <optional>

namespace vcx::vclock {

class BinomialTree {
 public:
  BinomialTree(std::uint32_t size, std::uint32_t root) : size_(size), root_(root) {}

  std::uint32_t relative(std::uint32_t pos) const { return (pos + size_ - root_) % size_; }
  std::uint32_t absolute(std::uint32_t rel) const { return (rel + root_) % size_; }

  std::optional<std::uint32_t> parent(std::uint32_t pos) const {
    const std::uint32_t r = relative(pos);
    if (r == 0) return std::nullopt;
    return absolute(r & (r - 1));
  }

  // Calls f(child_position) for each child of pos.
  template <class F>
  void for_each_child(std::uint32_t pos, F&& f) const {
    const std::uint32_t r = relative(pos);
    const std::uint64_t limit = r == 0 ? (std::uint64_t{1} << 32) : (r & (~r + 1));
    for (std::uint64_t bit = 1; bit < limit && r + bit < size_; bit <<= 1)
      f(absolute(static_cast<std::uint32_t>(r + bit)));
  }

  std::uint32_t child_count(std::uint32_t pos) const {
    std::uint32_t n = 0;
    for_each_child(pos, [&](std::uint32_t) { ++n; });
    return n;
  }

 private:
  std::uint32_t size_;
  std::uint32_t root_;
};

}  // namespace vcx::vclock
