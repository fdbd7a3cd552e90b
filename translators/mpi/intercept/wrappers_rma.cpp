// One-sided communication: window constructors, fence, post/start/complete/
// wait, locks, and the data calls (recorded, not clocked).
//
// Locks are the one place the application waits for its tool even in
// no-stall mode: MPI may take a lock lazily, after MPI_Win_lock returned, so
// the order in which MPI grants a lock cannot be seen from outside; the tool
// decides it instead, and MPI_Win_lock calls MPI only once the tool granted
// the lock. MPI_Win_unlock hands the lock back after MPI's unlock returned.
// A lock nobody else asked for stays with this process as a lease: taking it
// again asks nobody (vcx/channel/lease_table.h).
#include <cstring>
#include <vector>

#include "runtime.h"
#include "vcx/channel/lease_table.h"

using namespace vcx::mpi_intercept;
using vcx::mpi::Call;
using vcx::mpi::RmaKind;

namespace {

void report_window(Call call, MPI_Comm comm, MPI_Win win) {
  Runtime& rt = runtime();
  if (rt.active()) rt.push(call, vcx::mpi::WinCreateEvent{comm_handle(comm), window_handle(win)}, false);
}

// What a lease allows, as the tool publishes it: 1 for a shared lock.
std::uint32_t lease_kind(int lock_type) { return lock_type == MPI_LOCK_SHARED ? 1 : 0; }

std::uint64_t push_win(Call call, MPI_Win win, int rank, int arg, bool waits) {
  vcx::mpi::WinEvent ev{};
  ev.win = window_handle(win);
  ev.rank = rank;
  ev.arg = arg;
  return runtime().push(call, ev, waits);
}

// Post and start carry their group as world ranks.
std::uint64_t push_win_group(Call call, MPI_Win win, MPI_Group group, bool waits) {
  Runtime& rt = runtime();
  int n = 0;
  PMPI_Group_size(group, &n);
  thread_local std::vector<int> local, world;
  local.resize(static_cast<std::size_t>(n));
  world.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) local[static_cast<std::size_t>(i)] = i;
  if (n > 0) PMPI_Group_translate_ranks(group, n, local.data(), rt.world_group(), world.data());
  const std::size_t bytes = sizeof(vcx::mpi::WinGroupEvent) + static_cast<std::size_t>(n) * 4;
  auto* p = static_cast<std::uint8_t*>(rt.begin(call, bytes, waits && n > 0));
  if (!p) return 0;
  const vcx::mpi::WinGroupEvent head{window_handle(win), static_cast<std::uint32_t>(n), 0};
  std::memcpy(p, &head, sizeof head);
  if (n > 0) std::memcpy(p + sizeof head, world.data(), static_cast<std::size_t>(n) * 4);
  return rt.commit();
}

std::uint64_t type_bytes(MPI_Count count, MPI_Datatype type) {
  int size = 0;
  PMPI_Type_size(type, &size);
  return static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(size);
}

std::uint64_t type_span(MPI_Count count, MPI_Datatype type) {
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(type, &lb, &extent);
  return static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(extent);
}

// One data access, recorded for the race analysis (never waited for).
void record(Call call, RmaKind kind, const void* origin, MPI_Count origin_count,
            MPI_Datatype origin_type, int target_rank, MPI_Aint target_disp,
            MPI_Count target_count, MPI_Datatype target_type, MPI_Win win,
            const MPI_Request* request = nullptr) {
  Runtime& rt = runtime();
  if (!rt.active()) return;
  vcx::mpi::RmaAccessEvent ev{};
  ev.win = window_handle(win);
  ev.origin_addr = reinterpret_cast<std::uint64_t>(origin);
  ev.origin_bytes = origin_type == MPI_DATATYPE_NULL ? 0 : type_span(origin_count, origin_type);
  ev.target_disp = target_disp;
  ev.target_bytes = type_bytes(target_count, target_type);
  ev.request = request ? rt.new_request_id(*request) : 0;
  ev.target_rank = target_rank;
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(target_type, &lb, &extent);
  ev.target_extent = static_cast<std::uint32_t>(extent);
  ev.kind = kind;
  rt.push(call, ev, false);
}

}  // namespace

