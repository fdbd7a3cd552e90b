// The application side of vcx for MPI: attaches to this rank's tool process
// at MPI_Init and pushes one event per intercepted call. Kept small: it
// records and forwards, it never interprets.
#pragma once

#include <mpi.h>
#include <sched.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "../common/mpi_events.h"
#include "clock_sync.h"
#include "vcx/intercept/call_timing.h"
#include "vcx/intercept/channel_client.h"
#include "vcx/intercept/ending.h"
#include "vcx/types.h"

namespace vcx::mpi_intercept {

using intercept::record_ending;

// A handle as events carry it: MPICH's handles are ints, Open MPI's (the
// interceptor of MPI+OpenSHMEM programs) pointers.
template <class Handle>
inline std::uint64_t handle_bits(Handle h) {
  if constexpr (std::is_pointer_v<Handle>)
    return reinterpret_cast<std::uintptr_t>(h);
  else
    return static_cast<std::uint64_t>(h);
}

// What the interceptor remembers about a request: whether its completion
// can make the application wait (the translator knows the rest), and for
// persistent requests whether one is active (completing an inactive
// persistent request completes nothing).
enum class RequestKind : std::uint8_t {
  Other = 0,    // completion needs no answer from the tool
  Waits = 1,    // completion merges something: a receive, a synchronous
                // send's answer, a collective member's wait part
};

// Calls test(&flag) until it reports completion (or an error), yielding the
// core in between: how a blocking MPI call waits where its rank's tool shares
// the core. MPI's own blocking calls busy-poll, and the tool the rank waits
// for would get the core only when the scheduler preempts the rank.
template <class Test>
int test_yielding(Test&& test) {
  int flag = 0;
  for (;;) {
    const int rc = test(&flag);
    if (rc != MPI_SUCCESS || flag) return rc;
    sched_yield();
  }
}

// Starts the non-blocking form of a blocking call (start(&request)) and
// tests it as above: the blocking call where the rank yields its core.
template <class Start>
int start_and_test(Start&& start, MPI_Status* status = MPI_STATUS_IGNORE) {
  MPI_Request r = MPI_REQUEST_NULL;
  const int rc = start(&r);
  if (rc != MPI_SUCCESS) return rc;
  return test_yielding([&](int* flag) { return PMPI_Test(&r, flag, status); });
}

// Message sizes, for traces: read only while events carry times (a module
// wants them), else 0 without asking MPI.
template <class Count>
std::uint64_t message_bytes(Count count, MPI_Datatype type) {
  if (!intercept::trace_clock_on() || count <= 0) return 0;
  MPI_Count size = 0;
  if (PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size <= 0) return 0;
  return static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(size);
}
inline std::uint64_t received_bytes(const MPI_Status* status) {
  if (!intercept::trace_clock_on() || status == MPI_STATUS_IGNORE) return 0;
  MPI_Count n = 0;
  if (PMPI_Get_elements_x(status, MPI_BYTE, &n) != MPI_SUCCESS || n <= 0) return 0;
  return static_cast<std::uint64_t>(n);
}

class Runtime {
 public:
  // After PMPI_Init*: attach to the tool if vcx-run started us.
  void start(int thread_level);
  // Before PMPI_Finalize: drain, say goodbye, detach.
  void stop();
  // In MPI_Finalize, before stop(): the clocks' offsets at the end (traces).
  void measure_clocks_at_end() { clock_sync_.stop(); }
  bool active() const { return client_.active(Model::Mpi); }
  bool stalls() const { return active() && !client_.no_stall(); }
  // Whether blocking calls yield the core while they wait: the tool needs it
  // (it shares this rank's core) to make the progress the call waits for.
  // MPICH 4.0's test calls do not complete persistent collective requests
  // (they spin or fail), nor reliably the generalized requests of MPI-IO's
  // non-blocking calls (MPI_Testall over several of them trips an assertion,
  // over a collective one it never progresses), so while such a request
  // lives every wait blocks in MPI.
  bool yields() const {
    return active() && client_.yield_in_waits() &&
           waits_in_mpi_.load(std::memory_order_relaxed) == 0;
  }
  // Whether blocking collectives run as their non-blocking forms. MPI never
  // matches a blocking collective with a non-blocking one, so every member
  // must choose alike: by the run's mode alone, set at attach and kept if
  // the tool fails later, never by this rank's own state.
  bool collectives_yield() const { return client_.yield_in_waits(); }

