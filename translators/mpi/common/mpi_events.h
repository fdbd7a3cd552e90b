// Events from the MPI interceptor to the MPI translator. The interceptor
// records and forwards; every interpretation happens in the translator.
//
// Ranks in events are communicator ranks as the user passed them (the
// translator maps them to world ranks); the MPI library's special values are
// replaced by the constants below so that the translator does not depend on
// one MPI implementation's mpi.h. Handles are widened to 64 bits.
#pragma once

#include <cstdint>
#include <type_traits>

namespace vcx::mpi {

// X(name, family, collective kind) for every MPI call with semantics; the
// event type is its index. The family says which payload the event carries
// and how the translator maps it; the kind applies to collectives (plain,
// non-blocking "I" and persistent "_init" forms, and large-count "_c"
// variants, each recorded under its own name).
#define VCX_MPI_CALLS(X) \
  X(Init, Init, None) \
  X(Init_thread, Init, None) \
  X(Finalize, Finalize, None) \
  X(Send, Send, None) \
  X(Send_c, Send, None) \
  X(Bsend, Send, None) \
  X(Bsend_c, Send, None) \
  X(Rsend, Send, None) \
  X(Rsend_c, Send, None) \
  X(Ssend, Send, None) \
  X(Ssend_c, Send, None) \
  X(Isend, Send, None) \
  X(Isend_c, Send, None) \
  X(Ibsend, Send, None) \
  X(Ibsend_c, Send, None) \
  X(Irsend, Send, None) \
  X(Irsend_c, Send, None) \
  X(Issend, Send, None) \
  X(Issend_c, Send, None) \
  X(Send_init, SendInit, None) \
  X(Send_init_c, SendInit, None) \
  X(Bsend_init, SendInit, None) \
  X(Bsend_init_c, SendInit, None) \
  X(Rsend_init, SendInit, None) \
  X(Rsend_init_c, SendInit, None) \
  X(Ssend_init, SendInit, None) \
  X(Ssend_init_c, SendInit, None) \
  X(Recv, Recv, None) \
  X(Recv_c, Recv, None) \
  X(Irecv, Irecv, None) \
  X(Irecv_c, Irecv, None) \
  X(Recv_init, RecvInit, None) \
  X(Recv_init_c, RecvInit, None) \
  X(Start, Start, None) \
  X(Startall, Start, None) \
  X(Request_free, RequestFree, None) \
  X(Mprobe, Mprobe, None) \
  X(Improbe, Mprobe, None) \
  X(Probe, Mprobe, None) /* no event: only the blocked-call slot */ \
  X(Mrecv, Mrecv, None) \
  X(Mrecv_c, Mrecv, None) \
  X(Imrecv, Mrecv, None) \
  X(Imrecv_c, Mrecv, None) \
  X(Cancel, Cancel, None) \
  X(Wait, Completion, None) \
  X(Waitall, Completion, None) \
  X(Waitany, Completion, None) \
  X(Waitsome, Completion, None) \
  X(Test, Completion, None) \
  X(Testall, Completion, None) \
  X(Testany, Completion, None) \
  X(Testsome, Completion, None) \
  X(Sendrecv, Sendrecv, None) \
  X(Sendrecv_c, Sendrecv, None) \
  X(Sendrecv_replace, Sendrecv, None) \
  X(Sendrecv_replace_c, Sendrecv, None) \
  X(Isendrecv, Isendrecv, None) \
  X(Isendrecv_c, Isendrecv, None) \
  X(Isendrecv_replace, Isendrecv, None) \
  X(Isendrecv_replace_c, Isendrecv, None) \
  X(Barrier, Collective, AllToAll) \
  X(Ibarrier, Icollective, AllToAll) \
  X(Barrier_init, Pcollective, AllToAll) \
  X(Allgather, Collective, AllToAll) \
  X(Allgather_c, Collective, AllToAll) \
  X(Iallgather, Icollective, AllToAll) \
  X(Iallgather_c, Icollective, AllToAll) \
  X(Allgather_init, Pcollective, AllToAll) \
  X(Allgather_init_c, Pcollective, AllToAll) \
  X(Allgatherv, Collective, AllToAll) \
  X(Allgatherv_c, Collective, AllToAll) \
  X(Iallgatherv, Icollective, AllToAll) \
  X(Iallgatherv_c, Icollective, AllToAll) \
  X(Allgatherv_init, Pcollective, AllToAll) \
  X(Allgatherv_init_c, Pcollective, AllToAll) \
  X(Alltoall, Collective, AllToAll) \
  X(Alltoall_c, Collective, AllToAll) \
  X(Ialltoall, Icollective, AllToAll) \
  X(Ialltoall_c, Icollective, AllToAll) \
  X(Alltoall_init, Pcollective, AllToAll) \
  X(Alltoall_init_c, Pcollective, AllToAll) \
  X(Alltoallv, Collective, AllToAll) \
  X(Alltoallv_c, Collective, AllToAll) \
  X(Ialltoallv, Icollective, AllToAll) \
  X(Ialltoallv_c, Icollective, AllToAll) \
  X(Alltoallv_init, Pcollective, AllToAll) \
  X(Alltoallv_init_c, Pcollective, AllToAll) \
  X(Alltoallw, Collective, AllToAll) \
  X(Alltoallw_c, Collective, AllToAll) \
  X(Ialltoallw, Icollective, AllToAll) \
  X(Ialltoallw_c, Icollective, AllToAll) \
  X(Alltoallw_init, Pcollective, AllToAll) \
  X(Alltoallw_init_c, Pcollective, AllToAll) \
  X(Allreduce, Collective, AllToAll) \
  X(Allreduce_c, Collective, AllToAll) \
  X(Iallreduce, Icollective, AllToAll) \
  X(Iallreduce_c, Icollective, AllToAll) \
  X(Allreduce_init, Pcollective, AllToAll) \
  X(Allreduce_init_c, Pcollective, AllToAll) \
  X(Reduce_scatter, Collective, AllToAll) \
  X(Reduce_scatter_c, Collective, AllToAll) \
  X(Ireduce_scatter, Icollective, AllToAll) \
  X(Ireduce_scatter_c, Icollective, AllToAll) \
  X(Reduce_scatter_init, Pcollective, AllToAll) \
  X(Reduce_scatter_init_c, Pcollective, AllToAll) \
  X(Reduce_scatter_block, Collective, AllToAll) \
  X(Reduce_scatter_block_c, Collective, AllToAll) \
  X(Ireduce_scatter_block, Icollective, AllToAll) \
  X(Ireduce_scatter_block_c, Icollective, AllToAll) \
  X(Reduce_scatter_block_init, Pcollective, AllToAll) \
  X(Reduce_scatter_block_init_c, Pcollective, AllToAll) \
  X(Bcast, Collective, OneToAll) \
  X(Bcast_c, Collective, OneToAll) \
  X(Ibcast, Icollective, OneToAll) \
  X(Ibcast_c, Icollective, OneToAll) \
  X(Bcast_init, Pcollective, OneToAll) \
  X(Bcast_init_c, Pcollective, OneToAll) \
  X(Scatter, Collective, OneToAll) \
  X(Scatter_c, Collective, OneToAll) \
  X(Iscatter, Icollective, OneToAll) \
  X(Iscatter_c, Icollective, OneToAll) \
  X(Scatter_init, Pcollective, OneToAll) \
  X(Scatter_init_c, Pcollective, OneToAll) \
  X(Scatterv, Collective, OneToAll) \
  X(Scatterv_c, Collective, OneToAll) \
  X(Iscatterv, Icollective, OneToAll) \
  X(Iscatterv_c, Icollective, OneToAll) \
  X(Scatterv_init, Pcollective, OneToAll) \
  X(Scatterv_init_c, Pcollective, OneToAll) \
  X(Gather, Collective, AllToOne) \
  X(Gather_c, Collective, AllToOne) \
  X(Igather, Icollective, AllToOne) \
  X(Igather_c, Icollective, AllToOne) \
  X(Gather_init, Pcollective, AllToOne) \
  X(Gather_init_c, Pcollective, AllToOne) \
  X(Gatherv, Collective, AllToOne) \
  X(Gatherv_c, Collective, AllToOne) \
  X(Igatherv, Icollective, AllToOne) \
  X(Igatherv_c, Icollective, AllToOne) \
  X(Gatherv_init, Pcollective, AllToOne) \
  X(Gatherv_init_c, Pcollective, AllToOne) \
  X(Reduce, Collective, AllToOne) \
  X(Reduce_c, Collective, AllToOne) \
  X(Ireduce, Icollective, AllToOne) \
  X(Ireduce_c, Icollective, AllToOne) \
  X(Reduce_init, Pcollective, AllToOne) \
  X(Reduce_init_c, Pcollective, AllToOne) \
  X(Scan, Collective, Prefix) \
  X(Scan_c, Collective, Prefix) \
  X(Iscan, Icollective, Prefix) \
  X(Iscan_c, Icollective, Prefix) \
  X(Scan_init, Pcollective, Prefix) \
  X(Scan_init_c, Pcollective, Prefix) \
  X(Exscan, Collective, Prefix) \
  X(Exscan_c, Collective, Prefix) \
  X(Iexscan, Icollective, Prefix) \
  X(Iexscan_c, Icollective, Prefix) \
  X(Exscan_init, Pcollective, Prefix) \
  X(Exscan_init_c, Pcollective, Prefix) \
  X(Neighbor_allgather, Collective, Neighbor) \
  X(Neighbor_allgather_c, Collective, Neighbor) \
  X(Ineighbor_allgather, Icollective, Neighbor) \
  X(Ineighbor_allgather_c, Icollective, Neighbor) \
  X(Neighbor_allgather_init, Pcollective, Neighbor) \
  X(Neighbor_allgather_init_c, Pcollective, Neighbor) \
  X(Neighbor_allgatherv, Collective, Neighbor) \
  X(Neighbor_allgatherv_c, Collective, Neighbor) \
  X(Ineighbor_allgatherv, Icollective, Neighbor) \
  X(Ineighbor_allgatherv_c, Icollective, Neighbor) \
  X(Neighbor_allgatherv_init, Pcollective, Neighbor) \
  X(Neighbor_allgatherv_init_c, Pcollective, Neighbor) \
  X(Neighbor_alltoall, Collective, Neighbor) \
  X(Neighbor_alltoall_c, Collective, Neighbor) \
  X(Ineighbor_alltoall, Icollective, Neighbor) \
  X(Ineighbor_alltoall_c, Icollective, Neighbor) \
  X(Neighbor_alltoall_init, Pcollective, Neighbor) \
  X(Neighbor_alltoall_init_c, Pcollective, Neighbor) \
  X(Neighbor_alltoallv, Collective, Neighbor) \
  X(Neighbor_alltoallv_c, Collective, Neighbor) \
  X(Ineighbor_alltoallv, Icollective, Neighbor) \
  X(Ineighbor_alltoallv_c, Icollective, Neighbor) \
  X(Neighbor_alltoallv_init, Pcollective, Neighbor) \
  X(Neighbor_alltoallv_init_c, Pcollective, Neighbor) \
  X(Neighbor_alltoallw, Collective, Neighbor) \
  X(Neighbor_alltoallw_c, Collective, Neighbor) \
  X(Ineighbor_alltoallw, Icollective, Neighbor) \
  X(Ineighbor_alltoallw_c, Icollective, Neighbor) \
  X(Neighbor_alltoallw_init, Pcollective, Neighbor) \
  X(Neighbor_alltoallw_init_c, Pcollective, Neighbor) \
  X(Comm_dup, CommCreate, None) \
  X(Comm_dup_with_info, CommCreate, None) \
  X(Comm_idup, CommCreate, None) \
  X(Comm_idup_with_info, CommCreate, None) \
  X(Comm_split, CommCreate, None) \
  X(Comm_split_type, CommCreate, None) \
  X(Comm_create, CommCreate, None) \
  X(Comm_create_group, CommCreate, None) \
  X(Comm_create_from_group, CommCreate, None) \
  X(Intercomm_create, CommCreate, None) \
  X(Intercomm_create_from_groups, CommCreate, None) \
  X(Intercomm_merge, CommCreate, None) \
  X(Cart_create, CommCreate, None) \
  X(Cart_sub, CommCreate, None) \
  X(Graph_create, CommCreate, None) \
  X(Dist_graph_create, CommCreate, None) \
  X(Dist_graph_create_adjacent, CommCreate, None) \
  X(Win_create, WinCreate, None) \
  X(Win_create_c, WinCreate, None) \
  X(Win_allocate, WinCreate, None) \
  X(Win_allocate_c, WinCreate, None) \
  X(Win_allocate_shared, WinCreate, None) \
  X(Win_allocate_shared_c, WinCreate, None) \
  X(Win_create_dynamic, WinCreate, None) \
  X(Win_free, WinFree, None) \
  X(Win_fence, WinFence, None) \
  X(Win_post, WinPost, None) \
  X(Win_start, WinStart, None) \
  X(Win_complete, WinComplete, None) \
  X(Win_wait, WinWait, None) \
  X(Win_test, WinWait, None) \
  X(Win_lock, WinLock, None) \
  X(Win_unlock, WinUnlock, None) \
  X(Win_lock_all, WinLockAll, None) \
  X(Win_unlock_all, WinUnlockAll, None) \
  X(Win_flush, WinFlush, None) \
  X(Win_flush_all, WinFlush, None) \
  X(Win_flush_local, WinFlush, None) \
  X(Win_flush_local_all, WinFlush, None) \
  X(Win_attach, WinAttach, None) \
  X(Win_detach, WinAttach, None) \
  X(Put, RmaAccess, None) \
  X(Put_c, RmaAccess, None) \
  X(Get, RmaAccess, None) \
  X(Get_c, RmaAccess, None) \
  X(Accumulate, RmaAccess, None) \
  X(Accumulate_c, RmaAccess, None) \
  X(Get_accumulate, RmaAccess, None) \
  X(Get_accumulate_c, RmaAccess, None) \
  X(Fetch_and_op, RmaAccess, None) \
  X(Compare_and_swap, RmaAccess, None) \
  X(Rput, RmaAccess, None) \
  X(Rput_c, RmaAccess, None) \
  X(Rget, RmaAccess, None) \
  X(Rget_c, RmaAccess, None) \
  X(Raccumulate, RmaAccess, None) \
  X(Raccumulate_c, RmaAccess, None) \
  X(Rget_accumulate, RmaAccess, None) \
  X(Rget_accumulate_c, RmaAccess, None) \
  X(Comm_free, CommFree, None) \
  X(Comm_disconnect, CommFree, None) \
  X(Abort, Abort, None) \
  X(Load, LocalAccess, None) \
  X(Store, LocalAccess, None) \
  X(Annotate_tick, Annotate, None) \
  X(Annotate_process_signal, Annotate, None) \
  X(Annotate_process_wait, Annotate, None) \
  X(Annotate_resource_signal, Annotate, None) \
  X(Annotate_resource_wait, Annotate, None)

enum class Call : std::uint16_t {
#define VCX_X(name, family, kind) name,
  VCX_MPI_CALLS(VCX_X)
#undef VCX_X
  Count
};

inline constexpr const char* kCallNames[] = {
#define VCX_X(name, family, kind) "MPI_" #name,
    VCX_MPI_CALLS(VCX_X)
#undef VCX_X
};
static_assert(sizeof(kCallNames) / sizeof(kCallNames[0]) == static_cast<std::size_t>(Call::Count));

// Names of the annotation calls (the Annotate family), in call order from
// Call::Annotate_tick.
inline constexpr const char* kAnnotationNames[] = {
    "vcx_annotate_tick", "vcx_annotate_process_signal", "vcx_annotate_process_wait",
    "vcx_annotate_resource_signal", "vcx_annotate_resource_wait",
};
static_assert(static_cast<std::size_t>(Call::Annotate_tick) +
                  sizeof(kAnnotationNames) / sizeof(kAnnotationNames[0]) ==
              static_cast<std::size_t>(Call::Count));

enum class Family : std::uint8_t {
  Init, Finalize, Abort, Send, SendInit, Recv, Irecv, RecvInit, Start, RequestFree, Mprobe,
  Mrecv, Cancel, Completion, Sendrecv, Isendrecv, Collective, Icollective, Pcollective, CommCreate,
  CommFree, WinCreate, WinFree, WinFence, WinPost, WinStart, WinComplete, WinWait, WinLock,
  WinUnlock, WinLockAll, WinUnlockAll, WinFlush, WinAttach, RmaAccess, LocalAccess, Annotate,
};
enum class CollKind : std::uint8_t { None, AllToAll, OneToAll, AllToOne, Prefix, Neighbor };

inline constexpr Family kCallFamily[] = {
#define VCX_X(name, family, kind) Family::family,
    VCX_MPI_CALLS(VCX_X)
#undef VCX_X
};
inline constexpr CollKind kCallCollKind[] = {
#define VCX_X(name, family, kind) CollKind::kind,
    VCX_MPI_CALLS(VCX_X)
#undef VCX_X
};

inline constexpr std::int32_t kRankProcNull = -1;
inline constexpr std::int32_t kRankAny = -2;
inline constexpr std::int32_t kRankRoot = -3;  // MPI_ROOT
inline constexpr std::int32_t kTagAny = -1;
// A wildcard receive that a replay (vcx-run --force-match) posted with a
// given source instead of MPI_ANY_SOURCE: its event's source is
// forced_source(rank in the communicator). It is still the program's
// wildcard receive (it keeps its place among them), matching that source only.
inline constexpr std::int32_t kRankForcedBase = -16;
inline constexpr std::int32_t forced_source(std::int32_t rank) { return kRankForcedBase - rank; }
inline constexpr bool is_forced_source(std::int32_t source) { return source <= kRankForcedBase; }
inline constexpr std::int32_t unforced_source(std::int32_t source) {
  return kRankForcedBase - source;
}

enum class SendMode : std::uint8_t { Standard = 0, Buffered = 1, Ready = 2, Synchronous = 3 };

struct InitEvent {
  std::uint64_t comm_world;
  std::uint64_t comm_self;
  std::int32_t world_rank;
  std::int32_t world_size;
  std::int32_t thread_level;
  std::int32_t reserved;
};

// Blocking sends and the initiation of non-blocking ones (request != 0).
struct SendEvent {
  std::uint64_t comm;
  std::uint64_t request;
  std::int32_t dest;
  std::int32_t tag;
  SendMode mode;
  std::uint8_t reserved[7];
  std::uint64_t bytes;  // the message's size, when events carry times (traces), else 0
};

// A blocking receive: posted and completed in one call.
struct RecvEvent {
  std::uint64_t comm;
  std::int32_t source;
  std::int32_t tag;
  std::int32_t status_source;
  std::int32_t status_tag;
  std::uint64_t pc;  // the application's return address
  std::uint64_t bytes;  // received, when events carry times (traces), else 0
};

struct IrecvEvent {
  std::uint64_t comm;
  std::uint64_t request;
  std::int32_t source;
  std::int32_t tag;
  std::uint64_t pc;  // the application's return address
};

// One request completed by a Wait/Test family call (its handle as it was
// before the call; the status as MPI filled it).
struct Completion {
  std::uint64_t request;
  std::int32_t source;
  std::int32_t tag;
  std::int32_t cancelled;
  std::int32_t reserved;
  std::uint64_t bytes = 0;  // received, when events carry times (traces), else 0
};

// Wait/Test family: `count` Completion records follow.
struct CompletionEvent {
  std::uint32_t count;
  std::uint32_t reserved;
};

// What a Wait family call waits on, in the blocked-call slot
// (vcx/channel/blocked_call.h): the first of its requests' ids (as the
// completion will name them), and how many it was given.
struct BlockedWait {
  std::uint32_t count;   // requests given
  std::uint32_t listed;  // of them in `requests` (the first ones)
  std::uint64_t requests[11];
};
static_assert(sizeof(BlockedWait) == 96);

// MPI_Isendrecv(_replace): sent after the call, with the request; the
// receive's status comes with the completion.
struct IsendrecvEvent {
  std::uint64_t comm;
  std::uint64_t request;
  std::int32_t dest;
  std::int32_t send_tag;
  std::int32_t source;
  std::int32_t recv_tag;
  std::uint64_t pc;  // the application's return address
  std::uint64_t send_bytes;  // when events carry times (traces), else 0
};

struct SendrecvEvent {
  std::uint64_t comm;
  std::int32_t dest;
  std::int32_t send_tag;
  std::int32_t source;
  std::int32_t recv_tag;
  std::int32_t status_source;
  std::int32_t status_tag;
  std::uint64_t pc;  // the application's return address
  std::uint64_t send_bytes, recv_bytes;  // when events carry times (traces), else 0
};

// Blocking collectives (before the call), non-blocking initiations and
// persistent _init calls (after it, with the request).
struct CollectiveEvent {
  std::uint64_t comm;
  std::uint64_t request;  // 0 for blocking calls
  std::int32_t root;      // communicator rank, kRankRoot/kRankProcNull on intercommunicators
  std::int32_t reserved;
};

// MPI_Start / MPI_Startall: `count` request handles (u64) follow; with
// kStartForcedSources, then `count` sources (i32): for each started
// persistent receive a replay forced, forced_source(rank in its
// communicator), else kStartAsPosted.
struct StartEvent {
  std::uint32_t count;
  std::uint32_t flags;
  std::uint64_t pc;  // the application's return address
};
inline constexpr std::uint32_t kStartForcedSources = 1;
inline constexpr std::int32_t kStartAsPosted = 0x7fffffff;

struct RequestEvent {  // MPI_Request_free, MPI_Cancel
  std::uint64_t request;
};

// MPI_Mprobe, or MPI_Improbe that found a message.
struct MprobeEvent {
  std::uint64_t comm;
  std::uint64_t message;
  std::int32_t source;
  std::int32_t tag;
  std::int32_t status_source;
  std::int32_t status_tag;
  std::uint64_t pc;  // the application's return address
};

// MPI_Mrecv (status known) or MPI_Imrecv (request; status at completion).
struct MrecvEvent {
  std::uint64_t message;
  std::uint64_t request;
  std::int32_t status_source;
  std::int32_t status_tag;
  std::uint64_t bytes;  // received (MPI_Mrecv), when events carry times (traces), else 0
};

struct AbortEvent {
  std::uint64_t comm;
  std::int32_t errorcode;
  std::int32_t reserved;
};

// How the members of a new communicator agree on its id.
enum class CommContext : std::uint32_t {
  Parent = 0,       // collective over the parent communicator
  Group = 1,        // MPI_Comm_create_group: over the group, with a tag
  Intercomm = 2,    // MPI_Intercomm_create: over both groups, with a tag
};

// A communicator constructor returned. Arrays follow in this order:
// `nlocal` world ranks of the (local) group in rank order, `nremote` world
// ranks of the remote group (intercommunicators), `nin` and `nout`
// neighbour ranks (topologies; communicator ranks, MPI's neighbour order).
struct CommCreateEvent {
  std::uint64_t parent;
  std::uint64_t newcomm;
  std::uint32_t is_null;     // this process got MPI_COMM_NULL
  std::uint32_t same_group;  // a duplicate: group and topology of the parent
  std::uint32_t nlocal;
  std::uint32_t nremote;
  std::int32_t nin;          // -1: no topology
  std::int32_t nout;
  CommContext context;
  std::int32_t tag;
};

// ---- one-sided communication ----

struct WinCreateEvent {
  std::uint64_t comm;
  std::uint64_t win;
  std::uint64_t base;       // this member's memory (0: dynamic, or none)
  std::uint64_t bytes;
  std::uint64_t pc;         // the application's return address
  std::uint32_t disp_unit;
  std::uint32_t reserved;
};

// MPI_Win_attach / MPI_Win_detach of a dynamic window.
struct WinAttachEvent {
  std::uint64_t win;
  std::uint64_t base;
  std::uint64_t bytes;  // attach only
  std::uint64_t pc;
};

// Fence, free, complete, wait/test, lock/unlock, lock_all/unlock_all.
struct WinEvent {
  std::uint64_t win;
  std::int32_t rank;  // lock/unlock: the target's rank in the window's group
  std::int32_t arg;   // lock: kLockExclusive/kLockShared (| kLockNoCheck | kLockLeased);
                      // unlock: 0 or kLockLeased (| kLockLeaseEnded);
                      // lock_all: 0 or kLockNoCheck; test: the flag
  std::uint64_t pc;   // the application's return address (where accesses complete)
};
inline constexpr std::int32_t kLockExclusive = 1;
inline constexpr std::int32_t kLockShared = 2;
// The lock call's assert had MPI_MODE_NOCHECK: MPI acquires no lock, so the
// call takes no place in the lock's order (docs/clock-rules.md).
inline constexpr std::int32_t kLockNoCheck = 4;
inline constexpr std::int32_t kLockTypeMask = 3;
// The application took the lock, or released it, under its lease, without
// asking its tool (vcx/channel/lease_table.h).
inline constexpr std::int32_t kLockLeased = 8;
// With kLockLeased on an unlock: the tool had recalled the lease, which
// ends with this unlock.
inline constexpr std::int32_t kLockLeaseEnded = 16;

// Post and start: `count` world ranks (the group) follow.
struct WinGroupEvent {
  std::uint64_t win;
  std::uint32_t count;
  std::uint32_t reserved;
};

enum class RmaKind : std::uint8_t {
  Put = 0, Get = 1, Accumulate = 2, GetAccumulate = 3, FetchAndOp = 4, CompareAndSwap = 5,
};

// RmaAccessEvent::flags.
inline constexpr std::uint8_t kRmaNoOp = 1;             // op is MPI_NO_OP: the target is only read
inline constexpr std::uint8_t kRmaTargetDense = 2;      // the target datatype has no gaps
inline constexpr std::uint8_t kRmaOriginDense = 4;      // nor the origin datatype
inline constexpr std::uint8_t kRmaResultDense = 8;      // nor the result datatype

// One data access of one-sided communication: not clocked; the race
// analysis sees it (translated into notes, vcx/analysis.h).
struct RmaAccessEvent {
  std::uint64_t win;
  std::uint64_t origin_addr;   // the origin buffer (read), 0 where MPI ignores it
  std::uint64_t origin_bytes;  // its span (count × extent)
  std::uint64_t result_addr;   // the result buffer (written by gets and fetching atomics)
  std::uint64_t result_bytes;  // its span
  std::int64_t target_disp;    // in the target's displacement units
  std::uint64_t target_bytes;  // count × target type size
  std::uint64_t request;       // request-based forms; 0 otherwise
  std::uint64_t pc;            // the application's return address
  std::int32_t target_rank;    // in the window's group; the translator maps it
  std::uint32_t target_extent; // the target datatype's extent
  std::uint32_t op;            // accumulate family: the MPI_Op's handle bits
  std::uint32_t basic_type;    // accumulate family: the predefined datatype the target type is made of
  RmaKind kind;
  std::uint8_t flags;          // kRma*
  std::uint16_t basic_size;    // accumulate family: bytes of one element of basic_type
  // Without kRmaTargetDense: how many RmaBlocks follow, the bytes the target
  // datatype touches from the target address (0: not described).
  std::uint32_t target_blocks;
};

struct RmaBlock {
  std::int64_t offset;  // bytes from the target address
  std::uint64_t bytes;
};

struct CommFreeEvent {  // MPI_Comm_free, MPI_Comm_disconnect
  std::uint64_t comm;
};

// ---- user annotations (annotations/include/vcx/annotate.h) ----

// One annotation, reported by the interceptor's MPI_Pcontrol. The
// Annotate_* calls are vcx's, not MPI's: the translator names them
// vcx_annotate_* (kAnnotationNames).
struct AnnotateEvent {
  std::uint64_t comm;
  std::int64_t id;    // process annotations: the tag; resource ones: the resource
  std::int32_t rank;  // communicator rank (target, origin or deposition)
  std::int32_t reserved;
};

static_assert(sizeof(InitEvent) == 32);
static_assert(sizeof(SendEvent) == 40);
static_assert(sizeof(RecvEvent) == 40);
static_assert(sizeof(IrecvEvent) == 32);
static_assert(sizeof(Completion) == 32);
static_assert(sizeof(CompletionEvent) == 8);
static_assert(sizeof(SendrecvEvent) == 56);
static_assert(sizeof(IsendrecvEvent) == 48);
static_assert(sizeof(CollectiveEvent) == 24);
static_assert(sizeof(StartEvent) == 16);
static_assert(sizeof(RequestEvent) == 8);
static_assert(sizeof(MprobeEvent) == 40);
static_assert(sizeof(MrecvEvent) == 32);
static_assert(sizeof(AbortEvent) == 16);
static_assert(sizeof(CommCreateEvent) == 48);
static_assert(sizeof(CommFreeEvent) == 8);
static_assert(sizeof(AnnotateEvent) == 24);
static_assert(sizeof(WinCreateEvent) == 48);
static_assert(sizeof(WinAttachEvent) == 32);
static_assert(sizeof(WinEvent) == 24);
static_assert(sizeof(WinGroupEvent) == 16);
static_assert(sizeof(RmaAccessEvent) == 96);
static_assert(sizeof(RmaBlock) == 16);
static_assert(std::is_trivially_copyable_v<CommCreateEvent>);

}  // namespace vcx::mpi