extern "C" {

// ---- windows ----

int MPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                   MPI_Win* win) {
  const int rc = PMPI_Win_create(base, size, disp_unit, info, comm, win);
  if (rc == MPI_SUCCESS) report_window(Call::Win_create, comm, *win);
  return rc;
}
#if MPI_VERSION >= 4
int MPI_Win_create_c(void* base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                     MPI_Win* win) {
  const int rc = PMPI_Win_create_c(base, size, disp_unit, info, comm, win);
  if (rc == MPI_SUCCESS) report_window(Call::Win_create_c, comm, *win);
  return rc;
}
#endif  // MPI_VERSION >= 4
int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                     MPI_Win* win) {
  const int rc = PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win);
  if (rc == MPI_SUCCESS) report_window(Call::Win_allocate, comm, *win);
  return rc;
}
#if MPI_VERSION >= 4
int MPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                       void* baseptr, MPI_Win* win) {
  const int rc = PMPI_Win_allocate_c(size, disp_unit, info, comm, baseptr, win);
  if (rc == MPI_SUCCESS) report_window(Call::Win_allocate_c, comm, *win);
  return rc;
}
#endif  // MPI_VERSION >= 4
int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                            void* baseptr, MPI_Win* win) {
  const int rc = PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win);
  if (rc == MPI_SUCCESS) report_window(Call::Win_allocate_shared, comm, *win);
  return rc;
}
#if MPI_VERSION >= 4
int MPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                              void* baseptr, MPI_Win* win) {
  const int rc = PMPI_Win_allocate_shared_c(size, disp_unit, info, comm, baseptr, win);
  if (rc == MPI_SUCCESS) report_window(Call::Win_allocate_shared_c, comm, *win);
  return rc;
}
#endif  // MPI_VERSION >= 4
int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  const int rc = PMPI_Win_create_dynamic(info, comm, win);
  if (rc == MPI_SUCCESS) report_window(Call::Win_create_dynamic, comm, *win);
  return rc;
}

int MPI_Win_free(MPI_Win* win) {
  Runtime& rt = runtime();
  // A later window may get the same handle: its locks are not these.
  if (vcx::channel::LeaseTable* leases = rt.leases())
    vcx::channel::lease_drop(*leases, window_handle(*win));
  const std::uint64_t ticket = rt.active() ? push_win(Call::Win_free, *win, 0, 0, true) : 0;
  const int rc = PMPI_Win_free(win);
  rt.wait(ticket);
  return rc;
}

// ---- active target ----

int MPI_Win_fence(int assert, MPI_Win win) {
  Runtime& rt = runtime();
  const std::uint64_t ticket = rt.active() ? push_win(Call::Win_fence, win, 0, assert, true) : 0;
  const int rc = PMPI_Win_fence(assert, win);
  rt.wait(ticket);
  return rc;
}

int MPI_Win_post(MPI_Group group, int assert, MPI_Win win) {
  if (runtime().active()) push_win_group(Call::Win_post, win, group, false);
  return PMPI_Win_post(group, assert, win);
}

int MPI_Win_start(MPI_Group group, int assert, MPI_Win win) {
  Runtime& rt = runtime();
  const std::uint64_t ticket = rt.active() ? push_win_group(Call::Win_start, win, group, true) : 0;
  const int rc = PMPI_Win_start(group, assert, win);
  rt.wait(ticket);
  return rc;
}

int MPI_Win_complete(MPI_Win win) {
  if (runtime().active()) push_win(Call::Win_complete, win, 0, 0, false);
  return PMPI_Win_complete(win);
}

int MPI_Win_wait(MPI_Win win) {
  Runtime& rt = runtime();
  if (!rt.active()) return PMPI_Win_wait(win);
  const int rc = rt.yields()
                     ? test_yielding([&](int* flag) { return PMPI_Win_test(win, flag); })
                     : PMPI_Win_wait(win);
  if (rc == MPI_SUCCESS) rt.wait(push_win(Call::Win_wait, win, 0, 1, true));
  return rc;
}