  // The channel to the tool (intercept::ChannelClient): begin() reserves an
  // event (nullptr when inactive), commit() publishes it and returns the
  // ticket to wait() on, begin_always_answered()/wait_always() for events
  // the tool answers in either stall mode.
  void* begin(mpi::Call call, std::size_t payload, bool needs_reply) {
    if (force_) note_progress();
    return client_.begin(Model::Mpi, static_cast<std::uint16_t>(call), payload, needs_reply);
  }
  void* begin_always_answered(mpi::Call call, std::size_t payload) {
    return client_.begin_always_answered(Model::Mpi, static_cast<std::uint16_t>(call), payload);
  }
  std::uint64_t commit() { return client_.commit(); }
  // Lock leases (vcx/channel/lease_table.h), or nullptr.
  channel::LeaseTable* leases() const { return client_.leases(); }
  void wait(std::uint64_t ticket) { client_.wait(ticket); }
  // A call that sent its event first and neither waited after its MPI call
  // returns now (call_timing.h).
  void call_returned() {
    if (active()) client_.stamp_return();
  }
  void wait_always(std::uint64_t ticket) { client_.wait_always(ticket); }
  // The rank enters a call that may wait for other ranks (blocked_call.h);
  // `payload`: what its event will say, when it pushes it after the call.
  template <class T>
  void enter_blocked(mpi::Call call, const T& payload, std::uint64_t call_site = 0) {
    static_assert(std::is_trivially_copyable_v<T>);
    client_.enter_blocked(Model::Mpi, static_cast<std::uint16_t>(call), call_site, &payload,
                          sizeof(T));
  }
  void leave_blocked() { client_.leave_blocked(); }
  // The one request a runtime hands out for every non-blocking collective
  // that is complete at once, shared by all of them (MPI_REQUEST_NULL when
  // it has none, or marks it otherwise as MPICH does).
  MPI_Request shared_done_request() const { return shared_done_request_; }

  template <class T>
  std::uint64_t push(mpi::Call call, const T& payload, bool needs_reply) {
    void* p = begin(call, sizeof(T), needs_reply);
    if (!p) return 0;
    *static_cast<T*>(p) = payload;
    return commit();
  }

  // Requests are named in events by id, not by handle: MPI hands a freed
  // handle out again at once, and under MPI_THREAD_MULTIPLE another thread
  // may create a request under it before the thread that completed the old
  // one has reported that; the channel would then see the old request's
  // completion after the new one's creation, under the same name. So under
  // MPI_THREAD_MULTIPLE an id is the handle plus a generation, bumped each
  // time MPI returns the handle for a new request (otherwise it is the
  // handle). MPICH's handles are 32-bit ints, the generation goes above
  // them; Open MPI's are pointers, user-space addresses below 2^48 on
  // x86-64 and AArch64, and the generation's low 16 bits go above them. A creation takes new_request_id() after its MPI call; anything
  // that ends a request (completion, MPI_Request_free) takes request_id()
  // before its MPI call, while the handle is still the caller's.
  // Matched-probe messages (MPI_Message) are named the same way.
  template <class Handle>
  std::uint64_t new_request_id(Handle h) {
    return serialise_ ? next_generation(handle_key(h)) : handle_bits(h);
  }
  template <class Handle>
  std::uint64_t request_id(Handle h) {
    return serialise_ ? this_generation(handle_key(h)) : handle_bits(h);
  }

  // A new request (after new_request_id). Non-persistent requests of kind
  // Other need no entry, unless waits must block in MPI while they live.
  enum class Life : std::uint8_t {
    Normal,
    WaitsInMpi,  // while it lives, waits block in MPI (see yields())
  };
  void remember(MPI_Request r, RequestKind k, bool persistent = false, Life life = Life::Normal);
  // MPI_Start on a persistent request.
  void activate(MPI_Request r);
  // The request with this id completed: its kind, or nullopt when it was an
  // inactive persistent request (nothing completed).
  std::optional<RequestKind> complete(std::uint64_t id);
  // MPI_Request_free of the request with this id.
  void forget(std::uint64_t id);

