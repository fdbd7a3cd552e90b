// Events from the OpenSHMEM interceptor to the OpenSHMEM translator. The
// interceptor records and forwards; every interpretation happens in the
// translator.
//
// The event type is the call's index in the generated call table
// (shmem_calls.h, made at build time from translators/shmem/calls.tsv and
// the installed shmem.h): every intercepted function keeps its own name in
// the trace. Its family says which payload the event carries and how the
// translator maps it.
#pragma once

#include <cstdint>
#include <type_traits>

namespace vcx::shmem {

enum class Family : std::uint8_t {
  Init,        // shmem_init, shmem_init_thread, start_pes: InitEvent
  Finalize,    // shmem_finalize: 8 bytes, nothing
  GlobalExit,  // shmem_global_exit: ExitEvent
  CollWorld,   // all-to-all over every PE (barrier_all, sync_all, heap calls): CollectiveEvent
  CollSet,     // all-to-all over an active set (barrier, sync, collect, alltoall, reductions)
  BcastSet,    // one-to-all over an active set (broadcast): CollectiveEvent with a root
  LockSet,     // shmem_set_lock: LockEvent
  LockClear,   // shmem_clear_lock: LockEvent
  LockTest,    // shmem_test_lock: LockEvent, acquired says whether it returned 0
  Data,        // put, get, atomics (ctx variants too): DataEvent, not clocked
  Completion,  // fence, quiet (ctx variants too): CompletionEvent, not clocked
};

// What a data call does to the remote (symmetric) memory.
enum class DataKind : std::uint8_t {
  Put = 0,       // shmem_TYPE_put, putmem, putN: contiguous write
  Get = 1,       // contiguous read
  PutNbi = 2,    // non-blocking write (complete at quiet)
  GetNbi = 3,    // non-blocking read (complete at quiet)
  Iput = 4,      // strided write
  Iget = 5,      // strided read
  P = 6,         // single-element write
  G = 7,         // single-element read
  AmoRead = 8,   // atomic fetch
  AmoWrite = 9,  // atomic set, add, inc, and, or, xor (no result)
  AmoRmw = 10,   // atomic read-modify-write with a result (fetch_*, swap, compare_swap)
};

// A symmetric address, the same on every PE: static and global variables
// are named by their loaded object and their offset in it (the objects are
// loaded at different addresses on different PEs); symmetric heap memory
// (and anything else) by the address itself, which Open MPI keeps equal on
// every PE.
struct SymAddr {
  std::uint64_t object;  // 0: the raw address; else an id of the loaded object
  std::uint64_t offset;
  constexpr bool operator==(const SymAddr&) const = default;
};

struct InitEvent {
  std::int32_t world_rank;  // shmem_my_pe()
  std::int32_t world_size;  // shmem_n_pes()
  std::int32_t thread_level;
  std::int32_t reserved;
};

struct ExitEvent {
  std::int32_t status;
  std::int32_t reserved;
};

// An active set as the user passed it: PE_start, logPE_stride, PE_size;
// root is PE_root (an index into the set) for broadcasts, -1 otherwise.
// CollWorld calls carry 0, 0, n_pes.
struct CollectiveEvent {
  std::int32_t pe_start;
  std::int32_t log_stride;
  std::int32_t pe_size;
  std::int32_t root;
};

struct LockEvent {
  SymAddr lock;
  std::uint64_t local_addr;  // the lock variable in this process
  std::int32_t acquired;     // shmem_test_lock: 1 when it returned 0
  std::int32_t reserved;
};

// One data access, recorded for the race analysis: the remote range on PE
// `pe` starts at `remote` and touches `count` elements of `elem_bytes`,
// `stride` elements apart (1: contiguous).
struct DataEvent {
  SymAddr remote;
  std::uint64_t local_addr;  // the local buffer (0 for single-element calls and atomics)
  std::uint64_t elem_bytes;
  std::uint64_t count;
  std::int64_t stride;
  std::uint64_t ctx;         // the communication context, 0 for the default one
  std::int32_t pe;
  DataKind kind;
  std::uint8_t reserved[3];
};

struct CompletionEvent {
  std::uint64_t ctx;  // 0: the default context
};

static_assert(std::is_trivially_copyable_v<DataEvent>);
static_assert(sizeof(SymAddr) == 16);
static_assert(sizeof(InitEvent) == 16);
static_assert(sizeof(CollectiveEvent) == 16);
static_assert(sizeof(LockEvent) == 32);
static_assert(sizeof(DataEvent) == 64);
static_assert(sizeof(CompletionEvent) == 8);

}  // namespace vcx::shmem
