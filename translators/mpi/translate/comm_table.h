// What the translator knows about the communicators of its application
// rank: members as world ranks, a run-wide id, and the receives posted on
// each that are not yet bound to a queue position.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "vcx/call_program.h"
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
  std::vector<Rank> members;       // communicator rank → world rank
  std::uint64_t constructions = 0; // communicator constructors called on it
  std::uint64_t collectives = 0;   // collective operations started on it
  std::deque<PostedReceive> posted;
};
using CommPtr = std::shared_ptr<CommData>;

// Run-wide ids: every member derives the same id for the same communicator.
GroupId world_comm_id();
GroupId self_comm_id(Rank rank);
// The n-th constructor call on `parent` creating a communicator whose lowest
// world rank is `lowest` (communicators made by one call are disjoint).
GroupId derived_comm_id(GroupId parent, std::uint64_t n, Rank lowest);

}  // namespace vcx::mpi
