// Point-to-point calls. Sends push their event before the MPI call, so the
// clock travels while the data does; receives push after, with the status.
// Large-count (_c) variants share the plain forms' code.
#include <cstring>
#include <vector>

#include "forced_matches.h"
#include "runtime.h"

using namespace vcx::mpi_intercept;
using vcx::mpi::Call;
using vcx::mpi::SendMode;

namespace {

vcx::mpi::SendEvent send_event(MPI_Comm comm, int dest, int tag, SendMode mode,
                               MPI_Request request, std::uint64_t bytes) {
  vcx::mpi::SendEvent ev{};
  ev.bytes = bytes;
  ev.comm = comm_handle(comm);
  ev.request = request == MPI_REQUEST_NULL ? 0 : runtime().new_request_id(request);
  ev.dest = event_rank(dest);
  ev.tag = tag;
  ev.mode = mode;
  return ev;
}

// A receive's source as MPI is called with it: the program's, or the one a
// replay forces (forced_matches.h). Returns the program's.
int force_source(MPI_Comm comm, int& source) {
  const int asked = source;
  if (runtime().active()) source = forced_matches().source_for(comm, source);
  return asked;
}

// A blocking send: push first; a synchronous one then waits for its answer.
// `count` items of `type`: the message's size, for traces.
template <class Count, class F>
int blocking_send(Call call, SendMode mode, MPI_Comm comm, int dest, int tag, Count count,
                  MPI_Datatype type, F&& pmpi) {
  Runtime& rt = runtime();
  if (!rt.active()) return pmpi();
  const bool waits = mode == SendMode::Synchronous && dest != MPI_PROC_NULL;
  const std::uint64_t ticket =
      rt.push(call, send_event(comm, dest, tag, mode, MPI_REQUEST_NULL, message_bytes(count, type)),
              waits);
  const int rc = pmpi();
  rt.wait(ticket);
  return rc;
}

// A non-blocking send: the request exists only after the call.
template <class Count, class F>
int nonblocking_send(Call call, SendMode mode, MPI_Comm comm, int dest, int tag, Count count,
                     MPI_Datatype type, MPI_Request* request, F&& pmpi) {
  const vcx::intercept::CallEntry entered;  // the event is sent after the call
  const int rc = pmpi();
  Runtime& rt = runtime();
  if (rc != MPI_SUCCESS || !rt.active()) return rc;
  rt.push(call, send_event(comm, dest, tag, mode, *request, message_bytes(count, type)), false);
  if (mode == SendMode::Synchronous && dest != MPI_PROC_NULL) rt.remember(*request, RequestKind::Waits);
  return rc;
}

// A persistent send: nothing happens until MPI_Start.
template <class Count, class F>
int send_init(Call call, SendMode mode, MPI_Comm comm, int dest, int tag, Count count,
              MPI_Datatype type, MPI_Request* request, F&& pmpi) {
  const vcx::intercept::CallEntry entered;  // the event is sent after the call
  const int rc = pmpi();
  Runtime& rt = runtime();
  if (rc != MPI_SUCCESS || !rt.active()) return rc;
  rt.push(call, send_event(comm, dest, tag, mode, *request, message_bytes(count, type)), false);
  const bool waits = mode == SendMode::Synchronous && dest != MPI_PROC_NULL;
  rt.remember(*request, waits ? RequestKind::Waits : RequestKind::Other, true);
  return rc;
}

// `pc` (VCX_CALLER()) is taken by the exported wrapper: only there is the
// return address the application's.
// `asked`: the source the program gave; `source`: the one MPI is called with
// (another only where a replay forces the match, forced_matches.h).
template <class F>
int blocking_recv(Call call, MPI_Comm comm, int asked, int source, int tag, MPI_Status* status,
                  void* pc, F&& pmpi) {
  const vcx::intercept::CallEntry entered;  // the event is sent after the call
  Runtime& rt = runtime();
  if (!rt.active()) return pmpi(status);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  const int rc = pmpi(st);
  if (rc != MPI_SUCCESS) return rc;
  forced_matches().posted(asked);
  vcx::mpi::RecvEvent ev{};
  ev.comm = comm_handle(comm);
  ev.source = ForcedMatches::event_source(asked, source);
  ev.tag = event_tag(tag);
  ev.status_source = event_rank(st->MPI_SOURCE);
  ev.status_tag = st->MPI_TAG;
  ev.pc = reinterpret_cast<std::uint64_t>(pc);
  ev.bytes = received_bytes(st);
  rt.wait(rt.push(call, ev, source != MPI_PROC_NULL));
  return rc;
}

// Irecv and Recv_init: the event names the request.
template <class F>
int post_recv(Call call, MPI_Comm comm, int asked, int source, int tag, MPI_Request* request,
              bool persistent, void* pc, F&& pmpi) {
  const vcx::intercept::CallEntry entered;  // the event is sent after the call
  const int rc = pmpi();
  Runtime& rt = runtime();
  if (rc != MPI_SUCCESS || !rt.active()) return rc;
  if (!persistent) forced_matches().posted(asked, request);
  vcx::mpi::IrecvEvent ev{};
  ev.comm = comm_handle(comm);
  ev.request = rt.new_request_id(*request);
  ev.source = ForcedMatches::event_source(asked, source);
  ev.tag = event_tag(tag);
  ev.pc = reinterpret_cast<std::uint64_t>(pc);
  rt.push(call, ev, false);
  rt.remember(*request, source != MPI_PROC_NULL ? RequestKind::Waits : RequestKind::Other,
              persistent);
  return rc;
}

// MPI_Sendrecv as a receive and a send tested together; the status is the
// receive's.
template <class Start>
int sendrecv_yielding(MPI_Status* status, Start&& start) {
  MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  const int rc = start(r);
  if (rc != MPI_SUCCESS) {
    if (r[0] != MPI_REQUEST_NULL) {  // the send failed: the receive must not stay pending
      PMPI_Cancel(&r[0]);
      PMPI_Request_free(&r[0]);
    }
    return rc;
  }
  MPI_Status st[2];
  const int trc = test_yielding([&](int* flag) { return PMPI_Testall(2, r, flag, st); });
  *status = st[0];
  return trc == MPI_ERR_IN_STATUS ? (st[0].MPI_ERROR != MPI_SUCCESS ? st[0].MPI_ERROR
                                                                    : st[1].MPI_ERROR)
                                  : trc;
}

template <class F>
int sendrecv(Call call, int dest, int sendtag, std::uint64_t send_bytes, int asked, int source,
             int recvtag, MPI_Comm comm, MPI_Status* status, void* pc, F&& pmpi) {
  const vcx::intercept::CallEntry entered;  // the event is sent after the call
  Runtime& rt = runtime();
  if (!rt.active()) return pmpi(status);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  const int rc = pmpi(st);
  if (rc != MPI_SUCCESS) return rc;
  forced_matches().posted(asked);
  vcx::mpi::SendrecvEvent ev{};
  ev.comm = comm_handle(comm);
  ev.dest = event_rank(dest);
  ev.send_tag = sendtag;
  ev.source = ForcedMatches::event_source(asked, source);
  ev.recv_tag = event_tag(recvtag);
  ev.status_source = event_rank(st->MPI_SOURCE);
  ev.status_tag = st->MPI_TAG;
  ev.pc = reinterpret_cast<std::uint64_t>(pc);
  ev.send_bytes = send_bytes;
  ev.recv_bytes = received_bytes(st);
  rt.wait(rt.push(call, ev, source != MPI_PROC_NULL));
  return rc;
}

template <class F>
int matched_recv(Call call, MPI_Message* message, MPI_Status* status, F&& pmpi) {
  const vcx::intercept::CallEntry entered;  // the event is sent after the call
  Runtime& rt = runtime();
  if (!rt.active()) return pmpi(status);
  const MPI_Message saved = *message;
  // Message handles are named like requests (MPICH takes them from its
  // request pool).
  const std::uint64_t message_id = rt.request_id(saved);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  const int rc = pmpi(st);
  if (rc != MPI_SUCCESS) return rc;
  vcx::mpi::MrecvEvent ev{};
  ev.message = message_id;
  ev.status_source = event_rank(st->MPI_SOURCE);
  ev.status_tag = st->MPI_TAG;
  ev.bytes = received_bytes(st);
  rt.wait(rt.push(call, ev, saved != MPI_MESSAGE_NO_PROC));
  return rc;
}

template <class F>
int matched_irecv(Call call, MPI_Message* message, MPI_Request* request, F&& pmpi) {
  const vcx::intercept::CallEntry entered;  // the event is sent after the call
  Runtime& rt = runtime();
  if (!rt.active()) return pmpi();
  const MPI_Message saved = *message;
  const std::uint64_t message_id = rt.request_id(saved);
  const int rc = pmpi();
  if (rc != MPI_SUCCESS) return rc;
  vcx::mpi::MrecvEvent ev{};
  ev.message = message_id;
  ev.request = rt.new_request_id(*request);
  rt.push(call, ev, false);
  if (saved != MPI_MESSAGE_NO_PROC) rt.remember(*request, RequestKind::Waits);
  return rc;
}

template <class F>
int isendrecv(Call call, int dest, int sendtag, std::uint64_t send_bytes, int asked, int source,
              int recvtag, MPI_Comm comm, MPI_Request* request, void* pc, F&& pmpi) {
  const vcx::intercept::CallEntry entered;  // the event is sent after the call
  const int rc = pmpi();
  Runtime& rt = runtime();
  if (rc != MPI_SUCCESS || !rt.active()) return rc;
  forced_matches().posted(asked, request);
  vcx::mpi::IsendrecvEvent ev{};
  ev.comm = comm_handle(comm);
  ev.request = rt.new_request_id(*request);
  ev.dest = event_rank(dest);
  ev.send_tag = sendtag;
  ev.source = ForcedMatches::event_source(asked, source);
  ev.recv_tag = event_tag(recvtag);
  ev.pc = reinterpret_cast<std::uint64_t>(pc);
  ev.send_bytes = send_bytes;
  rt.push(call, ev, false);
  rt.remember(*request, source != MPI_PROC_NULL ? RequestKind::Waits : RequestKind::Other);
  return rc;
}

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

// ---- blocking sends ----

int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  return blocking_send(Call::Send, SendMode::Standard, comm, dest, tag, count, type, [&] {
    if (!runtime().yields()) return PMPI_Send(buf, count, type, dest, tag, comm);
    return start_and_test(
        [&](MPI_Request* r) { return PMPI_Isend(buf, count, type, dest, tag, comm, r); });
  });
}
#if MPI_VERSION >= 4
int MPI_Send_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
               MPI_Comm comm) {
  return blocking_send(Call::Send_c, SendMode::Standard, comm, dest, tag, count, type, [&] {
    if (!runtime().yields()) return PMPI_Send_c(buf, count, type, dest, tag, comm);
    return start_and_test(
        [&](MPI_Request* r) { return PMPI_Isend_c(buf, count, type, dest, tag, comm, r); });
  });
}
#endif  // MPI_VERSION >= 4
int MPI_Bsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  return blocking_send(Call::Bsend, SendMode::Buffered, comm, dest, tag, count, type,
                       [&] { return PMPI_Bsend(buf, count, type, dest, tag, comm); });
}
#if MPI_VERSION >= 4
int MPI_Bsend_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                MPI_Comm comm) {
  return blocking_send(Call::Bsend_c, SendMode::Buffered, comm, dest, tag, count, type,
                       [&] { return PMPI_Bsend_c(buf, count, type, dest, tag, comm); });
}
#endif  // MPI_VERSION >= 4
int MPI_Rsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  return blocking_send(Call::Rsend, SendMode::Ready, comm, dest, tag, count, type,
                       [&] { return PMPI_Rsend(buf, count, type, dest, tag, comm); });
}
#if MPI_VERSION >= 4
int MPI_Rsend_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                MPI_Comm comm) {
  return blocking_send(Call::Rsend_c, SendMode::Ready, comm, dest, tag, count, type,
                       [&] { return PMPI_Rsend_c(buf, count, type, dest, tag, comm); });
}
#endif  // MPI_VERSION >= 4
int MPI_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  return blocking_send(Call::Ssend, SendMode::Synchronous, comm, dest, tag, count, type, [&] {
    if (!runtime().yields()) return PMPI_Ssend(buf, count, type, dest, tag, comm);
    return start_and_test(
        [&](MPI_Request* r) { return PMPI_Issend(buf, count, type, dest, tag, comm, r); });
  });
}
#if MPI_VERSION >= 4
int MPI_Ssend_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                MPI_Comm comm) {
  return blocking_send(Call::Ssend_c, SendMode::Synchronous, comm, dest, tag, count, type, [&] {
    if (!runtime().yields()) return PMPI_Ssend_c(buf, count, type, dest, tag, comm);
    return start_and_test(
        [&](MPI_Request* r) { return PMPI_Issend_c(buf, count, type, dest, tag, comm, r); });
  });
}
#endif  // MPI_VERSION >= 4

