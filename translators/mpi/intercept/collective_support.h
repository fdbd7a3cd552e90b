// How a collective wrapper reports its call. Blocking collectives push their
// event before the MPI call (the tools exchange clocks while MPI works) and
// wait afterwards if this member's role waits; non-blocking and persistent
// ones push after the call, when the request exists, and the completion
// waits instead.
#pragma once

#include "runtime.h"

namespace vcx::mpi_intercept {

inline std::int32_t root_argument(int root) {
  if (root == MPI_ROOT) return mpi::kRankRoot;
  if (root == MPI_PROC_NULL) return mpi::kRankProcNull;
  return root;
}

// Whether this member's role in the collective has a wait part.
inline bool role_waits(mpi::Call call, MPI_Comm comm, int root) {
  switch (mpi::kCallCollKind[static_cast<std::size_t>(call)]) {
    case mpi::CollKind::OneToAll:
    case mpi::CollKind::AllToOne: {
      int inter = 0;
      PMPI_Comm_test_inter(comm, &inter);
      const bool one_to_all = mpi::kCallCollKind[static_cast<std::size_t>(call)] ==
                              mpi::CollKind::OneToAll;
      if (inter) return one_to_all ? (root != MPI_ROOT && root != MPI_PROC_NULL) : root == MPI_ROOT;
      int me = -1;
      PMPI_Comm_rank(comm, &me);
      return one_to_all ? me != root : me == root;
    }
    case mpi::CollKind::Prefix: {
      int me = 0, n = 1;
      PMPI_Comm_rank(comm, &me);
      PMPI_Comm_size(comm, &n);
      return me > 0 || n == 1;
    }
    default:
      return true;  // all-to-all; neighbourhood (answered at once without in-neighbours)
  }
}

inline mpi::CollectiveEvent collective_event(MPI_Comm comm, int root, std::uint64_t request) {
  mpi::CollectiveEvent ev{};
  ev.comm = comm_handle(comm);
  ev.request = request;
  ev.root = root_argument(root);
  return ev;
}

// `nonblocking(&request)` starts the same collective in its non-blocking
// form: where the rank yields its core while it waits, every rank's vcx runs
// that form (the mode is the same for the whole job), so the members still
// match one another.
template <class G, class F>
int blocking_collective(mpi::Call call, MPI_Comm comm, int root, G&& nonblocking, F&& pmpi) {
  Runtime& rt = runtime();
  // On intercommunicators the blocking call is made all the same: through
  // their non-blocking forms, MPICH 4.0.2 gave integration.intercomm at 4
  // ranks wrong results (an MPI_Bcast that delivered nothing), not yet
  // understood.
  int inter = 0;
  if (rt.collectives_yield()) PMPI_Comm_test_inter(comm, &inter);
  const bool yield = rt.collectives_yield() && !inter;
  if (!rt.active()) return yield ? start_and_test(nonblocking) : pmpi();
  const mpi::CollectiveEvent ev = collective_event(comm, root, 0);
  const std::uint64_t ticket = rt.push(call, ev, role_waits(call, comm, root));
  int rc;
  {
    const BlockedScope blocked(rt, call, ev);
    rc = yield ? start_and_test(nonblocking) : pmpi();
  }
  rt.wait(ticket);
  return rc;
}

// MPICH and Open MPI hand out one predefined, already complete request for
// every non-blocking collective that completes at once (e.g. on a one-member
// communicator), so two such requests pending together share a handle and
// their completions could not be told apart. Each gets a completed
// generalized request of its own instead.
namespace detail {
inline int done_query(void*, MPI_Status* st) {
  PMPI_Status_set_elements(st, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(st, 0);
  st->MPI_SOURCE = MPI_UNDEFINED;
  st->MPI_TAG = MPI_UNDEFINED;
  return MPI_SUCCESS;
}
inline int done_free(void*) { return MPI_SUCCESS; }
inline int done_cancel(void*, int) { return MPI_SUCCESS; }
}  // namespace detail

inline void make_request_unique(MPI_Request* request) {
  if (*request == MPI_REQUEST_NULL) return;
#ifdef MPICH
  // MPICH's handle kind (bits 31..30): 1 is a predefined (builtin) object.
  if ((static_cast<std::uint32_t>(*request) >> 30) != 1u) return;
#else
  // Open MPI's: found at the start (Runtime::find_shared_done_request).
  if (*request != runtime().shared_done_request()) return;
#endif
  MPI_Request own = MPI_REQUEST_NULL;
  if (PMPI_Grequest_start(detail::done_query, detail::done_free, detail::done_cancel, nullptr,
                          &own) != MPI_SUCCESS)
    return;
  PMPI_Grequest_complete(own);
  *request = own;
}

template <class F>
int nonblocking_collective(mpi::Call call, MPI_Comm comm, int root, MPI_Request* request,
                           bool persistent, F&& pmpi) {
  const intercept::CallEntry entered;  // the event is sent after the call
  const int rc = pmpi();
  Runtime& rt = runtime();
  if (rc != MPI_SUCCESS || !rt.active()) return rc;
  if (!persistent) make_request_unique(request);
  rt.push(call, collective_event(comm, root, rt.new_request_id(*request)), false);
  rt.remember(*request, role_waits(call, comm, root) ? RequestKind::Waits : RequestKind::Other,
              persistent, persistent ? Runtime::Life::WaitsInMpi : Runtime::Life::Normal);
  return rc;
}

}  // namespace vcx::mpi_intercept
