// Strong types for the identifiers that cross module boundaries: a world rank
// is never a communicator rank, a queue id is never a tag.
#pragma once

#include <cstdint>
#include <functional>

namespace vcx {

template <class Tag, class T>
struct StrongId {
  using value_type = T;
  T value{};

  constexpr StrongId() = default;
  constexpr explicit StrongId(T v) : value(v) {}
  constexpr auto operator<=>(const StrongId&) const = default;
};

struct WorldRankTag {};
struct GroupIdTag {};

// Application world rank (MPI_COMM_WORLD rank or SHMEM PE number), 0..N-1.
using Rank = StrongId<WorldRankTag, std::uint32_t>;
// Identifies a process group (a communicator, a SHMEM active set or team) the
// same way on every tool process.
using GroupId = StrongId<GroupIdTag, std::uint64_t>;

using ClockValue = std::uint64_t;

// A point-to-point queue between one source and one destination. The pair of
// words is chosen by the translator (MPI: communicator id and tag); queues with
// equal words but different endpoints are distinct.
struct QueueId {
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  constexpr auto operator<=>(const QueueId&) const = default;
};

inline std::uint64_t mix64(std::uint64_t x) {
  // splitmix64 finaliser: cheap, well distributed, deterministic everywhere.
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

inline std::uint64_t hash_combine(std::uint64_t h, std::uint64_t v) {
  return mix64(h ^ (mix64(v) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)));
}

}  // namespace vcx

template <class Tag, class T>
struct std::hash<vcx::StrongId<Tag, T>> {
  std::size_t operator()(const vcx::StrongId<Tag, T>& id) const noexcept {
    return static_cast<std::size_t>(vcx::mix64(static_cast<std::uint64_t>(id.value)));
  }
};

template <>
struct std::hash<vcx::QueueId> {
  std::size_t operator()(const vcx::QueueId& q) const noexcept {
    return static_cast<std::size_t>(vcx::hash_combine(vcx::mix64(q.a), q.b));
  }
};