// ---- non-blocking sends ----

int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request* request) {
  return nonblocking_send(Call::Isend, SendMode::Standard, comm, dest, tag, count, type,
                          request, [&] {
    return PMPI_Isend(buf, count, type, dest, tag, comm, request);
  });
}
#if MPI_VERSION >= 4
int MPI_Isend_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                MPI_Comm comm, MPI_Request* request) {
  return nonblocking_send(Call::Isend_c, SendMode::Standard, comm, dest, tag, count, type,
                          request, [&] {
    return PMPI_Isend_c(buf, count, type, dest, tag, comm, request);
  });
}
#endif  // MPI_VERSION >= 4
int MPI_Ibsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return nonblocking_send(Call::Ibsend, SendMode::Buffered, comm, dest, tag, count, type,
                          request, [&] {
    return PMPI_Ibsend(buf, count, type, dest, tag, comm, request);
  });
}
#if MPI_VERSION >= 4
int MPI_Ibsend_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                 MPI_Comm comm, MPI_Request* request) {
  return nonblocking_send(Call::Ibsend_c, SendMode::Buffered, comm, dest, tag, count, type,
                          request, [&] {
    return PMPI_Ibsend_c(buf, count, type, dest, tag, comm, request);
  });
}
#endif  // MPI_VERSION >= 4
int MPI_Irsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return nonblocking_send(Call::Irsend, SendMode::Ready, comm, dest, tag, count, type,
                          request, [&] {
    return PMPI_Irsend(buf, count, type, dest, tag, comm, request);
  });
}
#if MPI_VERSION >= 4
int MPI_Irsend_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                 MPI_Comm comm, MPI_Request* request) {
  return nonblocking_send(Call::Irsend_c, SendMode::Ready, comm, dest, tag, count, type,
                          request, [&] {
    return PMPI_Irsend_c(buf, count, type, dest, tag, comm, request);
  });
}
#endif  // MPI_VERSION >= 4
int MPI_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return nonblocking_send(Call::Issend, SendMode::Synchronous, comm, dest, tag, count, type,
                          request, [&] {
    return PMPI_Issend(buf, count, type, dest, tag, comm, request);
  });
}
#if MPI_VERSION >= 4
int MPI_Issend_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                 MPI_Comm comm, MPI_Request* request) {
  return nonblocking_send(Call::Issend_c, SendMode::Synchronous, comm, dest, tag, count, type,
                          request, [&] {
    return PMPI_Issend_c(buf, count, type, dest, tag, comm, request);
  });
}
#endif  // MPI_VERSION >= 4