int MPI_Win_test(MPI_Win win, int* flag) {
  Runtime& rt = runtime();
  if (!rt.active()) return PMPI_Win_test(win, flag);
  const int rc = PMPI_Win_test(win, flag);
  if (rc == MPI_SUCCESS && *flag) rt.wait(push_win(Call::Win_test, win, 0, 1, true));
  return rc;
}

// ---- passive target ----

// MPI_PROC_NULL is a valid lock target that locks nothing: no event, not clocked.
//
// With MPI_MODE_NOCHECK MPI acquires no lock (the program asserts that no
// conflicting lock is held or requested meanwhile; OpenCoarrays' event wait
// relies on MPICH not enforcing that): there is no order to impose, and
// waiting for a grant would make other ranks' real locks wait behind a
// holding MPI does not have. The call is only reported.
int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win) {
  Runtime& rt = runtime();
  if (rt.active() && rank != MPI_PROC_NULL) {
    vcx::mpi::WinEvent ev{};
    ev.win = window_handle(win);
    ev.rank = rank;
    ev.arg = lock_type == MPI_LOCK_SHARED ? vcx::mpi::kLockShared : vcx::mpi::kLockExclusive;
    vcx::channel::LeaseTable* leases = rt.leases();
    if (assert & MPI_MODE_NOCHECK) {
      ev.arg |= vcx::mpi::kLockNoCheck;
      rt.push(Call::Win_lock, ev, false);
    } else if (leases && vcx::channel::lease_acquire(*leases, ev.win,
                                                     static_cast<std::uint32_t>(rank),
                                                     lease_kind(lock_type)) >= 0) {
      ev.arg |= vcx::mpi::kLockLeased;
      rt.wait(rt.push(Call::Win_lock, ev, true));
    } else if (void* p = rt.begin_always_answered(Call::Win_lock, sizeof ev)) {
      std::memcpy(p, &ev, sizeof ev);
      rt.wait_always(rt.commit());
    }
  }
  return PMPI_Win_lock(lock_type, rank, assert, win);
}

int MPI_Win_unlock(int rank, MPI_Win win) {
  const int rc = PMPI_Win_unlock(rank, win);
  Runtime& rt = runtime();
  if (rc != MPI_SUCCESS || rank == MPI_PROC_NULL || !rt.active()) return rc;
  int arg = 0;
  // Released under a lease: it goes on, unless the tool recalled it.
  vcx::channel::LeaseTable* leases = rt.leases();
  if (const int slot = leases ? vcx::channel::lease_held(*leases, window_handle(win),
                                                         static_cast<std::uint32_t>(rank))
                              : -1;
      slot >= 0) {
    arg = vcx::mpi::kLockLeased;
    if (!vcx::channel::lease_release(*leases, slot)) arg |= vcx::mpi::kLockLeaseEnded;
  }
  push_win(Call::Win_unlock, win, rank, arg, false);
  return rc;
}

int MPI_Win_lock_all(int assert, MPI_Win win) {
  Runtime& rt = runtime();
  if (rt.active()) {
    vcx::mpi::WinEvent ev{};
    ev.win = window_handle(win);
    if (assert & MPI_MODE_NOCHECK) {
      ev.arg = vcx::mpi::kLockNoCheck;
      rt.push(Call::Win_lock_all, ev, false);
    } else if (void* p = rt.begin_always_answered(Call::Win_lock_all, sizeof ev)) {
      std::memcpy(p, &ev, sizeof ev);
      rt.wait_always(rt.commit());
    }
  }
  return PMPI_Win_lock_all(assert, win);
}

int MPI_Win_unlock_all(MPI_Win win) {
  const int rc = PMPI_Win_unlock_all(win);
  if (rc == MPI_SUCCESS && runtime().active()) push_win(Call::Win_unlock_all, win, 0, 0, false);
  return rc;
}

// ---- data calls ----

