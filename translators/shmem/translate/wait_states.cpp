// What a PE blocked in an OpenSHMEM call waits for (vcx/wait_state.h), and
// what it did that others' waits depend on.
//
// * A collective waits for every member of its active set to enter the same
//   instance (the interceptor marks the call before its event goes out: it
//   is the set's next instance here); a broadcast's non-root PEs for the
//   root only. The operation is not compared: Open MPI completes some calls
//   of different kinds against each other.
// * wait_until and wait wait for a write into this PE's memory by another
//   PE; which one is not known, so any PE that can still go on may make it.
// * shmem_set_lock waits for whoever holds the lock to clear it.
// * A PE that called shmem_finalize counts it as one more collective over
//   every PE: Open MPI's finalize synchronises every PE like
//   shmem_barrier_all, and completes a barrier_all another PE is still in.
#include <string>

#include "shmem_translator.h"

namespace vcx::shmem {
namespace {

// The call every OpenSHMEM collective condition names: the same for all, so
// that no two are taken for a mismatch.
constexpr std::uint16_t kAnyCollective = 0;

const char* compare_text(Compare c) {
  switch (c) {
    case Compare::Eq: return "SHMEM_CMP_EQ";
    case Compare::Ne: return "SHMEM_CMP_NE";
    case Compare::Gt: return "SHMEM_CMP_GT";
    case Compare::Le: return "SHMEM_CMP_LE";
    case Compare::Lt: return "SHMEM_CMP_LT";
    case Compare::Ge: return "SHMEM_CMP_GE";
    case Compare::Other: break;
  }
  return "?";
}

std::string value_text(std::uint64_t bits, unsigned width, bool is_signed) {
  if (width < 8) bits &= (std::uint64_t{1} << (8 * width)) - 1;
  if (!is_signed) return std::to_string(bits);
  if (width < 8 && (bits >> (8 * width - 1)) != 0) bits |= ~std::uint64_t{0} << (8 * width);
  return std::to_string(static_cast<std::int64_t>(bits));
}

std::string set_text(const CollectiveEvent& e) {
  return "PE_start " + std::to_string(e.pe_start) + ", logPE_stride " +
         std::to_string(e.log_stride) + ", PE_size " + std::to_string(e.pe_size);
}

}  // namespace

bool ShmemTranslator::wait_state(const channel::BlockedCall& blocked, WaitState* out) {
  if (blocked.model != Model::Shmem || blocked.call >= static_cast<std::uint16_t>(Call::Count))
    return false;
  const std::string name = kCallNames[blocked.call];
  out->all_of = true;
  switch (kCallFamily[blocked.call]) {
    case Family::CollWorld:
    case Family::CollSet:
    case Family::BcastSet: {
      const auto e = blocked.payload_as<CollectiveEvent>();
      WaitCondition w;
      if (!set_members(e, &w.ranks)) return false;
      const GroupId group = set_id(e.pe_start, e.log_stride, e.pe_size);
      w.need = WaitNeed::Collective;
      w.comm = group.value;
      auto it = instances_.find(group);
      w.instance = (it == instances_.end() ? 0 : it->second) + 1;
      w.call = kAnyCollective;
      if (kCallFamily[blocked.call] == Family::BcastSet) {
        // A PE that is not the root needs the root's data only: which other
        // members relay it is the library's choice.
        if (e.root < 0 || e.root >= e.pe_size) return false;
        const Rank root = w.ranks[static_cast<std::size_t>(e.root)];
        if (root != self_) w.ranks.assign(1, root);
      }
      out->call = name + "(";
      if (kCallFamily[blocked.call] != Family::CollWorld) out->call += set_text(e);
      if (kCallFamily[blocked.call] == Family::BcastSet)
        out->call += ", PE_root " + std::to_string(e.root);
      out->call += ")";
      out->conditions.push_back(std::move(w));
      return true;
    }
    case Family::FlagWait: {
      const auto e = blocked.payload_as<BlockedFlagWait>();
      WaitCondition w;
      w.need = WaitNeed::Write;
      for (std::uint32_t r = 0; r < world_size_; ++r)
        if (r != self_.value) w.ranks.push_back(Rank{r});
      out->call = name + "(" + compare_text(e.compare) + ", " +
                  value_text(e.cmp_value, e.width, e.is_signed != 0) + ")";
      out->conditions.push_back(std::move(w));
      return true;
    }
    case Family::LockSet: {
      const auto e = blocked.payload_as<LockEvent>();
      WaitCondition w;
      w.need = WaitNeed::Lock;
      w.resource = lock_id(e.lock);
      for (std::uint32_t r = 0; r < world_size_; ++r) w.ranks.push_back(Rank{r});
      out->call = name + "()";
      out->conditions.push_back(std::move(w));
      return true;
    }
    default:
      return false;
  }
}

void ShmemTranslator::wait_facts(WaitFacts* out) const {
  const GroupId world = set_id(0, 0, static_cast<std::int32_t>(world_size_));
  bool world_told = false;
  for (const auto& [group, n] : instances_) {
    const bool is_world = group == world;
    world_told |= is_world;
    out->collectives.push_back(
        WaitFacts::Instances{group.value, n + (is_world && finalized_ ? 1 : 0), {}});
  }
  if (finalized_ && !world_told) out->collectives.push_back(WaitFacts::Instances{world.value, 1, {}});
  out->locks_held.insert(out->locks_held.end(), locks_held_.begin(), locks_held_.end());
}

}  // namespace vcx::shmem