// ---- persistent sends ----

int MPI_Send_init(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                  MPI_Comm comm, MPI_Request* request) {
  return send_init(Call::Send_init, SendMode::Standard, comm, dest, tag, count, type, request, [&] {
    return PMPI_Send_init(buf, count, type, dest, tag, comm, request);
  });
}
#if MPI_VERSION >= 4
int MPI_Send_init_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                    MPI_Comm comm, MPI_Request* request) {
  return send_init(Call::Send_init_c, SendMode::Standard, comm, dest, tag, count, type,
                   request, [&] {
    return PMPI_Send_init_c(buf, count, type, dest, tag, comm, request);
  });
}
#endif  // MPI_VERSION >= 4
int MPI_Bsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                   MPI_Comm comm, MPI_Request* request) {
  return send_init(Call::Bsend_init, SendMode::Buffered, comm, dest, tag, count, type,
                   request, [&] {
    return PMPI_Bsend_init(buf, count, type, dest, tag, comm, request);
  });
}
#if MPI_VERSION >= 4
int MPI_Bsend_init_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                     MPI_Comm comm, MPI_Request* request) {
  return send_init(Call::Bsend_init_c, SendMode::Buffered, comm, dest, tag, count, type,
                   request, [&] {
    return PMPI_Bsend_init_c(buf, count, type, dest, tag, comm, request);
  });
}
#endif  // MPI_VERSION >= 4
int MPI_Rsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                   MPI_Comm comm, MPI_Request* request) {
  return send_init(Call::Rsend_init, SendMode::Ready, comm, dest, tag, count, type, request, [&] {
    return PMPI_Rsend_init(buf, count, type, dest, tag, comm, request);
  });
}
#if MPI_VERSION >= 4
int MPI_Rsend_init_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                     MPI_Comm comm, MPI_Request* request) {
  return send_init(Call::Rsend_init_c, SendMode::Ready, comm, dest, tag, count, type, request, [&] {
    return PMPI_Rsend_init_c(buf, count, type, dest, tag, comm, request);
  });
}
#endif  // MPI_VERSION >= 4
int MPI_Ssend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                   MPI_Comm comm, MPI_Request* request) {
  return send_init(Call::Ssend_init, SendMode::Synchronous, comm, dest, tag, count, type,
                   request, [&] {
    return PMPI_Ssend_init(buf, count, type, dest, tag, comm, request);
  });
}
#if MPI_VERSION >= 4
int MPI_Ssend_init_c(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                     MPI_Comm comm, MPI_Request* request) {
  return send_init(Call::Ssend_init_c, SendMode::Synchronous, comm, dest, tag, count, type,
                   request, [&] {
    return PMPI_Ssend_init_c(buf, count, type, dest, tag, comm, request);
  });
}
#endif  // MPI_VERSION >= 4

