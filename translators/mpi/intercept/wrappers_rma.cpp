// One-sided communication: window synchronisation (fence, post/start/
// complete/wait, locks, flushes), freeing windows and the memory of dynamic
// windows. Window constructors and data calls are generated from
// wrappers.tsv (their shapes: rma_support.h).
//
// Locks are the one place the application waits for its tool in either
// stall mode: MPI may take a lock lazily, after MPI_Win_lock returned, so
// the order in which MPI grants a lock cannot be seen from outside; the tool
// decides it instead, and MPI_Win_lock calls MPI only once the tool granted
// the lock. MPI_Win_unlock hands the lock back after MPI's unlock returned.
// A lock nobody else asked for stays with this process as a lease: taking it
// again asks nobody (vcx/channel/lease_table.h).
#include <cstring>
#include <vector>

#include "rma_support.h"
#include "vcx/channel/lease_table.h"

using namespace vcx::mpi_intercept;
using vcx::mpi::Call;

namespace {

// What a lease allows, as the tool publishes it: 1 for a shared lock.
std::uint32_t lease_kind(int lock_type) { return lock_type == MPI_LOCK_SHARED ? 1 : 0; }

std::uint64_t push_win(Call call, MPI_Win win, int rank, int arg, bool waits, void* pc) {
  vcx::mpi::WinEvent ev{};
  ev.win = window_handle(win);
  ev.rank = rank;
  ev.arg = arg;
  ev.pc = reinterpret_cast<std::uint64_t>(pc);
  const std::uint64_t ticket = runtime().push(call, ev, waits);
  if (vcx::intercept::process_client().local_accesses()) end_exposures(call, win, rank);
  return ticket;
}

// What a synchronisation call the rank may wait in puts in the blocked-call
// slot (blocked_call.h): the window, as its event names it.
vcx::mpi::WinEvent blocked_win(MPI_Win win, void* pc) {
  vcx::mpi::WinEvent ev{};
  ev.win = window_handle(win);
  ev.pc = reinterpret_cast<std::uint64_t>(pc);
  return ev;
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

}  // namespace

extern "C" {

// ---- freeing ----

int MPI_Win_free(MPI_Win* win) {
  Runtime& rt = runtime();
  // A later window may get the same handle: its locks are not these.
  if (vcx::channel::LeaseTable* leases = rt.leases())
    vcx::channel::lease_drop(*leases, window_handle(*win));
  const std::uint64_t ticket = rt.active() ? push_win(Call::Win_free, *win, 0, 0, true,
                                                      VCX_CALLER()) : 0;
  const int rc = PMPI_Win_free(win);
  rt.wait(ticket);
  return rc;
}

// ---- active target ----

int MPI_Win_fence(int assert, MPI_Win win) {
  Runtime& rt = runtime();
  void* const pc = VCX_CALLER();
  const std::uint64_t ticket = rt.active() ? push_win(Call::Win_fence, win, 0, assert, true, pc)
                                           : 0;
  int rc;
  {
    const BlockedScope blocked(rt, Call::Win_fence, blocked_win(win, pc));
    rc = PMPI_Win_fence(assert, win);
  }
  rt.wait(ticket);
  return rc;
}

int MPI_Win_post(MPI_Group group, int assert, MPI_Win win) {
  if (runtime().active()) push_win_group(Call::Win_post, win, group, false);
  const int rc = PMPI_Win_post(group, assert, win);
  runtime().call_returned();
  return rc;
}

int MPI_Win_start(MPI_Group group, int assert, MPI_Win win) {
  Runtime& rt = runtime();
  const std::uint64_t ticket = rt.active() ? push_win_group(Call::Win_start, win, group, true) : 0;
  int rc;
  {
    const BlockedScope blocked(rt, Call::Win_start, blocked_win(win, VCX_CALLER()));
    rc = PMPI_Win_start(group, assert, win);
  }
  rt.wait(ticket);
  return rc;
}

int MPI_Win_complete(MPI_Win win) {
  Runtime& rt = runtime();
  void* const pc = VCX_CALLER();
  if (rt.active()) push_win(Call::Win_complete, win, 0, 0, false, pc);
  int rc;
  {
    const BlockedScope blocked(rt, Call::Win_complete, blocked_win(win, pc));
    rc = PMPI_Win_complete(win);
  }
  runtime().call_returned();
  return rc;
}

int MPI_Win_wait(MPI_Win win) {
  const vcx::intercept::CallEntry entered;  // the event is sent after the call
  Runtime& rt = runtime();
  if (!rt.active()) return PMPI_Win_wait(win);
  void* const pc = VCX_CALLER();
  int rc;
  {
    const BlockedScope blocked(rt, Call::Win_wait, blocked_win(win, pc));
    rc = rt.yields() ? test_yielding([&](int* flag) { return PMPI_Win_test(win, flag); })
                     : PMPI_Win_wait(win);
  }
  if (rc == MPI_SUCCESS) rt.wait(push_win(Call::Win_wait, win, 0, 1, true, pc));
  return rc;
}

int MPI_Win_test(MPI_Win win, int* flag) {
  const vcx::intercept::CallEntry entered;  // the event is sent after the call
  Runtime& rt = runtime();
  if (!rt.active()) return PMPI_Win_test(win, flag);
  const int rc = PMPI_Win_test(win, flag);
  if (rc == MPI_SUCCESS && *flag) rt.wait(push_win(Call::Win_test, win, 0, 1, true,
                                                   VCX_CALLER()));
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
      const std::uint64_t ticket = rt.commit();
      // Until the tool grants it: after the holders released it.
      const BlockedScope blocked(rt, Call::Win_lock, ev,
                                 reinterpret_cast<std::uint64_t>(VCX_CALLER()));
      rt.wait_always(ticket);
    }
  }
  const int rc = PMPI_Win_lock(lock_type, rank, assert, win);
  if (rank != MPI_PROC_NULL) rt.call_returned();  // its event was sent
  return rc;
}

