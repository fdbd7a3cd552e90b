// Communicator constructors and MPI_Comm_free: the tool needs each new
// communicator's members as world ranks to translate ranks and build trees.
#include <cstring>
#include <vector>

#include "runtime.h"

using namespace vcx::mpi_intercept;
using vcx::mpi::Call;

namespace {

void report_new_comm(Call call, MPI_Comm parent, MPI_Comm newcomm, bool same_group) {
  Runtime& rt = runtime();
  if (!rt.active()) return;
  int n = 0;
  std::vector<int> world;
  if (newcomm != MPI_COMM_NULL && !same_group) {
    MPI_Group g;
    PMPI_Comm_group(newcomm, &g);
    PMPI_Group_size(g, &n);
    std::vector<int> local(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) local[static_cast<std::size_t>(i)] = i;
    world.resize(static_cast<std::size_t>(n));
    PMPI_Group_translate_ranks(g, n, local.data(), rt.world_group(), world.data());
    PMPI_Group_free(&g);
  }
  const std::size_t bytes = sizeof(vcx::mpi::CommCreateEvent) + world.size() * sizeof(std::int32_t);
  auto* p = static_cast<std::uint8_t*>(rt.begin(call, bytes, false));
  if (!p) return;
  vcx::mpi::CommCreateEvent ev{};
  ev.parent = comm_handle(parent);
  ev.newcomm = comm_handle(newcomm);
  ev.is_null = newcomm == MPI_COMM_NULL;
  ev.same_group = same_group;
  ev.nranks = static_cast<std::uint32_t>(world.size());
  std::memcpy(p, &ev, sizeof ev);
  if (!world.empty()) std::memcpy(p + sizeof ev, world.data(), world.size() * sizeof(std::int32_t));
  rt.commit();
}

}  // namespace

extern "C" {

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  const int rc = PMPI_Comm_dup(comm, newcomm);
  if (rc == MPI_SUCCESS) report_new_comm(Call::Comm_dup, comm, *newcomm, true);
  return rc;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  const int rc = PMPI_Comm_split(comm, color, key, newcomm);
  if (rc == MPI_SUCCESS) report_new_comm(Call::Comm_split, comm, *newcomm, false);
  return rc;
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  const int rc = PMPI_Comm_create(comm, group, newcomm);
  if (rc == MPI_SUCCESS) report_new_comm(Call::Comm_create, comm, *newcomm, false);
  return rc;
}

int MPI_Comm_free(MPI_Comm* comm) {
  const MPI_Comm old = *comm;
  const int rc = PMPI_Comm_free(comm);
  Runtime& rt = runtime();
  if (rc == MPI_SUCCESS && rt.active()) rt.push(Call::Comm_free, vcx::mpi::CommFreeEvent{comm_handle(old)}, false);
  return rc;
}

}  // extern "C"