  // Scratch space for the Wait/Test family (saved handles and statuses when
  // the user passed MPI_STATUSES_IGNORE): per thread, reused, so no
  // allocation per call and no sharing between MPI_THREAD_MULTIPLE threads.
  static std::vector<MPI_Request>& saved_requests();
  static std::vector<MPI_Status>& statuses();

  MPI_Group world_group() const { return world_group_; }
  int world_rank() const { return world_rank_; }

 private:
  // The handle's bits as a request id's lower part (MPICH: 32 bits).
  template <class Handle>
  static std::uint64_t handle_key(Handle h) {
    if constexpr (std::is_pointer_v<Handle>)
      return handle_bits(h);
    else
      return static_cast<std::uint32_t>(h);
  }
  std::uint64_t next_generation(std::uint64_t key);
  std::uint64_t this_generation(std::uint64_t key);

  void lock() { client_.lock(); }
  void unlock() { client_.unlock(); }

  // Shared with the OpenSHMEM interceptor in MPI+OpenSHMEM programs.
  intercept::ChannelClient& client_ = intercept::process_client();
  ClockSync clock_sync_;
  bool serialise_ = false;  // MPI_THREAD_MULTIPLE: several threads push
  bool force_ = false;      // a replay forces matches (forced_matches.h)
  static void note_progress();
  int world_rank_ = -1;
  MPI_Group world_group_ = MPI_GROUP_NULL;

  // Open addressing, linear probing; keys are request handles.
  struct Entry {
    std::uint64_t key;
    RequestKind kind;
    bool persistent;
    bool active;
    bool used;
    bool waits_in_mpi;
  };
  Entry* find(std::uint64_t key);
  void insert(std::uint64_t key, RequestKind k, bool persistent, bool active, bool waits_in_mpi);
  void erase(std::uint64_t key);
  std::vector<Entry> requests_ = std::vector<Entry>(256);
  void find_shared_done_request();
  MPI_Request shared_done_request_ = MPI_REQUEST_NULL;
  std::size_t request_count_ = 0;
  std::atomic<std::uint32_t> waits_in_mpi_{0};  // live Life::WaitsInMpi requests, see yields()
  // Generation of each request handle MPI has returned (MPI_THREAD_MULTIPLE).
  std::unordered_map<std::uint64_t, std::uint32_t> generations_;

};

Runtime& runtime();

// Marks the call this scope is as one the rank may be blocked in, and left
// when the scope ends (blocked_call.h). `call_site`: the application's
// return address where the wrapper has it (0: looked up).
class BlockedScope {
 public:
  template <class Payload>
  BlockedScope(Runtime& rt, mpi::Call call, const Payload& payload, std::uint64_t call_site = 0)
      : rt_(rt) {
    rt_.enter_blocked(call, payload, call_site);
  }
  ~BlockedScope() { rt_.leave_blocked(); }
  BlockedScope(const BlockedScope&) = delete;
  BlockedScope& operator=(const BlockedScope&) = delete;

 private:
  Runtime& rt_;
};

// MPICH's Fortran library: libmpifort upstream, libmpichfort on Debian.
bool is_fortran_library(const char* path);

// The application's return address for a call that entered a wrapper with
// return address `ra`: `ra` itself, unless the call came through MPICH's
// Fortran bindings (libmpichfort), whose caller is then found by unwinding.
// The race analysis names accesses by it.
void* application_pc(void* ra);
#define VCX_CALLER() ::vcx::mpi_intercept::application_pc(__builtin_return_address(0))

inline std::int32_t event_rank(int r) {
  if (r == MPI_PROC_NULL) return mpi::kRankProcNull;
  if (r == MPI_ANY_SOURCE) return mpi::kRankAny;
  return r;
}
inline std::int32_t event_tag(int t) { return t == MPI_ANY_TAG ? mpi::kTagAny : t; }
inline std::uint64_t comm_handle(MPI_Comm c) { return handle_bits(c); }
// The raw handle; events name requests by Runtime::request_id instead.
inline std::uint64_t request_handle(MPI_Request r) { return handle_bits(r); }
inline std::uint64_t window_handle(MPI_Win w) { return handle_bits(w); }

}  // namespace vcx::mpi_intercept
