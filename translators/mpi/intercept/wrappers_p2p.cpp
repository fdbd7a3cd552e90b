// The point-to-point calls with logic of their own: starting persistent
// requests (which a replay may force), freeing requests, and matched
// probes. Sends, receives and their non-blocking, persistent and combined
// forms are generated from wrappers.tsv (their shapes: p2p_support.h).
#include <cstring>
#include <vector>

#include "p2p_support.h"

using namespace vcx::mpi_intercept;
using vcx::mpi::Call;

namespace {

void report_probe(Call call, MPI_Comm comm, int asked, int source, int tag, MPI_Message message,
                  const MPI_Status* st, void* pc) {
  forced_matches().posted(asked);
  vcx::mpi::MprobeEvent ev{};
  ev.comm = comm_handle(comm);
  ev.message = runtime().new_request_id(message);
  ev.source = ForcedMatches::event_source(asked, source);
  ev.tag = event_tag(tag);
  ev.status_source = event_rank(st->MPI_SOURCE);
  ev.status_tag = st->MPI_TAG;
  ev.pc = reinterpret_cast<std::uint64_t>(pc);
  runtime().push(call, ev, false);
}

// `sources`: per request, the source a forced start takes
// (mpi::forced_source) or kStartAsPosted; null when no start is forced.
void report_start(int count, const MPI_Request* requests, void* pc,
                  const std::int32_t* sources) {
  Runtime& rt = runtime();
  // The ids first: looking them up takes the lock that begin() holds.
  thread_local std::vector<std::uint64_t> ids;
  ids.resize(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) ids[static_cast<std::size_t>(i)] = rt.request_id(requests[i]);
  const auto n = static_cast<std::size_t>(count);
  const std::size_t bytes = sizeof(vcx::mpi::StartEvent) + n * 8 + (sources ? n * 4 : 0);
  auto* p = static_cast<std::uint8_t*>(
      rt.begin(count == 1 ? Call::Start : Call::Startall, bytes, false));
  if (!p) return;
  const vcx::mpi::StartEvent head{static_cast<std::uint32_t>(count),
                                  sources ? vcx::mpi::kStartForcedSources : 0u,
                                  reinterpret_cast<std::uint64_t>(pc)};
  std::memcpy(p, &head, sizeof head);
  std::memcpy(p + sizeof head, ids.data(), n * 8);
  if (sources) std::memcpy(p + sizeof head + n * 8, sources, n * 4);
  rt.commit();
}

}  // namespace

extern "C" {

// ---- persistent requests ----

// A replay may force a started persistent wildcard receive: a receive from
// the forced source stands in for it (forced_matches.h), and the start
// event says which source it takes.
int MPI_Start(MPI_Request* request) {
  Runtime& rt = runtime();
  if (!rt.active()) return PMPI_Start(request);
  const std::optional<int> forced = forced_matches().starting(*request);
  const std::int32_t sources[1] = {forced ? vcx::mpi::forced_source(*forced)
                                          : vcx::mpi::kStartAsPosted};
  // Before the call: a started send's clock travels with its data.
  report_start(1, request, VCX_CALLER(), forced ? sources : nullptr);
  rt.activate(*request);
  if (!forced) return PMPI_Start(request);
  forced_matches().start_forced(*request, *forced);
  return MPI_SUCCESS;
}

int MPI_Startall(int count, MPI_Request requests[]) {
  Runtime& rt = runtime();
  if (!rt.active() || count <= 0) return PMPI_Startall(count, requests);
  thread_local std::vector<std::int32_t> sources;
  thread_local std::vector<std::optional<int>> forced;
  sources.assign(static_cast<std::size_t>(count), vcx::mpi::kStartAsPosted);
  forced.assign(static_cast<std::size_t>(count), std::nullopt);
  bool any = false;
  for (int i = 0; i < count; ++i) {
    const auto k = static_cast<std::size_t>(i);
    forced[k] = forced_matches().starting(requests[i]);
    if (forced[k]) sources[k] = vcx::mpi::forced_source(*forced[k]);
    any |= forced[k].has_value();
  }
  report_start(count, requests, VCX_CALLER(), any ? sources.data() : nullptr);
  for (int i = 0; i < count; ++i) rt.activate(requests[i]);
  if (!any) return PMPI_Startall(count, requests);
  for (int i = 0; i < count; ++i) {
    const auto k = static_cast<std::size_t>(i);
    if (forced[k]) {
      forced_matches().start_forced(requests[i], *forced[k]);
    } else if (const int rc = PMPI_Start(&requests[i]); rc != MPI_SUCCESS) {
      return rc;
    }
  }
  return MPI_SUCCESS;
}

int MPI_Request_free(MPI_Request* request) {
  Runtime& rt = runtime();
  const MPI_Request saved = *request;
  const std::uint64_t id = rt.active() ? rt.request_id(saved) : 0;
  const int rc = PMPI_Request_free(request);
  if (rc == MPI_SUCCESS) {
    forced_matches().persistent_freed(saved);  // and its stand-in, if one is pending
    forced_matches().request_done(saved);
  }
  if (rc == MPI_SUCCESS && rt.active() && saved != MPI_REQUEST_NULL) {
    rt.push(Call::Request_free, vcx::mpi::RequestEvent{id}, false);
    rt.forget(id);
  }
  return rc;
}

// ---- matched probes ----

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  const vcx::intercept::CallEntry entered;  // the event is sent after the call
  Runtime& rt = runtime();
  if (!rt.active()) return PMPI_Mprobe(source, tag, comm, message, status);
  const int asked = force_source(comm, source);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  void* const pc = VCX_CALLER();
  vcx::mpi::MprobeEvent waits{};
  waits.comm = comm_handle(comm);
  waits.source = ForcedMatches::event_source(asked, source);
  waits.tag = event_tag(tag);
  waits.pc = reinterpret_cast<std::uint64_t>(pc);
  int rc;
  {
    const BlockedScope blocked(rt, Call::Mprobe, waits, waits.pc);
    rc = PMPI_Mprobe(source, tag, comm, message, st);
  }
  if (rc == MPI_SUCCESS) report_probe(Call::Mprobe, comm, asked, source, tag, *message, st, pc);
  return rc;
}

// A probe sends no event (it changes no clock); while it waits, the rank's
// tool knows what for (the deadlock analysis).
int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  Runtime& rt = runtime();
  if (!rt.active()) return PMPI_Probe(source, tag, comm, status);
  vcx::mpi::MprobeEvent waits{};
  waits.comm = comm_handle(comm);
  waits.source = event_rank(source);
  waits.tag = event_tag(tag);
  waits.pc = reinterpret_cast<std::uint64_t>(VCX_CALLER());
  const BlockedScope blocked(rt, Call::Probe, waits, waits.pc);
  if (!rt.yields()) return PMPI_Probe(source, tag, comm, status);
  return test_yielding([&](int* flag) { return PMPI_Iprobe(source, tag, comm, flag, status); });
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                MPI_Status* status) {
  const vcx::intercept::CallEntry entered;  // the event is sent after the call
  Runtime& rt = runtime();
  if (!rt.active()) return PMPI_Improbe(source, tag, comm, flag, message, status);
  const int asked = force_source(comm, source);  // every attempt: the next posting
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  const int rc = PMPI_Improbe(source, tag, comm, flag, message, st);
  if (rc == MPI_SUCCESS && *flag) {
    report_probe(Call::Improbe, comm, asked, source, tag, *message, st, VCX_CALLER());
  } else {
    forced_matches().not_posted(asked);
  }
  return rc;
}

}  // extern "C"
