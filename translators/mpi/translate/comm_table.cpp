#include "comm_table.h"

namespace vcx::mpi {

GroupId world_comm_id() { return GroupId{mix64(0x4d50495f574f524cULL)}; }

GroupId self_comm_id(Rank rank) {
  return GroupId{hash_combine(mix64(0x4d50495f53454c46ULL), rank.value)};
}

GroupId derived_comm_id(GroupId parent, std::uint64_t n, Rank lowest) {
  return GroupId{hash_combine(hash_combine(parent.value, n), lowest.value)};
}

std::uint64_t ranks_key(const std::vector<Rank>& ranks) {
  std::uint64_t h = mix64(ranks.size());
  for (const Rank r : ranks) h = hash_combine(h, r.value);
  return h;
}

GroupId group_comm_id(std::uint64_t group_key, std::int32_t tag, std::uint64_t n) {
  return GroupId{hash_combine(hash_combine(hash_combine(mix64(0x47525550ULL), group_key),
                                           static_cast<std::uint32_t>(tag)),
                              n)};
}

GroupId intercomm_id(std::uint64_t low_key, std::uint64_t high_key, std::int32_t tag,
                     std::uint64_t n) {
  return GroupId{hash_combine(
      hash_combine(hash_combine(hash_combine(mix64(0x494e5445ULL), low_key), high_key),
                   static_cast<std::uint32_t>(tag)),
      n)};
}

GroupId bipartite_group_id(GroupId intercomm) {
  return GroupId{hash_combine(intercomm.value, 0x4249504152ULL)};
}

GroupId rooted_group_id(GroupId intercomm, Rank root) {
  return GroupId{hash_combine(hash_combine(intercomm.value, 0x524f4f54ULL), root.value)};
}

}  // namespace vcx::mpi
