// One completed access to memory, as the tool of the memory's owner compares
// it with others: who made it, which bytes, how, where it started (a vector
// clock) and where it was complete (a tick of its rank's clock).
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "vcx/analysis.h"
#include "vcx/types.h"

namespace vcx::race {

struct AccessRecord {
  Rank rank{};              // the rank that made the access
  std::uint64_t space = 0;  // the memory space
  std::uint64_t lo = 0;     // bytes [lo, hi) from the space's base
  std::uint64_t hi = 0;
  AccessMode mode = AccessMode::Read;
  std::uint32_t atomic_op = 0;  // 0: not atomic
  std::uint32_t atomic_type = 0;
  std::uint32_t atomic_unit = 0;  // bytes of one element of atomic_type (0: unknown)
  std::uint64_t context = 0;      // the stream a fence orders (AccessNote::context)
  bool atomic_read = false;     // an atomic that only reads (MPI_NO_OP)
  bool local = false;           // a load or store of the program (kAccessLocal)
  Model model{};
  std::uint16_t call = 0;       // the call that made it
  std::uint16_t done_call = 0;  // the call it was complete at (same model)
  std::uint64_t done_pc = 0;    // that call's return address, 0 if unknown
  std::uint64_t pc = 0;         // the application's return address
  ClockValue done = 0;          // complete at this tick of `rank`'s clock
  std::vector<ClockValue> start;  // the clock when it started
  // Positions in `rank`'s program order (its analysed calls, counted): of
  // the call that made it and of the one it was complete at. Between the
  // calls of one rank they order what ticks cannot: a completion without
  // synchronisation (a flush) precedes the rank's next access, though no
  // clocked call lies between.
  std::uint64_t start_seq = 0;
  std::uint64_t done_seq = 0;
  // Delivered before the rank's later writes of the same context to the
  // same memory from this position on (an OpenSHMEM fence; 0: never).
  std::uint64_t ordered_seq = 0;
  // The tick of the first such write that is a clocked call of its own (a
  // write that may be a flag) and came before its completion (0: none): a
  // wait of the owner whose clock contains it saw this access delivered.
  ClockValue ordered_tick = 0;
  // Delivered where a wait of the memory's owner saw it (or a write ordered
  // after it): before whatever follows tick `seen_tick` of `seen_by`.
  bool seen = false;
  Rank seen_by{};
  ClockValue seen_tick = 0;

  bool writes() const { return mode == AccessMode::Write; }
  bool overlaps(const AccessRecord& o) const { return lo < o.hi && o.lo < hi; }
  // Atomic with respect to each other: both atomic, same type, the same
  // operation or one of them only reads, and on the same elements: atomicity
  // holds per element, so bytes shared at different element boundaries are
  // not updated atomically with respect to each other.
  bool atomic_with(const AccessRecord& o) const {
    return atomic_op != 0 && o.atomic_op != 0 && atomic_type == o.atomic_type &&
           (atomic_op == o.atomic_op || atomic_read || o.atomic_read) && same_elements(o);
  }
  bool same_elements(const AccessRecord& o) const {
    if (atomic_unit != o.atomic_unit) return false;
    if (atomic_unit == 0) return true;  // no size known: element boundaries are not checked
    return (lo > o.lo ? lo - o.lo : o.lo - lo) % atomic_unit == 0;
  }
  bool conflicts_with(const AccessRecord& o) const {
    return overlaps(o) && (writes() || o.writes()) && !atomic_with(o);
  }
  // This access was complete before `later` started: its completion
  // happened before `later`'s start.
  bool before(const AccessRecord& later) const {
    if (seen && later.start[seen_by.value] >= seen_tick) return true;
    if (later.rank == rank)
      return (local && later.local) || done_seq < later.start_seq ||
             (ordered_seq != 0 && ordered_seq < later.start_seq && later.writes() &&
              !later.local && later.context == context) ||
             accumulates_in_order(later);
    return later.start[rank.value] >= done;
  }
  // One origin's MPI accumulate-family operations (accumulate, get
  // accumulate, fetch-and-op, compare-and-swap) to the same target
  // location take effect in program order: the default accumulate_ordering
  // (MPI 4.0, 12.7.2).
  bool accumulates_in_order(const AccessRecord& later) const {
    return model == Model::Mpi && later.model == Model::Mpi && atomic_op != 0 &&
           later.atomic_op != 0 && !local && !later.local && start_seq < later.start_seq;
  }
  bool concurrent_with(const AccessRecord& o) const { return !before(o) && !o.before(*this); }
  // The same access made again (a loop): same rank, code, bytes and kind.
  bool repeats(const AccessRecord& o) const {
    return rank == o.rank && pc == o.pc && call == o.call && model == o.model && lo == o.lo &&
           local == o.local && context == o.context &&
           hi == o.hi && mode == o.mode && atomic_op == o.atomic_op &&
           atomic_type == o.atomic_type && atomic_read == o.atomic_read;
  }
};

// Messages between the race modules of two tools start with their kind.
enum class WireKind : std::uint32_t {
  Record = 1,    // RecordWire, then the access's start clock
  Frontier = 2,  // FrontierWire, then the clock
};

// What a rank's accesses still to come (open now or started later) start
// after at the earliest: the clock at the start of its oldest open access,
// or its clock now; and the same in program order (FrontierWire::seq).
struct FrontierWire {
  WireKind kind;
  std::uint32_t clock_entries;
  std::uint64_t seq;
};
static_assert(sizeof(FrontierWire) == 16);

// On the wire between tools: this header, then `clock_entries` clock values.
struct RecordWire {
  WireKind kind;
  std::uint32_t atomic_unit;
  std::uint64_t space;
  std::uint64_t offset;  // in the space's units (the owner knows them)
  std::int64_t byte_offset;  // and further bytes
  std::uint64_t bytes;
  std::uint64_t done_pc;
  std::uint64_t pc;
  std::uint64_t done;
  std::uint64_t start_seq;
  std::uint64_t done_seq;
  std::uint64_t ordered_seq;
  std::uint64_t ordered_tick;
  std::uint64_t context;
  std::uint32_t atomic_op;
  std::uint32_t atomic_type;
  std::uint32_t clock_entries;
  std::uint16_t model;
  std::uint16_t call;
  std::uint16_t done_call;
  std::uint8_t mode;
  std::uint8_t atomic_read;
  std::uint32_t flags;  // the AccessNote's
};
static_assert(sizeof(RecordWire) == 128);

template <class Header>
void encode(const Header& h, std::span<const ClockValue> start, std::vector<std::uint8_t>& out) {
  out.resize(sizeof h + start.size_bytes());
  std::memcpy(out.data(), &h, sizeof h);
  std::memcpy(out.data() + sizeof h, start.data(), start.size_bytes());
}

// False when the bytes are not a record for a world of `world` ranks.
inline bool decode(std::span<const std::uint8_t> in, std::uint32_t world, RecordWire& h,
                   std::vector<ClockValue>& start) {
  if (in.size() < sizeof h) return false;
  std::memcpy(&h, in.data(), sizeof h);
  if (h.kind != WireKind::Record) return false;
  if (h.clock_entries != world || in.size() != sizeof h + world * sizeof(ClockValue)) return false;
  start.resize(world);
  std::memcpy(start.data(), in.data() + sizeof h, world * sizeof(ClockValue));
  return true;
}

}  // namespace vcx::race
