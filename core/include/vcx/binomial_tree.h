// Binomial tree over the positions 0..size-1 of a group, rooted at `root`:
// the vclock engine's collectives run over it, the tool processes agree on
// the end of a run over it.
// Positions are renumbered relative to the root; the parent of relative
// position r is r with its lowest set bit cleared, so the depth is
// ceil(log2(size)) and every node has at most log2(size) children.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>

namespace vcx {

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

  // Positions in the subtree rooted at pos (pos included).
  std::uint32_t subtree_size(std::uint32_t pos) const {
    const std::uint32_t r = relative(pos);
    const std::uint64_t span = r == 0 ? size_ : (r & (~r + 1));
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(span, size_ - r));
  }

  // Calls f(child_position) for each child of pos, the largest subtree
  // first (of equal ones, the farther position): what goes down reaches the
  // deepest part of the tree first, which shortens the collective's critical
  // path (docs/performance.md, "Scale model").
  template <class F>
  void for_each_child_largest_first(std::uint32_t pos, F&& f) const {
    std::array<std::uint32_t, 32> children{};
    std::size_t count = 0;
    for_each_child(pos, [&](std::uint32_t c) { children[count++] = c; });
    // Children come in increasing distance, their subtrees growing except
    // that the last may be cut short by the group's end: a stable sort of
    // the reversed list on size keeps farther positions first among equals.
    std::reverse(children.begin(), children.begin() + count);
    std::stable_sort(children.begin(), children.begin() + count,
                     [&](std::uint32_t a, std::uint32_t b) {
                       return subtree_size(a) > subtree_size(b);
                     });
    for (std::size_t i = 0; i < count; ++i) f(children[i]);
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

}  // namespace vcx
