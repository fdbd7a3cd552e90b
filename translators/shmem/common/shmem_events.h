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
#include <string_view>
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
  Annotate,    // vcx_annotate_shmem_* (annotations/include/vcx/annotate_shmem.h): AnnotateEvent
  // Flags (docs/clock-rules.md, "Flags"): synchronisation through memory.
  FlagWait,    // wait_until, wait, and test when it returns 1: FlagWaitEvent, clocked
  FlagWrite,   // vcx_flag_write: a write that may be a flag, announced before
               // the call that makes it: FlagWriteEvent, not clocked
  FlagResult,  // vcx_flag_result: what an announced fetching atomic fetched:
               // FlagResultEvent, not clocked
  LocalAccess, // load (store: its name in reports): the program's loads and stores,
               // vcx/local_access.h, not clocked
};

// The calls that complete the PE's outstanding puts, _nbi calls and
// non-fetching atomics (as shmem_quiet does): the barriers, and the
// symmetric heap calls, which contain one.
inline bool completes_data(std::string_view call) {
  return call == "shmem_barrier_all" || call == "shmem_barrier" || call == "shmem_malloc" ||
         call == "shmem_calloc" || call == "shmem_align" || call == "shmem_realloc" ||
         call == "shmem_free" || call == "shmalloc" || call == "shfree" ||
         call == "shmemalign" || call == "shrealloc";
}

// The completion calls (CompletionEvent) that complete their context's
// outstanding operations: shmem_quiet, shmem_ctx_quiet, and
// shmem_ctx_destroy, which quiets the context before it frees it
// (OpenSHMEM 1.4, section 9.4.2). shmem_fence and shmem_ctx_fence only
// order them.
inline bool completes_context(std::string_view call) {
  return call.find("quiet") != std::string_view::npos || call == "shmem_ctx_destroy";
}

// What an announced write does to the value at its address.
enum class FlagOp : std::uint8_t {
  Store = 0,        // stores operand (p, one-element put, set, swap)
  Add = 1,          // adds operand (fetch_add, fetch_inc)
  And = 2,          // fetch_and, fetch_or, fetch_xor with operand
  Or = 3,
  Xor = 4,
  CompareSwap = 5,  // stores operand if the value was cond
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
  std::uint64_t pc;          // the application's return address
  std::int32_t pe;
  DataKind kind;
  std::uint8_t reserved[3];
};

struct CompletionEvent {
  std::uint64_t ctx;  // 0: the default context
  std::uint64_t pc;   // the application's return address
};

// A user annotation; the call (its event type) says which.
struct AnnotateEvent {
  std::int64_t id;    // process annotations: the queue; resource ones: the resource
  std::int32_t pe;    // target, origin or deposition PE
  std::int32_t reserved;
};

// A write of `width` bytes at `remote` on PE `pe` that may be a flag,
// announced before the call. Values are the bits of the value, zero
// extended; signedness is that of the call's type.
struct FlagWriteEvent {
  SymAddr remote;
  std::uint64_t operand;
  std::uint64_t cond;      // CompareSwap: the value compared with
  std::uint16_t call;      // the call that writes (its Call)
  FlagOp op;
  std::uint8_t width;      // 1, 2, 4 or 8
  std::uint8_t is_signed;
  std::uint8_t reserved[3];
  std::int32_t pe;
};

// After a fetching atomic announced by the FlagWriteEvent of event `announce`.
struct FlagResultEvent {
  std::uint64_t announce;
  std::uint64_t fetched;
};

// A wait that returned (wait_until, wait) or a test that returned 1, on the
// local flag `addr`: `value` is what the interceptor read there right after
// Open MPI returned.
struct FlagWaitEvent {
  SymAddr addr;
  std::uint64_t local_addr;
  std::uint64_t cmp_value;
  std::uint64_t value;
  std::int32_t cmp;        // SHMEM_CMP_*; the wait calls: SHMEM_CMP_NE
  std::uint8_t width;
  std::uint8_t is_signed;
  std::uint8_t reserved[2];
};

// A wait_until or wait the PE is in, in the blocked-call slot
// (vcx/channel/blocked_call.h): the flag and what its value must compare
// to, the comparison as the standard names it (shmem.h's SHMEM_CMP_*
// values are the library's own).
enum class Compare : std::uint8_t { Eq, Ne, Gt, Le, Lt, Ge, Other };
struct BlockedFlagWait {
  SymAddr addr;
  std::uint64_t cmp_value;
  Compare compare;
  std::uint8_t width;
  std::uint8_t is_signed;
  std::uint8_t reserved[5];
};

static_assert(std::is_trivially_copyable_v<DataEvent>);
static_assert(sizeof(BlockedFlagWait) == 32);
static_assert(sizeof(SymAddr) == 16);
static_assert(sizeof(InitEvent) == 16);
static_assert(sizeof(CollectiveEvent) == 16);
static_assert(sizeof(LockEvent) == 32);
static_assert(sizeof(DataEvent) == 72);
static_assert(sizeof(CompletionEvent) == 16);
static_assert(sizeof(AnnotateEvent) == 16);
static_assert(sizeof(FlagWriteEvent) == 48);
static_assert(sizeof(FlagResultEvent) == 16);
static_assert(sizeof(FlagWaitEvent) == 48);

}  // namespace vcx::shmem
