// How one-sided calls are reported: the shapes of the window constructors
// and data calls generated from wrappers.tsv (gen_wrappers.py), and what
// the hand-written synchronisation wrappers share with them (the memory
// exposed to the program's own loads and stores, vcx/intercept/
// local_accesses.h).
#pragma once

#include "runtime.h"

namespace vcx::mpi_intercept {

// `count` items of `type` at `addr`: an origin or result buffer.
struct RmaBuffer {
  const void* addr = nullptr;
  MPI_Count count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
};

// Where a data call acts: `count` items of `type` at displacement `disp`
// of `rank`'s window memory.
struct RmaTarget {
  int rank = MPI_PROC_NULL;
  MPI_Aint disp = 0;
  MPI_Count count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
};

// One data call as the race analysis sees it.
struct RmaAccess {
  mpi::Call call;
  mpi::RmaKind kind;
  RmaBuffer origin;
  RmaBuffer result;
  RmaTarget target;
  MPI_Op op = MPI_OP_NULL;
  MPI_Win win = MPI_WIN_NULL;
  const MPI_Request* request = nullptr;  // request-based forms
  void* pc = nullptr;                    // the application's return address
};

// Records a data call (never waited for), with the blocks a target datatype
// with gaps touches.
void record_access(const RmaAccess& access);

// A new window, with this member's memory (the race analysis compares
// accesses by their bytes in it).
void report_window(mpi::Call call, MPI_Comm comm, MPI_Win win, const void* base, MPI_Aint bytes,
                   MPI_Aint disp_unit, void* pc);

// Window memory (or memory attached to a dynamic window) this process
// reaches by loads and stores, owned by world rank `owner`; `base`: the
// address displacements count from (0 for a dynamic window: addresses).
void expose_memory(MPI_Win win, const void* lo, std::uint64_t bytes, std::uintptr_t base,
                   int owner);
// MPI_Win_detach of the memory at `base`.
void unexpose_attached(MPI_Win win, const void* base);
// Window synchronisation that completes the buffers of the operations to
// `target` (every target: -1); freeing the window ends its memory too.
void end_exposures(mpi::Call call, MPI_Win win, int target);

// ---- shapes ----
// Each records the call's accesses with the caller's return address: the
// line the race analysis reports.

template <class F>
int rma_access(mpi::Call call, mpi::RmaKind kind, RmaBuffer origin, RmaBuffer result,
               RmaTarget target, MPI_Op op, MPI_Win win, void* pc, F&& pmpi) {
  record_access({call, kind, origin, result, target, op, win, nullptr, pc});
  return pmpi();
}

// Request-based forms record once the request exists.
template <class F>
int rma_request_access(mpi::Call call, mpi::RmaKind kind, RmaBuffer origin, RmaBuffer result,
                       RmaTarget target, MPI_Op op, MPI_Win win, MPI_Request* request, void* pc,
                       F&& pmpi) {
  const int rc = pmpi();
  if (rc == MPI_SUCCESS) record_access({call, kind, origin, result, target, op, win, request, pc});
  return rc;
}

template <class Unit, class F>
int create_window(mpi::Call call, MPI_Comm comm, MPI_Win* win, const void* base, MPI_Aint size,
                  Unit disp_unit, void* pc, F&& pmpi) {
  const int rc = pmpi();
  if (rc == MPI_SUCCESS) report_window(call, comm, *win, base, size, disp_unit, pc);
  return rc;
}

// MPI_Win_allocate(_shared): the memory's address is returned in `baseptr`.
template <class Unit, class F>
int allocate_window(mpi::Call call, MPI_Comm comm, MPI_Win* win, void* baseptr, MPI_Aint size,
                    Unit disp_unit, void* pc, F&& pmpi) {
  const int rc = pmpi();
  if (rc == MPI_SUCCESS)
    report_window(call, comm, *win, *static_cast<void**>(baseptr), size, disp_unit, pc);
  return rc;
}

}  // namespace vcx::mpi_intercept