int MPI_Win_unlock(int rank, MPI_Win win) {
  const vcx::intercept::CallEntry entered;  // the event is sent after the call
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
  push_win(Call::Win_unlock, win, rank, arg, false, VCX_CALLER());
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
      const std::uint64_t ticket = rt.commit();
      const BlockedScope blocked(rt, Call::Win_lock_all, ev,
                                 reinterpret_cast<std::uint64_t>(VCX_CALLER()));
      rt.wait_always(ticket);
    }
  }
  const int rc = PMPI_Win_lock_all(assert, win);
  rt.call_returned();
  return rc;
}

int MPI_Win_unlock_all(MPI_Win win) {
  const vcx::intercept::CallEntry entered;  // the event is sent after the call
  const int rc = PMPI_Win_unlock_all(win);
  if (rc == MPI_SUCCESS && runtime().active()) push_win(Call::Win_unlock_all, win, 0, 0, false,
                                                        VCX_CALLER());
  return rc;
}

// ---- completion without synchronisation: flushes; memory of dynamic windows ----

int MPI_Win_flush(int rank, MPI_Win win) {
  const vcx::intercept::CallEntry entered;  // the event is sent after the call
  const int rc = PMPI_Win_flush(rank, win);
  if (rc == MPI_SUCCESS && runtime().active()) push_win(Call::Win_flush, win, rank, 0, false,
                                                        VCX_CALLER());
  return rc;
}
int MPI_Win_flush_all(MPI_Win win) {
  const vcx::intercept::CallEntry entered;  // the event is sent after the call
  const int rc = PMPI_Win_flush_all(win);
  if (rc == MPI_SUCCESS && runtime().active()) push_win(Call::Win_flush_all, win, 0, 0, false,
                                                        VCX_CALLER());
  return rc;
}
int MPI_Win_flush_local(int rank, MPI_Win win) {
  const vcx::intercept::CallEntry entered;  // the event is sent after the call
  const int rc = PMPI_Win_flush_local(rank, win);
  if (rc == MPI_SUCCESS && runtime().active())
    push_win(Call::Win_flush_local, win, rank, 0, false, VCX_CALLER());
  return rc;
}
int MPI_Win_flush_local_all(MPI_Win win) {
  const vcx::intercept::CallEntry entered;  // the event is sent after the call
  const int rc = PMPI_Win_flush_local_all(win);
  if (rc == MPI_SUCCESS && runtime().active())
    push_win(Call::Win_flush_local_all, win, 0, 0, false, VCX_CALLER());
  return rc;
}

int MPI_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
  const int rc = PMPI_Win_attach(win, base, size);
  Runtime& rt = runtime();
  if (rc == MPI_SUCCESS && rt.active()) {
    rt.push(Call::Win_attach,
            vcx::mpi::WinAttachEvent{window_handle(win), reinterpret_cast<std::uint64_t>(base),
                                     static_cast<std::uint64_t>(size),
                                     reinterpret_cast<std::uint64_t>(VCX_CALLER())},
            false);
    // Named by address, like the displacements of the window's accesses.
    expose_memory(win, base, static_cast<std::uint64_t>(size), 0, rt.world_rank());
  }
  return rc;
}
int MPI_Win_detach(MPI_Win win, const void* base) {
  const int rc = PMPI_Win_detach(win, base);
  Runtime& rt = runtime();
  if (rc == MPI_SUCCESS) unexpose_attached(win, base);
  if (rc == MPI_SUCCESS && rt.active())
    rt.push(Call::Win_detach,
            vcx::mpi::WinAttachEvent{window_handle(win), reinterpret_cast<std::uint64_t>(base), 0,
                                     reinterpret_cast<std::uint64_t>(VCX_CALLER())},
            false);
  return rc;
}

}  // extern "C"