int MPI_Put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
            int target_rank, MPI_Aint target_disp, int target_count,
            MPI_Datatype target_datatype, MPI_Win win) {
  record(Call::Put, RmaKind::Put, origin_addr, origin_count, origin_datatype, target_rank,
         target_disp, target_count, target_datatype, win);
  return PMPI_Put(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                  target_count, target_datatype, win);
}
#if MPI_VERSION >= 4
int MPI_Put_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, MPI_Count target_count,
              MPI_Datatype target_datatype, MPI_Win win) {
  record(Call::Put_c, RmaKind::Put, origin_addr, origin_count, origin_datatype, target_rank,
         target_disp, target_count, target_datatype, win);
  return PMPI_Put_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                    target_count, target_datatype, win);
}
#endif  // MPI_VERSION >= 4
int MPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  record(Call::Get, RmaKind::Get, origin_addr, origin_count, origin_datatype, target_rank,
         target_disp, target_count, target_datatype, win);
  return PMPI_Get(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                  target_count, target_datatype, win);
}
#if MPI_VERSION >= 4
int MPI_Get_c(void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, MPI_Count target_count,
              MPI_Datatype target_datatype, MPI_Win win) {
  record(Call::Get_c, RmaKind::Get, origin_addr, origin_count, origin_datatype, target_rank,
         target_disp, target_count, target_datatype, win);
  return PMPI_Get_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                    target_count, target_datatype, win);
}
#endif  // MPI_VERSION >= 4
int MPI_Accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  record(Call::Accumulate, RmaKind::Accumulate, origin_addr, origin_count, origin_datatype,
         target_rank, target_disp, target_count, target_datatype, win);
  return PMPI_Accumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                         target_count, target_datatype, op, win);
}
#if MPI_VERSION >= 4
int MPI_Accumulate_c(const void* origin_addr, MPI_Count origin_count,
                     MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                     MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                     MPI_Win win) {
  record(Call::Accumulate_c, RmaKind::Accumulate, origin_addr, origin_count, origin_datatype,
         target_rank, target_disp, target_count, target_datatype, win);
  return PMPI_Accumulate_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                           target_count, target_datatype, op, win);
}
#endif  // MPI_VERSION >= 4
int MPI_Get_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                       void* result_addr, int result_count, MPI_Datatype result_datatype,
                       int target_rank, MPI_Aint target_disp, int target_count,
                       MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  record(Call::Get_accumulate, RmaKind::GetAccumulate, origin_addr, origin_count,
         origin_datatype, target_rank, target_disp, target_count, target_datatype, win);
  return PMPI_Get_accumulate(origin_addr, origin_count, origin_datatype, result_addr,
                             result_count, result_datatype, target_rank, target_disp,
                             target_count, target_datatype, op, win);
}
#if MPI_VERSION >= 4
int MPI_Get_accumulate_c(const void* origin_addr, MPI_Count origin_count,
                         MPI_Datatype origin_datatype, void* result_addr, MPI_Count result_count,
                         MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                         MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                         MPI_Win win) {
  record(Call::Get_accumulate_c, RmaKind::GetAccumulate, origin_addr, origin_count,
         origin_datatype, target_rank, target_disp, target_count, target_datatype, win);
  return PMPI_Get_accumulate_c(origin_addr, origin_count, origin_datatype, result_addr,
                               result_count, result_datatype, target_rank, target_disp,
                               target_count, target_datatype, op, win);
}
#endif  // MPI_VERSION >= 4
int MPI_Fetch_and_op(const void* origin_addr, void* result_addr, MPI_Datatype datatype,
                     int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  record(Call::Fetch_and_op, RmaKind::FetchAndOp, origin_addr, 1, datatype, target_rank,
         target_disp, 1, datatype, win);
  return PMPI_Fetch_and_op(origin_addr, result_addr, datatype, target_rank, target_disp, op, win);
}
int MPI_Compare_and_swap(const void* origin_addr, const void* compare_addr, void* result_addr,
                         MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                         MPI_Win win) {
  record(Call::Compare_and_swap, RmaKind::CompareAndSwap, origin_addr, 1, datatype, target_rank,
         target_disp, 1, datatype, win);
  return PMPI_Compare_and_swap(origin_addr, compare_addr, result_addr, datatype, target_rank,
                               target_disp, win);
}