// ---- receives ----

int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status* status) {
  const int asked = force_source(comm, source);
  void* const pc = VCX_CALLER();
  return blocking_recv(Call::Recv, comm, asked, source, tag, status, pc, [&](MPI_Status* st) {
    if (!runtime().yields()) return PMPI_Recv(buf, count, type, source, tag, comm, st);
    return start_and_test(
        [&](MPI_Request* r) { return PMPI_Irecv(buf, count, type, source, tag, comm, r); }, st);
  });
}
#if MPI_VERSION >= 4
int MPI_Recv_c(void* buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
               MPI_Status* status) {
  const int asked = force_source(comm, source);
  void* const pc = VCX_CALLER();
  return blocking_recv(Call::Recv_c, comm, asked, source, tag, status, pc, [&](MPI_Status* st) {
    if (!runtime().yields()) return PMPI_Recv_c(buf, count, type, source, tag, comm, st);
    return start_and_test(
        [&](MPI_Request* r) { return PMPI_Irecv_c(buf, count, type, source, tag, comm, r); }, st);
  });
}
#endif  // MPI_VERSION >= 4
int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request* request) {
  const int asked = force_source(comm, source);
  return post_recv(Call::Irecv, comm, asked, source, tag, request, false, VCX_CALLER(), [&] {
    return PMPI_Irecv(buf, count, type, source, tag, comm, request);
  });
}
#if MPI_VERSION >= 4
int MPI_Irecv_c(void* buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                MPI_Request* request) {
  const int asked = force_source(comm, source);
  return post_recv(Call::Irecv_c, comm, asked, source, tag, request, false, VCX_CALLER(), [&] {
    return PMPI_Irecv_c(buf, count, type, source, tag, comm, request);
  });
}
#endif  // MPI_VERSION >= 4
int MPI_Recv_init(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                  MPI_Request* request) {
  const int asked = source;
  const int rc =
      post_recv(Call::Recv_init, comm, asked, source, tag, request, true, VCX_CALLER(), [&] {
        return PMPI_Recv_init(buf, count, type, source, tag, comm, request);
      });
  // Each MPI_Start posts a wildcard receive, which a replay may force.
  if (rc == MPI_SUCCESS && source == MPI_ANY_SOURCE)
    forced_matches().persistent_wildcard(*request, {buf, count, type, tag, comm, false});
  return rc;
}
#if MPI_VERSION >= 4
int MPI_Recv_init_c(void* buf, MPI_Count count, MPI_Datatype type, int source, int tag,
                    MPI_Comm comm, MPI_Request* request) {
  const int asked = source;
  const int rc =
      post_recv(Call::Recv_init_c, comm, asked, source, tag, request, true, VCX_CALLER(), [&] {
        return PMPI_Recv_init_c(buf, count, type, source, tag, comm, request);
      });
  if (rc == MPI_SUCCESS && source == MPI_ANY_SOURCE)
    forced_matches().persistent_wildcard(*request, {buf, count, type, tag, comm, true});
  return rc;
}
#endif  // MPI_VERSION >= 4

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
  const int rc = PMPI_Mprobe(source, tag, comm, message, st);
  if (rc == MPI_SUCCESS)
    report_probe(Call::Mprobe, comm, asked, source, tag, *message, st, VCX_CALLER());
  return rc;
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

