// What the translator knows about the communicators of its application
// rank: members as world ranks, a run-wide id, topology neighbours, the
// remote group of intercommunicators, and the receives posted on each that
// are not yet bound to a queue position.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "vcx/call_program.h"
#include "receive_order.h"
#include "vcx/types.h"

namespace vcx::mpi {

// A posted receive waiting for its place in its queue's FIFO order.
struct PostedReceive {
  ReceiveToken token;
  std::int32_t want_source;  // world rank, or kRankAny
  std::int32_t want_tag;     // or kTagAny
  bool resolved = false;     // source and tag known (from the call or the status)
  Rank source{};
  std::int32_t tag = 0;
};

struct CommData {
  GroupId id{};
  std::vector<Rank> members;  // (local) group: communicator rank → world rank
  std::vector<Rank> remote;   // remote group of an intercommunicator, else empty
  bool inter = false;
  bool topology = false;      // neighbourhood collectives allowed
  std::vector<Rank> in_neighbours;   // world ranks, MPI's order, PROC_NULL left out
  std::vector<Rank> out_neighbours;
  std::uint64_t constructions = 0;   // communicator constructors called on it
  std::uint64_t collectives = 0;     // collective instances started on it
  // The operations of its latest collective instances, for the deadlock
  // analysis (a member that called another operation in an instance never
  // completes it): instance, operation (the call), world rank of the root.
  struct RecentCollective {
    std::uint64_t instance;
    std::uint16_t call;
    std::int32_t root;
  };
  static constexpr std::size_t kRecentCollectives = 16;
  std::deque<RecentCollective> recent;
  std::deque<PostedReceive> posted;
  ReceiveOrder order;                // receives later ones may have to follow
  std::int32_t my_rank = -1;         // this process's rank in `members`

  // Point-to-point peers: the remote group on an intercommunicator.
  const std::vector<Rank>& peers() const { return inter ? remote : members; }
};
using CommPtr = std::shared_ptr<CommData>;

// Run-wide ids: every member derives the same id for the same communicator,
// without communicating.
GroupId world_comm_id();
GroupId self_comm_id(Rank rank);
// The n-th constructor call on `parent` creating a communicator whose lowest
// world rank is `lowest` (communicators made by one call are disjoint).
GroupId derived_comm_id(GroupId parent, std::uint64_t n, Rank lowest);
// Ids for constructors that are collective over a group, not a parent.
GroupId group_comm_id(std::uint64_t group_key, std::int32_t tag, std::uint64_t n);
GroupId intercomm_id(std::uint64_t low_key, std::uint64_t high_key, std::int32_t tag,
                     std::uint64_t n);
// A key for a set of ranks given in a fixed order.
std::uint64_t ranks_key(const std::vector<Rank>& ranks);

// Groups the translator derives from an intercommunicator for collectives.
GroupId bipartite_group_id(GroupId intercomm);
GroupId rooted_group_id(GroupId intercomm, Rank root);

}  // namespace vcx::mpi