// Request-based forms: recorded once the request exists.
int MPI_Rput(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count,
             MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  const int rc = PMPI_Rput(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                           target_count, target_datatype, win, request);
  if (rc == MPI_SUCCESS)
    record(Call::Rput, RmaKind::Put, origin_addr, origin_count, origin_datatype, target_rank,
           target_disp, target_count, target_datatype, win, request);
  return rc;
}
#if MPI_VERSION >= 4
int MPI_Rput_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  const int rc = PMPI_Rput_c(origin_addr, origin_count, origin_datatype, target_rank,
                             target_disp, target_count, target_datatype, win, request);
  if (rc == MPI_SUCCESS)
    record(Call::Rput_c, RmaKind::Put, origin_addr, origin_count, origin_datatype, target_rank,
           target_disp, target_count, target_datatype, win, request);
  return rc;
}
#endif  // MPI_VERSION >= 4
int MPI_Rget(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
             MPI_Request* request) {
  const int rc = PMPI_Rget(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                           target_count, target_datatype, win, request);
  if (rc == MPI_SUCCESS)
    record(Call::Rget, RmaKind::Get, origin_addr, origin_count, origin_datatype, target_rank,
           target_disp, target_count, target_datatype, win, request);
  return rc;
}
#if MPI_VERSION >= 4
int MPI_Rget_c(void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  const int rc = PMPI_Rget_c(origin_addr, origin_count, origin_datatype, target_rank,
                             target_disp, target_count, target_datatype, win, request);
  if (rc == MPI_SUCCESS)
    record(Call::Rget_c, RmaKind::Get, origin_addr, origin_count, origin_datatype, target_rank,
           target_disp, target_count, target_datatype, win, request);
  return rc;
}
#endif  // MPI_VERSION >= 4
int MPI_Raccumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request) {
  const int rc = PMPI_Raccumulate(origin_addr, origin_count, origin_datatype, target_rank,
                                  target_disp, target_count, target_datatype, op, win, request);
  if (rc == MPI_SUCCESS)
    record(Call::Raccumulate, RmaKind::Accumulate, origin_addr, origin_count, origin_datatype,
           target_rank, target_disp, target_count, target_datatype, win, request);
  return rc;
}
#if MPI_VERSION >= 4
int MPI_Raccumulate_c(const void* origin_addr, MPI_Count origin_count,
                      MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                      MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                      MPI_Win win, MPI_Request* request) {
  const int rc = PMPI_Raccumulate_c(origin_addr, origin_count, origin_datatype, target_rank,
                                    target_disp, target_count, target_datatype, op, win, request);
  if (rc == MPI_SUCCESS)
    record(Call::Raccumulate_c, RmaKind::Accumulate, origin_addr, origin_count, origin_datatype,
           target_rank, target_disp, target_count, target_datatype, win, request);
  return rc;
}
#endif  // MPI_VERSION >= 4
int MPI_Rget_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        void* result_addr, int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                        MPI_Request* request) {
  const int rc = PMPI_Rget_accumulate(origin_addr, origin_count, origin_datatype, result_addr,
                                      result_count, result_datatype, target_rank, target_disp,
                                      target_count, target_datatype, op, win, request);
  if (rc == MPI_SUCCESS)
    record(Call::Rget_accumulate, RmaKind::GetAccumulate, origin_addr, origin_count,
           origin_datatype, target_rank, target_disp, target_count, target_datatype, win,
           request);
  return rc;
}
#if MPI_VERSION >= 4
int MPI_Rget_accumulate_c(const void* origin_addr, MPI_Count origin_count,
                          MPI_Datatype origin_datatype, void* result_addr, MPI_Count result_count,
                          MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                          MPI_Win win, MPI_Request* request) {
  const int rc = PMPI_Rget_accumulate_c(origin_addr, origin_count, origin_datatype, result_addr,
                                        result_count, result_datatype, target_rank, target_disp,
                                        target_count, target_datatype, op, win, request);
  if (rc == MPI_SUCCESS)
    record(Call::Rget_accumulate_c, RmaKind::GetAccumulate, origin_addr, origin_count,
           origin_datatype, target_rank, target_disp, target_count, target_datatype, win,
           request);
  return rc;
}
#endif  // MPI_VERSION >= 4

}  // extern "C"