int MPI_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Status* status) {
  return matched_recv(Call::Mrecv, message, status, [&](MPI_Status* st) {
    return PMPI_Mrecv(buf, count, type, message, st);
  });
}
#if MPI_VERSION >= 4
int MPI_Mrecv_c(void* buf, MPI_Count count, MPI_Datatype type, MPI_Message* message,
                MPI_Status* status) {
  return matched_recv(Call::Mrecv_c, message, status, [&](MPI_Status* st) {
    return PMPI_Mrecv_c(buf, count, type, message, st);
  });
}
#endif  // MPI_VERSION >= 4
int MPI_Imrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message,
               MPI_Request* request) {
  return matched_irecv(Call::Imrecv, message, request,
                       [&] { return PMPI_Imrecv(buf, count, type, message, request); });
}
#if MPI_VERSION >= 4
int MPI_Imrecv_c(void* buf, MPI_Count count, MPI_Datatype type, MPI_Message* message,
                 MPI_Request* request) {
  return matched_irecv(Call::Imrecv_c, message, request,
                       [&] { return PMPI_Imrecv_c(buf, count, type, message, request); });
}
#endif  // MPI_VERSION >= 4

// ---- combined send and receive ----

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status* status) {
  const int asked = force_source(comm, source);
  return sendrecv(Call::Sendrecv, dest, sendtag, message_bytes(sendcount, sendtype), asked,
                  source, recvtag, comm, status,
                  VCX_CALLER(), [&](MPI_Status* st) {
                    if (runtime().yields())
                      return sendrecv_yielding(st, [&](MPI_Request* r) {
                        const int rc = PMPI_Irecv(recvbuf, recvcount, recvtype, source,
                                                   recvtag, comm, &r[0]);
                        if (rc != MPI_SUCCESS) return rc;
                        return PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm,
                                           &r[1]);
                      });
                    return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                                         recvcount, recvtype, source, recvtag, comm, st);
                  });
}
#if MPI_VERSION >= 4
int MPI_Sendrecv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                   int sendtag, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                   int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  const int asked = force_source(comm, source);
  return sendrecv(Call::Sendrecv_c, dest, sendtag, message_bytes(sendcount, sendtype), asked,
                  source, recvtag, comm, status,
                  VCX_CALLER(), [&](MPI_Status* st) {
                    if (runtime().yields())
                      return sendrecv_yielding(st, [&](MPI_Request* r) {
                        const int rc = PMPI_Irecv_c(recvbuf, recvcount, recvtype, source,
                                                   recvtag, comm, &r[0]);
                        if (rc != MPI_SUCCESS) return rc;
                        return PMPI_Isend_c(sendbuf, sendcount, sendtype, dest, sendtag, comm,
                                           &r[1]);
                      });
                    return PMPI_Sendrecv_c(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                                           recvcount, recvtype, source, recvtag, comm, st);
                  });
}
#endif  // MPI_VERSION >= 4
int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  const int asked = force_source(comm, source);
  return sendrecv(Call::Sendrecv_replace, dest, sendtag, message_bytes(count, type), asked,
                  source, recvtag, comm, status,
                  VCX_CALLER(), [&](MPI_Status* st) {
                    return PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag,
                                                 comm, st);
                  });
}
#if MPI_VERSION >= 4
int MPI_Sendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype type, int dest, int sendtag,
                           int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  const int asked = force_source(comm, source);
  return sendrecv(Call::Sendrecv_replace_c, dest, sendtag, message_bytes(count, type), asked,
                  source, recvtag, comm, status,
                  VCX_CALLER(), [&](MPI_Status* st) {
                    return PMPI_Sendrecv_replace_c(buf, count, type, dest, sendtag, source,
                                                   recvtag, comm, st);
                  });
}

