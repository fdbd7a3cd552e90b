#include "shadow_memory.h"

#include <algorithm>

#include "vcx/types.h"

namespace vcx::race {

std::size_t ShadowMemory::ChainKeyHash::operator()(const ChainKey& k) const noexcept {
  std::uint64_t h = mix64(k.rank);
  for (std::uint64_t v : {k.pc, k.lo, k.hi, k.context, std::uint64_t{k.call},
                          static_cast<std::uint64_t>(k.model), static_cast<std::uint64_t>(k.mode),
                          std::uint64_t{k.atomic_op}, std::uint64_t{k.atomic_type},
                          std::uint64_t{k.atomic_read}})
    h = hash_combine(h, v);
  return static_cast<std::size_t>(h);
}

ShadowMemory::ChainKey ShadowMemory::key_of(const AccessRecord& r) {
  return ChainKey{r.rank.value, r.pc,        r.lo,          r.hi,        r.context, r.call,
                  r.model,      r.mode,      r.atomic_op,   r.atomic_type, r.atomic_read};
}

bool ShadowMemory::extends(const AccessRecord& last, const AccessRecord& r) {
  if (r.start_seq < last.start_seq || r.done < last.done || r.done_seq < last.done_seq ||
      r.start.size() != last.start.size())
    return false;
  for (std::size_t i = 0; i < r.start.size(); ++i)
    if (r.start[i] < last.start[i]) return false;
  return true;
}

bool ShadowMemory::is_duplicate(const AccessRecord& kept, const AccessRecord& r) {
  return kept.repeats(r) && kept.done == r.done && kept.done_seq == r.done_seq &&
         kept.start == r.start && kept.start_seq <= r.start_seq;
}

bool ShadowMemory::compare_with_chain(const Chain& chain, const AccessRecord& r,
                                      const ChainKey* key) {
  const std::deque<AccessRecord>& m = chain.members;
  compared_ += m.size();
  // Every member has the same bytes and kind: one conflicts with `r` if all do.
  if (m.front().conflicts_with(r)) {
    // Members complete before `r` started: a prefix (their completions grow).
    const auto first = std::partition_point(
        m.begin(), m.end(), [&](const AccessRecord& x) { return x.before(r); });
    // Members that started after `r` was complete: a suffix (their starts grow).
    const auto last = std::partition_point(
        first, m.end(), [&](const AccessRecord& x) { return !r.before(x); });
    for (auto it = first; it < last; ++it) on_race_(*it, r);
  }
  if (!key || !(*key == chain.key)) return false;
  // A repeat in the same epoch has the same completion: among the members
  // with r's completion tick, which are adjacent.
  const auto same = std::equal_range(
      m.begin(), m.end(), r,
      [](const AccessRecord& a, const AccessRecord& b) { return a.done < b.done; });
  return std::any_of(same.first, same.second,
                     [&](const AccessRecord& x) { return is_duplicate(x, r); });
}

void ShadowMemory::keep(Space& space, AccessRecord r) {
  ++stored_;
  peak_ = std::max(peak_, stored_);
  if (chainable(r)) {
    const ChainKey key = key_of(r);
    auto found = space.chain_of.find(key);
    if (found == space.chain_of.end()) {
      const std::uint64_t lo = r.lo;
      auto it = space.chains.emplace(lo, Chain{key, {}});
      it->second.members.push_back(std::move(r));
      space.chain_of.emplace(key, it);
      return;
    }
    std::deque<AccessRecord>& members = found->second->second.members;
    if (extends(members.back(), r)) {
      members.push_back(std::move(r));
      return;
    }
    // Out of its rank's program order: kept on its own.
  }
  const std::uint64_t lo = r.lo;
  space.records.emplace_hint(space.records.upper_bound(lo), lo, std::move(r));
}

void ShadowMemory::add(AccessRecord r) {
  Space& space = spaces_[r.space];
  space.longest = std::max(space.longest, r.hi - r.lo);
  // Those that can overlap start in [r.lo - longest, r.hi).
  const std::uint64_t from = r.lo > space.longest ? r.lo - space.longest : 0;
  bool duplicate = false;
  // Chain members are not loads or stores of the program: none repeats one.
  const ChainKey key = key_of(r);
  const ChainKey* repeat_key = r.local ? nullptr : &key;
  for (auto it = space.records.lower_bound(from);
       it != space.records.end() && it->first < r.hi; ++it) {
    const AccessRecord& x = it->second;
    if (x.hi <= r.lo) continue;
    ++compared_;
    if (x.conflicts_with(r) && x.concurrent_with(r)) on_race_(x, r);
    duplicate = duplicate || is_duplicate(x, r);
  }
  for (auto it = space.chains.lower_bound(from); it != space.chains.end() && it->first < r.hi;
       ++it) {
    if (it->second.key.hi <= r.lo) continue;
    if (compare_with_chain(it->second, r, repeat_key)) duplicate = true;
  }
  if (duplicate) return;
  keep(space, std::move(r));
}

}  // namespace vcx::race
