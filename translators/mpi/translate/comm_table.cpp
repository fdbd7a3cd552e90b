#include "comm_table.h"

namespace vcx::mpi {

GroupId world_comm_id() { return GroupId{mix64(0x4d50495f574f524cULL)}; }

GroupId self_comm_id(Rank rank) {
  return GroupId{hash_combine(mix64(0x4d50495f53454c46ULL), rank.value)};
}

GroupId derived_comm_id(GroupId parent, std::uint64_t n, Rank lowest) {
  return GroupId{hash_combine(hash_combine(parent.value, n), lowest.value)};
}

}  // namespace vcx::mpi
