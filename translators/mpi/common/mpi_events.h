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

// X(name) for every intercepted MPI call; the event type is its index.
#define VCX_MPI_CALLS(X) \
  X(Init)                \
  X(Init_thread)         \
  X(Finalize)            \
  X(Send)                \
  X(Bsend)               \
  X(Rsend)               \
  X(Ssend)               \
  X(Isend)               \
  X(Ibsend)              \
  X(Irsend)              \
  X(Issend)              \
  X(Recv)                \
  X(Irecv)               \
  X(Wait)                \
  X(Waitall)             \
  X(Waitany)             \
  X(Waitsome)            \
  X(Test)                \
  X(Testall)             \
  X(Testany)             \
  X(Testsome)            \
  X(Sendrecv)            \
  X(Sendrecv_replace)    \
  X(Barrier)             \
  X(Bcast)               \
  X(Reduce)              \
  X(Allreduce)           \
  X(Comm_dup)            \
  X(Comm_split)          \
  X(Comm_create)         \
  X(Comm_free)

enum class Call : std::uint16_t {
#define VCX_X(name) name,
  VCX_MPI_CALLS(VCX_X)
#undef VCX_X
  Count
};

inline constexpr const char* kCallNames[] = {
#define VCX_X(name) "MPI_" #name,
    VCX_MPI_CALLS(VCX_X)
#undef VCX_X
};
static_assert(sizeof(kCallNames) / sizeof(kCallNames[0]) == static_cast<std::size_t>(Call::Count));

inline constexpr std::int32_t kRankProcNull = -1;
inline constexpr std::int32_t kRankAny = -2;
inline constexpr std::int32_t kTagAny = -1;

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
};

// A blocking receive: posted and completed in one call.
struct RecvEvent {
  std::uint64_t comm;
  std::int32_t source;
  std::int32_t tag;
  std::int32_t status_source;
  std::int32_t status_tag;
};

struct IrecvEvent {
  std::uint64_t comm;
  std::uint64_t request;
  std::int32_t source;
  std::int32_t tag;
};

// One request completed by a Wait/Test family call (its handle as it was
// before the call; the status as MPI filled it).
struct Completion {
  std::uint64_t request;
  std::int32_t source;
  std::int32_t tag;
  std::int32_t cancelled;
  std::int32_t reserved;
};

// Wait/Test family: `count` Completion records follow.
struct CompletionEvent {
  std::uint32_t count;
  std::uint32_t reserved;
};

struct SendrecvEvent {
  std::uint64_t comm;
  std::int32_t dest;
  std::int32_t send_tag;
  std::int32_t source;
  std::int32_t recv_tag;
  std::int32_t status_source;
  std::int32_t status_tag;
};

struct CollectiveEvent {
  std::uint64_t comm;
  std::int32_t root;  // communicator rank; ignored where the call has none
  std::int32_t reserved;
};

// A communicator constructor returned. `nranks` world ranks follow, in the
// new communicator's rank order, unless `same_group` says the group is the
// parent's (dup) or `is_null` says this process got MPI_COMM_NULL.
struct CommCreateEvent {
  std::uint64_t parent;
  std::uint64_t newcomm;
  std::uint32_t is_null;
  std::uint32_t same_group;
  std::uint32_t nranks;
  std::uint32_t reserved;
};

struct CommFreeEvent {
  std::uint64_t comm;
};

static_assert(sizeof(InitEvent) == 32);
static_assert(sizeof(SendEvent) == 32);
static_assert(sizeof(RecvEvent) == 24);
static_assert(sizeof(IrecvEvent) == 24);
static_assert(sizeof(Completion) == 24);
static_assert(sizeof(CompletionEvent) == 8);
static_assert(sizeof(SendrecvEvent) == 32);
static_assert(sizeof(CollectiveEvent) == 16);
static_assert(sizeof(CommCreateEvent) == 32);
static_assert(sizeof(CommFreeEvent) == 8);
static_assert(std::is_trivially_copyable_v<CommCreateEvent>);

}  // namespace vcx::mpi
