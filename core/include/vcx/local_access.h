// Local loads and stores as an interceptor sends them to its tool: one event
// of its model's local-access type (MPI's and OpenSHMEM's "load") carries a
// LocalAccessBatch and `count` records. The program reports loads and stores
// of exposed memory through vcx's runtime for instrumented programs
// (instrument/); the interceptor names the memory as the model's translator
// knows it and merges, per instruction, the accesses between two of the
// rank's events into runs of adjacent bytes.
#pragma once

#include <cstdint>
#include <type_traits>

namespace vcx {

enum class LocalAccessKind : std::uint8_t {
  // Memory a translator names by `tag` (an MPI window's handle, an
  // OpenSHMEM object's id) and `offset` from where the tag's memory of
  // `owner` starts.
  Memory = 0,
  // A buffer of one of the rank's own operations in flight: `offset` is the
  // address.
  Buffer = 1,
};

struct LocalAccessRecord {
  std::uint64_t tag;
  std::uint64_t offset;
  std::uint64_t bytes;
  std::uint64_t pc;     // return address of the runtime's entry point in the program
  std::int32_t owner;   // world rank (PE) whose memory it is
  std::uint8_t write;   // 1: a store
  LocalAccessKind kind;
  std::uint16_t reserved;
};

enum LocalAccessBatchFlags : std::uint32_t {
  // The first batch of a rank, sent when the interceptor starts reporting
  // local accesses (it may carry no record).
  kLocalAccessesStart = 1u << 0,
  // Accesses to exposed memory went unreported: more buffers in flight
  // than the interceptor watches.
  kLocalAccessesOverflow = 1u << 1,
};

struct LocalAccessBatch {
  std::uint32_t count;  // records that follow
  std::uint32_t flags;  // LocalAccessBatchFlags
};

static_assert(sizeof(LocalAccessRecord) == 40);
static_assert(sizeof(LocalAccessBatch) == 8);
static_assert(std::is_trivially_copyable_v<LocalAccessRecord>);

}  // namespace vcx
