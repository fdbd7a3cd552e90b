// Collectives. The event goes out before the MPI call so the tools exchange
// clocks while MPI does its part; the application then waits only if its
// role in the call is a wait (everyone in a barrier, the root of a reduce,
// the non-roots of a broadcast).
#include "runtime.h"

using namespace vcx::mpi_intercept;
using vcx::mpi::Call;

namespace {

std::uint64_t push_collective(Call call, MPI_Comm comm, int root, bool waits) {
  Runtime& rt = runtime();
  if (!rt.active()) return 0;
  vcx::mpi::CollectiveEvent ev{};
  ev.comm = comm_handle(comm);
  ev.root = root;
  return rt.push(call, ev, waits);
}

bool is_root(MPI_Comm comm, int root) {
  int me = -1;
  PMPI_Comm_rank(comm, &me);
  return me == root;
}

}  // namespace

extern "C" {

int MPI_Barrier(MPI_Comm comm) {
  const std::uint64_t seq = push_collective(Call::Barrier, comm, 0, true);
  const int rc = PMPI_Barrier(comm);
  runtime().wait(seq);
  return rc;
}

int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  const bool waits = runtime().active() && !is_root(comm, root);
  const std::uint64_t seq = push_collective(Call::Bcast, comm, root, waits);
  const int rc = PMPI_Bcast(buf, count, type, root, comm);
  runtime().wait(seq);
  return rc;
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm) {
  const bool waits = runtime().active() && is_root(comm, root);
  const std::uint64_t seq = push_collective(Call::Reduce, comm, root, waits);
  const int rc = PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
  runtime().wait(seq);
  return rc;
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
  const std::uint64_t seq = push_collective(Call::Allreduce, comm, 0, true);
  const int rc = PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
  runtime().wait(seq);
  return rc;
}

}  // extern "C"
