// Point-to-point calls. Sends push their event before the MPI call, so the
// clock travels while the data does; receives push after, with the status.
#include "runtime.h"

using namespace vcx::mpi_intercept;
using vcx::mpi::Call;
using vcx::mpi::SendMode;

namespace {

std::uint64_t push_send(Call call, MPI_Comm comm, int dest, int tag, SendMode mode,
                        MPI_Request request) {
  Runtime& rt = runtime();
  if (!rt.active()) return 0;
  vcx::mpi::SendEvent ev{};
  ev.comm = comm_handle(comm);
  ev.request = request == MPI_REQUEST_NULL ? 0 : request_handle(request);
  ev.dest = event_rank(dest);
  ev.tag = tag;
  ev.mode = mode;
  const bool waits = mode == SendMode::Synchronous && request == MPI_REQUEST_NULL &&
                     dest != MPI_PROC_NULL;
  return rt.push(call, ev, waits);
}

int nonblocking_send(Call call, SendMode mode, int rc, MPI_Comm comm, int dest, int tag,
                     MPI_Request* request) {
  if (rc != MPI_SUCCESS || !runtime().active()) return rc;
  push_send(call, comm, dest, tag, mode, *request);
  if (mode == SendMode::Synchronous && dest != MPI_PROC_NULL)
    runtime().remember(*request, RequestKind::SyncSend);
  return rc;
}

}  // namespace

extern "C" {

int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  push_send(Call::Send, comm, dest, tag, SendMode::Standard, MPI_REQUEST_NULL);
  return PMPI_Send(buf, count, type, dest, tag, comm);
}

int MPI_Bsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  push_send(Call::Bsend, comm, dest, tag, SendMode::Buffered, MPI_REQUEST_NULL);
  return PMPI_Bsend(buf, count, type, dest, tag, comm);
}

int MPI_Rsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  push_send(Call::Rsend, comm, dest, tag, SendMode::Ready, MPI_REQUEST_NULL);
  return PMPI_Rsend(buf, count, type, dest, tag, comm);
}

int MPI_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  const std::uint64_t seq =
      push_send(Call::Ssend, comm, dest, tag, SendMode::Synchronous, MPI_REQUEST_NULL);
  const int rc = PMPI_Ssend(buf, count, type, dest, tag, comm);
  runtime().wait(seq);
  return rc;
}

int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request* request) {
  const int rc = PMPI_Isend(buf, count, type, dest, tag, comm, request);
  return nonblocking_send(Call::Isend, SendMode::Standard, rc, comm, dest, tag, request);
}

int MPI_Ibsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  const int rc = PMPI_Ibsend(buf, count, type, dest, tag, comm, request);
  return nonblocking_send(Call::Ibsend, SendMode::Buffered, rc, comm, dest, tag, request);
}

int MPI_Irsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  const int rc = PMPI_Irsend(buf, count, type, dest, tag, comm, request);
  return nonblocking_send(Call::Irsend, SendMode::Ready, rc, comm, dest, tag, request);
}

int MPI_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  const int rc = PMPI_Issend(buf, count, type, dest, tag, comm, request);
  return nonblocking_send(Call::Issend, SendMode::Synchronous, rc, comm, dest, tag, request);
}

int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status* status) {
  Runtime& rt = runtime();
  if (!rt.active()) return PMPI_Recv(buf, count, type, source, tag, comm, status);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  const int rc = PMPI_Recv(buf, count, type, source, tag, comm, st);
  if (rc != MPI_SUCCESS) return rc;
  vcx::mpi::RecvEvent ev{};
  ev.comm = comm_handle(comm);
  ev.source = event_rank(source);
  ev.tag = event_tag(tag);
  ev.status_source = event_rank(st->MPI_SOURCE);
  ev.status_tag = st->MPI_TAG;
  rt.wait(rt.push(Call::Recv, ev, source != MPI_PROC_NULL));
  return rc;
}

int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request* request) {
  const int rc = PMPI_Irecv(buf, count, type, source, tag, comm, request);
  Runtime& rt = runtime();
  if (rc != MPI_SUCCESS || !rt.active()) return rc;
  vcx::mpi::IrecvEvent ev{};
  ev.comm = comm_handle(comm);
  ev.request = request_handle(*request);
  ev.source = event_rank(source);
  ev.tag = event_tag(tag);
  rt.push(Call::Irecv, ev, false);
  if (source != MPI_PROC_NULL) rt.remember(*request, RequestKind::Receive);
  return rc;
}

static int sendrecv_common(Call call, int dest, int sendtag, int source, int recvtag,
                           MPI_Comm comm, MPI_Status* st, int rc) {
  Runtime& rt = runtime();
  if (rc != MPI_SUCCESS || !rt.active()) return rc;
  vcx::mpi::SendrecvEvent ev{};
  ev.comm = comm_handle(comm);
  ev.dest = event_rank(dest);
  ev.send_tag = sendtag;
  ev.source = event_rank(source);
  ev.recv_tag = event_tag(recvtag);
  ev.status_source = event_rank(st->MPI_SOURCE);
  ev.status_tag = st->MPI_TAG;
  rt.wait(rt.push(call, ev, source != MPI_PROC_NULL));
  return rc;
}

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status* status) {
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  const int rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                               recvtype, source, recvtag, comm, runtime().active() ? st : status);
  return sendrecv_common(Call::Sendrecv, dest, sendtag, source, recvtag, comm, st, rc);
}

int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  const int rc = PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm,
                                       runtime().active() ? st : status);
  return sendrecv_common(Call::Sendrecv_replace, dest, sendtag, source, recvtag, comm, st, rc);
}

}  // extern "C"
