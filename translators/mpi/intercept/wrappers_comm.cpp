// Communicator constructors and MPI_Comm_free: the tool needs each new
// communicator's members as world ranks (both groups of an
// intercommunicator), its topology's neighbours, and how its members agree on
// its identity.
#include <cstring>
#include <string>
#include <vector>

#include "runtime.h"

using namespace vcx::mpi_intercept;
using vcx::mpi::Call;
using vcx::mpi::CommContext;

namespace {

std::vector<std::int32_t> world_ranks(MPI_Group g) {
  int n = 0;
  PMPI_Group_size(g, &n);
  std::vector<int> local(static_cast<std::size_t>(n)), world(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) local[static_cast<std::size_t>(i)] = i;
  PMPI_Group_translate_ranks(g, n, local.data(), runtime().world_group(), world.data());
  return std::vector<std::int32_t>(world.begin(), world.end());
}

// Neighbours in the order MPI's neighbourhood collectives use them.
bool neighbours(MPI_Comm c, std::vector<std::int32_t>& in, std::vector<std::int32_t>& out) {
  int kind = MPI_UNDEFINED;
  PMPI_Topo_test(c, &kind);
  if (kind == MPI_CART) {
    int ndims = 0;
    PMPI_Cartdim_get(c, &ndims);
    for (int d = 0; d < ndims; ++d) {
      int src = MPI_PROC_NULL, dst = MPI_PROC_NULL;
      PMPI_Cart_shift(c, d, 1, &src, &dst);
      // For each dimension the -1 neighbour, then the +1 neighbour.
      in.push_back(event_rank(src));
      in.push_back(event_rank(dst));
    }
    out = in;
    return true;
  }
  if (kind == MPI_GRAPH) {
    int me = 0, n = 0;
    PMPI_Comm_rank(c, &me);
    PMPI_Graph_neighbors_count(c, me, &n);
    std::vector<int> nb(static_cast<std::size_t>(n));
    PMPI_Graph_neighbors(c, me, n, nb.data());
    in.assign(nb.begin(), nb.end());
    out = in;
    return true;
  }
  if (kind == MPI_DIST_GRAPH) {
    int indeg = 0, outdeg = 0, weighted = 0;
    PMPI_Dist_graph_neighbors_count(c, &indeg, &outdeg, &weighted);
    std::vector<int> src(static_cast<std::size_t>(indeg)), dst(static_cast<std::size_t>(outdeg));
    std::vector<int> sw(weighted ? static_cast<std::size_t>(indeg) : 0);
    std::vector<int> dw(weighted ? static_cast<std::size_t>(outdeg) : 0);
    PMPI_Dist_graph_neighbors(c, indeg, src.data(), weighted ? sw.data() : MPI_UNWEIGHTED, outdeg,
                              dst.data(), weighted ? dw.data() : MPI_UNWEIGHTED);
    in.assign(src.begin(), src.end());
    out.assign(dst.begin(), dst.end());
    return true;
  }
  return false;
}

void report(Call call, MPI_Comm parent, MPI_Comm newcomm, bool same_group,
            CommContext context = CommContext::Parent, int tag = 0) {
  Runtime& rt = runtime();
  if (!rt.active()) return;
  std::vector<std::int32_t> local, remote, in, out;
  bool topology = false;
  if (newcomm != MPI_COMM_NULL && !same_group) {
    MPI_Group g;
    PMPI_Comm_group(newcomm, &g);
    local = world_ranks(g);
    PMPI_Group_free(&g);
    int inter = 0;
    PMPI_Comm_test_inter(newcomm, &inter);
    if (inter) {
      PMPI_Comm_remote_group(newcomm, &g);
      remote = world_ranks(g);
      PMPI_Group_free(&g);
    } else {
      topology = neighbours(newcomm, in, out);
    }
  }
  const std::size_t n = local.size() + remote.size() + in.size() + out.size();
  auto* p = static_cast<std::uint8_t*>(
      rt.begin(call, sizeof(vcx::mpi::CommCreateEvent) + n * sizeof(std::int32_t), false));
  if (!p) return;
  vcx::mpi::CommCreateEvent ev{};
  ev.parent = comm_handle(parent);
  ev.newcomm = comm_handle(newcomm);
  ev.is_null = newcomm == MPI_COMM_NULL;
  ev.same_group = same_group;
  ev.nlocal = static_cast<std::uint32_t>(local.size());
  ev.nremote = static_cast<std::uint32_t>(remote.size());
  ev.nin = topology ? static_cast<std::int32_t>(in.size()) : -1;
  ev.nout = topology ? static_cast<std::int32_t>(out.size()) : -1;
  ev.context = context;
  ev.tag = tag;
  std::memcpy(p, &ev, sizeof ev);
  std::size_t off = sizeof ev;
  for (const auto* v : {&local, &remote, &in, &out}) {
    if (!v->empty()) std::memcpy(p + off, v->data(), v->size() * sizeof(std::int32_t));
    off += v->size() * sizeof(std::int32_t);
  }
  rt.commit();
}

// A string tag (MPI 4 "from group" constructors) as the integer tag the
// translator keys on.
[[maybe_unused]] int string_tag(const char* s) {
  std::uint64_t h = 0x5354524947ULL;
  for (; s && *s; ++s) h = vcx::hash_combine(h, static_cast<unsigned char>(*s));
  return static_cast<int>(h & 0x7fffffff);
}

}  // namespace

extern "C" {

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  const int rc = PMPI_Comm_dup(comm, newcomm);
  if (rc == MPI_SUCCESS) report(Call::Comm_dup, comm, *newcomm, true);
  return rc;
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  const int rc = PMPI_Comm_dup_with_info(comm, info, newcomm);
  if (rc == MPI_SUCCESS) report(Call::Comm_dup_with_info, comm, *newcomm, true);
  return rc;
}

int MPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  // The handle exists at once; it may be used once the request completes.
  const int rc = PMPI_Comm_idup(comm, newcomm, request);
  if (rc == MPI_SUCCESS) report(Call::Comm_idup, comm, *newcomm, true);
  return rc;
}

#if MPI_VERSION >= 4
int MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm,
                            MPI_Request* request) {
  const int rc = PMPI_Comm_idup_with_info(comm, info, newcomm, request);
  if (rc == MPI_SUCCESS) report(Call::Comm_idup_with_info, comm, *newcomm, true);
  return rc;
}
#endif  // MPI_VERSION >= 4

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  const int rc = PMPI_Comm_split(comm, color, key, newcomm);
  if (rc == MPI_SUCCESS) report(Call::Comm_split, comm, *newcomm, false);
  return rc;
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                        MPI_Comm* newcomm) {
  const int rc = PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
  if (rc == MPI_SUCCESS) report(Call::Comm_split_type, comm, *newcomm, false);
  return rc;
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  const int rc = PMPI_Comm_create(comm, group, newcomm);
  if (rc == MPI_SUCCESS) report(Call::Comm_create, comm, *newcomm, false);
  return rc;
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  const int rc = PMPI_Comm_create_group(comm, group, tag, newcomm);
  if (rc == MPI_SUCCESS)
    report(Call::Comm_create_group, comm, *newcomm, false, CommContext::Group, tag);
  return rc;
}

#if MPI_VERSION >= 4
int MPI_Comm_create_from_group(MPI_Group group, const char* stringtag, MPI_Info info,
                               MPI_Errhandler errhandler, MPI_Comm* newcomm) {
  const int rc = PMPI_Comm_create_from_group(group, stringtag, info, errhandler, newcomm);
  if (rc == MPI_SUCCESS)
    report(Call::Comm_create_from_group, MPI_COMM_WORLD, *newcomm, false, CommContext::Group,
           string_tag(stringtag));
  return rc;
}
#endif  // MPI_VERSION >= 4

int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                         int remote_leader, int tag, MPI_Comm* newintercomm) {
  const int rc =
      PMPI_Intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag, newintercomm);
  if (rc == MPI_SUCCESS)
    report(Call::Intercomm_create, local_comm, *newintercomm, false, CommContext::Intercomm, tag);
  return rc;
}

#if MPI_VERSION >= 4
int MPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader,
                                     MPI_Group remote_group, int remote_leader,
                                     const char* stringtag, MPI_Info info,
                                     MPI_Errhandler errhandler, MPI_Comm* newintercomm) {
  const int rc = PMPI_Intercomm_create_from_groups(local_group, local_leader, remote_group,
                                                   remote_leader, stringtag, info, errhandler,
                                                   newintercomm);
  if (rc == MPI_SUCCESS)
    report(Call::Intercomm_create_from_groups, MPI_COMM_WORLD, *newintercomm, false,
           CommContext::Intercomm, string_tag(stringtag));
  return rc;
}
#endif  // MPI_VERSION >= 4

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  const int rc = PMPI_Intercomm_merge(intercomm, high, newintracomm);
  if (rc == MPI_SUCCESS) report(Call::Intercomm_merge, intercomm, *newintracomm, false);
  return rc;
}

int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                    int reorder, MPI_Comm* comm_cart) {
  const int rc = PMPI_Cart_create(comm_old, ndims, dims, periods, reorder, comm_cart);
  if (rc == MPI_SUCCESS) report(Call::Cart_create, comm_old, *comm_cart, false);
  return rc;
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  const int rc = PMPI_Cart_sub(comm, remain_dims, newcomm);
  if (rc == MPI_SUCCESS) report(Call::Cart_sub, comm, *newcomm, false);
  return rc;
}

int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int indx[], const int edges[],
                     int reorder, MPI_Comm* comm_graph) {
  const int rc = PMPI_Graph_create(comm_old, nnodes, indx, edges, reorder, comm_graph);
  if (rc == MPI_SUCCESS) report(Call::Graph_create, comm_old, *comm_graph, false);
  return rc;
}

int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info,
                          int reorder, MPI_Comm* comm_dist_graph) {
  const int rc = PMPI_Dist_graph_create(comm_old, n, sources, degrees, destinations, weights, info,
                                        reorder, comm_dist_graph);
  if (rc == MPI_SUCCESS) report(Call::Dist_graph_create, comm_old, *comm_dist_graph, false);
  return rc;
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[],
                                   MPI_Info info, int reorder, MPI_Comm* comm_dist_graph) {
  const int rc =
      PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights, outdegree,
                                      destinations, destweights, info, reorder, comm_dist_graph);
  if (rc == MPI_SUCCESS)
    report(Call::Dist_graph_create_adjacent, comm_old, *comm_dist_graph, false);
  return rc;
}

int MPI_Comm_free(MPI_Comm* comm) {
  const MPI_Comm old = *comm;
  const int rc = PMPI_Comm_free(comm);
  Runtime& rt = runtime();
  if (rc == MPI_SUCCESS && rt.active())
    rt.push(Call::Comm_free, vcx::mpi::CommFreeEvent{comm_handle(old)}, false);
  return rc;
}

int MPI_Comm_disconnect(MPI_Comm* comm) {
  const MPI_Comm old = *comm;
  const int rc = PMPI_Comm_disconnect(comm);
  Runtime& rt = runtime();
  if (rc == MPI_SUCCESS && rt.active())
    rt.push(Call::Comm_disconnect, vcx::mpi::CommFreeEvent{comm_handle(old)}, false);
  return rc;
}

}  // extern "C"
