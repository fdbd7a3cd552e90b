// The binomial tree the collectives are built on: for every size and root it
// must be a spanning tree of the group (every position reached exactly once
// from the root), parent and child views must agree, and it must be shallow.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdint>
#include <vector>

#include "vcx/binomial_tree.h"

using vcx::BinomialTree;

namespace {

std::uint32_t ceil_log2(std::uint32_t n) {
  std::uint32_t d = 0;
  while ((std::uint64_t{1} << d) < n) ++d;
  return d;
}

}  // namespace

TEST_CASE("binomial trees span the group for every size and root", "[binomial]") {
  for (std::uint32_t size = 1; size <= 70; ++size) {
    for (std::uint32_t root = 0; root < size; ++root) {
      INFO("size=" << size << " root=" << root);
      const BinomialTree tree(size, root);

      // relative/absolute are inverse renumberings with the root at 0.
      REQUIRE(tree.relative(root) == 0);
      for (std::uint32_t p = 0; p < size; ++p) {
        REQUIRE(tree.relative(p) < size);
        REQUIRE(tree.absolute(tree.relative(p)) == p);
      }

      // Parents: none for the root, exactly one in range for everybody else.
      std::vector<std::int64_t> parent(size, -1);
      for (std::uint32_t p = 0; p < size; ++p) {
        const auto par = tree.parent(p);
        if (p == root) {
          REQUIRE_FALSE(par.has_value());
          continue;
        }
        REQUIRE(par.has_value());
        REQUIRE(*par < size);
        REQUIRE(*par != p);
        parent[p] = *par;
      }

      // Children: each child names this node as parent, and every parent
      // relation shows up as exactly one child entry.
      std::vector<std::uint32_t> seen_as_child(size, 0);
      for (std::uint32_t p = 0; p < size; ++p) {
        std::uint32_t count = 0;
        tree.for_each_child(p, [&](std::uint32_t c) {
          REQUIRE(c < size);
          REQUIRE(parent[c] == static_cast<std::int64_t>(p));
          ++seen_as_child[c];
          ++count;
        });
        REQUIRE(tree.child_count(p) == count);
        REQUIRE(count <= ceil_log2(size));
      }
      for (std::uint32_t p = 0; p < size; ++p) REQUIRE(seen_as_child[p] == (p == root ? 0u : 1u));

      // Walking down from the root reaches every node once (connected and
      // acyclic), never deeper than ceil(log2(size)).
      std::vector<int> depth(size, -1);
      std::vector<std::uint32_t> frontier{root};
      depth[root] = 0;
      std::uint32_t reached = 1;
      while (!frontier.empty()) {
        std::vector<std::uint32_t> next;
        for (std::uint32_t p : frontier) {
          tree.for_each_child(p, [&](std::uint32_t c) {
            REQUIRE(depth[c] == -1);
            depth[c] = depth[p] + 1;
            ++reached;
            next.push_back(c);
          });
        }
        frontier.swap(next);
      }
      REQUIRE(reached == size);
      for (std::uint32_t p = 0; p < size; ++p)
        REQUIRE(depth[p] <= static_cast<int>(ceil_log2(size)));

      // Following parents from any node ends at the root within the depth.
      for (std::uint32_t p = 0; p < size; ++p) {
        std::uint32_t at = p;
        int steps = 0;
        while (auto par = tree.parent(at)) {
          at = *par;
          REQUIRE(++steps <= static_cast<int>(ceil_log2(size)));
        }
        REQUIRE(at == root);
        REQUIRE(steps == depth[p]);
      }
    }
  }
}

TEST_CASE("the depth bound is reached: the tree is binomial, not a flat star", "[binomial]") {
  // A star would pass the spanning checks but make the root a bottleneck.
  for (std::uint32_t size : {2u, 8u, 33u, 64u, 70u}) {
    const BinomialTree tree(size, size / 3);
    int max_depth = 0;
    for (std::uint32_t p = 0; p < size; ++p) {
      int d = 0;
      std::uint32_t at = p;
      while (auto par = tree.parent(at)) {
        at = *par;
        ++d;
      }
      max_depth = std::max(max_depth, d);
    }
    INFO("size=" << size);
    // A binomial tree over n nodes is exactly floor(log2(n)) deep.
    CHECK(max_depth == static_cast<int>(ceil_log2(size + 1)) - 1);
    CHECK(tree.child_count(size / 3) == ceil_log2(size));
  }
}

TEST_CASE("sending down, the largest subtree goes first", "[binomial]") {
  for (std::uint32_t size = 1; size <= 70; ++size) {
    for (std::uint32_t root = 0; root < size; root += 1 + size / 5) {
      INFO("size=" << size << " root=" << root);
      const BinomialTree tree(size, root);
      // Subtree sizes counted from the parent relation alone.
      std::vector<std::uint32_t> below(size, 1);
      for (std::uint32_t p = 0; p < size; ++p)
        for (auto at = tree.parent(p); at; at = tree.parent(*at)) ++below[*at];
      for (std::uint32_t p = 0; p < size; ++p) {
        REQUIRE(tree.subtree_size(p) == below[p]);
        std::vector<std::uint32_t> plain, largest;
        tree.for_each_child(p, [&](std::uint32_t c) { plain.push_back(c); });
        tree.for_each_child_largest_first(p, [&](std::uint32_t c) { largest.push_back(c); });
        // The same children, the sizes of their subtrees never growing.
        REQUIRE(std::is_permutation(plain.begin(), plain.end(), largest.begin(), largest.end()));
        for (std::size_t i = 1; i < largest.size(); ++i)
          REQUIRE(below[largest[i - 1]] >= below[largest[i]]);
      }
    }
  }
  // Root 0 of 8: subtrees of 4, 2 and 1; of 6: 4 at 4 is cut to 2, and
  // the farther of the two equal subtrees goes first.
  std::vector<std::uint32_t> order;
  BinomialTree(8, 0).for_each_child_largest_first(0, [&](std::uint32_t c) { order.push_back(c); });
  CHECK(order == std::vector<std::uint32_t>{4, 2, 1});
  order.clear();
  BinomialTree(6, 0).for_each_child_largest_first(0, [&](std::uint32_t c) { order.push_back(c); });
  CHECK(order == std::vector<std::uint32_t>{4, 2, 1});
}
