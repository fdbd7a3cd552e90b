// The completed accesses to one rank's exposed memory, compared as they
// arrive: two accesses race when they conflict (overlapping bytes, one
// writes, not atomic with each other) and neither was complete before the
// other started. Accesses arrive out of order (each once its completion is
// known, from any rank), so every pair is compared when the later of the two
// arrives.
//
// The same access made again and again (a loop: same rank, code, bytes and
// kind) is kept in a chain, in its rank's program order. Along a chain both
// the completions and the starts only grow, so for a new access the members
// complete before it form a prefix, those that start after it a suffix, and
// the members it races with lie in between: two binary searches instead of
// a comparison with each member, however long the loop ran.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
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
  // caller decides, from what it knows of the ranks' future accesses). What
  // it drops of a chain must be a prefix, as for any test that an access's
  // completion (done, done_seq) is old enough: only that prefix is looked at.
  template <class Droppable>
  void collect(Droppable&& droppable) {
    for (auto& [id, space] : spaces_) {
      stored_ -= std::erase_if(space.records,
                               [&](const auto& entry) { return droppable(entry.second); });
      for (auto it = space.chains.begin(); it != space.chains.end();) {
        auto& members = it->second.members;
        const auto old = std::partition_point(members.begin(), members.end(), droppable);
        stored_ -= static_cast<std::size_t>(old - members.begin());
        members.erase(members.begin(), old);
        if (members.empty()) {
          space.chain_of.erase(it->second.key);
          it = space.chains.erase(it);
        } else {
          ++it;
        }
      }
    }
  }

  // Lets `f` change what is known of each kept access (not its bytes). A
  // chain member that becomes seen or ordered leaves its chain: its order
  // with others no longer follows the chain's.
  template <class F>
  void update(F&& f) {
    for (auto& [id, space] : spaces_) {
      for (auto& [lo, r] : space.records) f(r);
      for (auto it = space.chains.begin(); it != space.chains.end();) {
        auto& members = it->second.members;
        for (AccessRecord& m : members) f(m);
        std::erase_if(members, [&](AccessRecord& m) {
          if (chainable(m)) return false;
          const std::uint64_t lo = m.lo;
          space.records.emplace(lo, std::move(m));
          return true;
        });
        if (members.empty()) {
          space.chain_of.erase(it->second.key);
          it = space.chains.erase(it);
        } else {
          ++it;
        }
      }
    }
  }

  std::size_t stored() const { return stored_; }
  std::size_t peak_stored() const { return peak_; }
  std::uint64_t compared() const { return compared_; }

 private:
  // What makes accesses repeats of each other (AccessRecord::repeats).
  struct ChainKey {
    std::uint32_t rank;
    std::uint64_t pc, lo, hi, context;
    std::uint16_t call;
    Model model;
    AccessMode mode;
    std::uint32_t atomic_op, atomic_type;
    bool atomic_read;
    bool operator==(const ChainKey&) const = default;
  };
  struct ChainKeyHash {
    std::size_t operator()(const ChainKey& k) const noexcept;
  };
  struct Chain {
    ChainKey key;
    std::deque<AccessRecord> members;  // in program order; completions and starts grow
  };
  // Per space, by lo: a new access compares with those whose range can
  // overlap its own, which start at most `longest` bytes before. Trees, so
  // that keeping one more costs no move of the others.
  struct Space {
    std::multimap<std::uint64_t, AccessRecord> records;  // not in a chain
    std::multimap<std::uint64_t, Chain> chains;
    std::unordered_map<ChainKey, std::multimap<std::uint64_t, Chain>::iterator, ChainKeyHash>
        chain_of;
    std::uint64_t longest = 0;
  };

  // Accesses whose order with others follows from clocks and program order
  // alone (not seen delivered, not ordered by a fence, not the program's
  // own loads and stores) may join a chain.
  static bool chainable(const AccessRecord& r) {
    return !r.seen && r.ordered_seq == 0 && !r.local;
  }
  static ChainKey key_of(const AccessRecord& r);
  // Whether `r` may follow `last` in its chain: later in program order, and
  // neither its start nor its completion earlier.
  static bool extends(const AccessRecord& last, const AccessRecord& r);
  static bool is_duplicate(const AccessRecord& kept, const AccessRecord& r);
  // Compares `r` with the members of `chain`; true if `r` repeats one.
  // `key` is r's chain key, or nullptr for a load or store of the program
  // (no member repeats it).
  bool compare_with_chain(const Chain& chain, const AccessRecord& r, const ChainKey* key);
  void keep(Space& space, AccessRecord r);

  OnRace on_race_;
  std::unordered_map<std::uint64_t, Space> spaces_;
  std::size_t stored_ = 0;
  std::size_t peak_ = 0;
  std::uint64_t compared_ = 0;
};

}  // namespace vcx::race