int MPI_Isendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                  int sendtag, void* recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                  int recvtag, MPI_Comm comm, MPI_Request* request) {
  const int asked = force_source(comm, source);
  return isendrecv(Call::Isendrecv, dest, sendtag, message_bytes(sendcount, sendtype), asked,
                   source, recvtag, comm, request,
                   VCX_CALLER(), [&] {
    return PMPI_Isendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                          recvtype, source, recvtag, comm, request);
  });
}
int MPI_Isendrecv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                    int sendtag, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                    int source, int recvtag, MPI_Comm comm, MPI_Request* request) {
  const int asked = force_source(comm, source);
  return isendrecv(Call::Isendrecv_c, dest, sendtag, message_bytes(sendcount, sendtype), asked,
                   source, recvtag, comm, request,
                   VCX_CALLER(), [&] {
    return PMPI_Isendrecv_c(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                            recvtype, source, recvtag, comm, request);
  });
}
int MPI_Isendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Request* request) {
  const int asked = force_source(comm, source);
  return isendrecv(Call::Isendrecv_replace, dest, sendtag, message_bytes(count, datatype), asked,
                   source, recvtag, comm, request,
                   VCX_CALLER(), [&] {
    return PMPI_Isendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm,
                                  request);
  });
}
int MPI_Isendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype datatype, int dest,
                            int sendtag, int source, int recvtag, MPI_Comm comm,
                            MPI_Request* request) {
  const int asked = force_source(comm, source);
  return isendrecv(Call::Isendrecv_replace_c, dest, sendtag, message_bytes(count, datatype), asked,
                   source, recvtag, comm, request,
                   VCX_CALLER(), [&] {
    return PMPI_Isendrecv_replace_c(buf, count, datatype, dest, sendtag, source, recvtag, comm,
                                    request);
  });
}
#endif  // MPI_VERSION >= 4

}  // extern "C"
