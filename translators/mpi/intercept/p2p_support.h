// How a point-to-point wrapper reports its call: the shapes the wrappers
// generated from wrappers.tsv call (gen_wrappers.py), one per kind of call.
// Sends push their event before the MPI call, so the clock travels while
// the data does; receives push after, with the status. Each shape takes
// the MPI call itself as `pmpi` (with the status to fill where the call has
// one) and, for a blocking call that can yield its rank's core, the start
// of its non-blocking form.
//
// `pc` (VCX_CALLER()) is taken by the exported wrapper: only there is the
// return address the application's. `source` is taken by reference: a
// replay may force the match of a wildcard receive (forced_matches.h), and
// `pmpi` then calls MPI with the forced source.
#pragma once

#include <type_traits>

#include "forced_matches.h"
#include "runtime.h"

namespace vcx::mpi_intercept {

inline mpi::SendEvent send_event(MPI_Comm comm, int dest, int tag, mpi::SendMode mode,
                                 MPI_Request request, std::uint64_t bytes) {
  mpi::SendEvent ev{};
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
inline int force_source(MPI_Comm comm, int& source) {
  const int asked = source;
  if (runtime().active()) source = forced_matches().source_for(comm, source);
  return asked;
}

inline bool send_waits(mpi::SendMode mode, int dest) {
  return mode == mpi::SendMode::Synchronous && dest != MPI_PROC_NULL;
}

// A blocking send: push first; a synchronous one then waits for its answer.
// `count` items of `type`: the message's size, for traces.
template <class Count, class F>
int blocking_send(mpi::Call call, mpi::SendMode mode, MPI_Comm comm, int dest, int tag,
                  Count count, MPI_Datatype type, F&& pmpi) {
  Runtime& rt = runtime();
  if (!rt.active()) return pmpi();
  const mpi::SendEvent ev =
      send_event(comm, dest, tag, mode, MPI_REQUEST_NULL, message_bytes(count, type));
  const std::uint64_t ticket = rt.push(call, ev, send_waits(mode, dest));
  int rc;
  {
    const BlockedScope blocked(rt, call, ev);
    rc = pmpi();
  }
  rt.wait(ticket);
  return rc;
}

// The same, running `start` (the non-blocking form) where the rank yields.
template <class Count, class G, class F>
int blocking_send(mpi::Call call, mpi::SendMode mode, MPI_Comm comm, int dest, int tag,
                  Count count, MPI_Datatype type, G&& start, F&& pmpi) {
  return blocking_send(call, mode, comm, dest, tag, count, type, [&] {
    return runtime().yields() ? start_and_test(start) : pmpi();
  });
}

// A non-blocking send: the request exists only after the call.
template <class Count, class F>
int nonblocking_send(mpi::Call call, mpi::SendMode mode, MPI_Comm comm, int dest, int tag,
                     Count count, MPI_Datatype type, MPI_Request* request, F&& pmpi) {
  const intercept::CallEntry entered;  // the event is sent after the call
  const int rc = pmpi();
  Runtime& rt = runtime();
  if (rc != MPI_SUCCESS || !rt.active()) return rc;
  rt.push(call, send_event(comm, dest, tag, mode, *request, message_bytes(count, type)), false);
  if (send_waits(mode, dest)) rt.remember(*request, RequestKind::Waits);
  return rc;
}

// A persistent send: nothing happens until MPI_Start.
template <class Count, class F>
int send_init(mpi::Call call, mpi::SendMode mode, MPI_Comm comm, int dest, int tag, Count count,
              MPI_Datatype type, MPI_Request* request, F&& pmpi) {
  const intercept::CallEntry entered;  // the event is sent after the call
  const int rc = pmpi();
  Runtime& rt = runtime();
  if (rc != MPI_SUCCESS || !rt.active()) return rc;
  rt.push(call, send_event(comm, dest, tag, mode, *request, message_bytes(count, type)), false);
  rt.remember(*request, send_waits(mode, dest) ? RequestKind::Waits : RequestKind::Other, true);
  return rc;
}

// A blocking receive; `start` is its non-blocking form.
template <class G, class F>
int blocking_recv(mpi::Call call, MPI_Comm comm, int& source, int tag, MPI_Status* status,
                  void* pc, G&& start, F&& pmpi) {
  const int asked = force_source(comm, source);
  const intercept::CallEntry entered;  // the event is sent after the call
  const auto run = [&](MPI_Status* st) {
    return runtime().yields() ? start_and_test(start, st) : pmpi(st);
  };
  Runtime& rt = runtime();
  if (!rt.active()) return run(status);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  mpi::RecvEvent ev{};
  ev.comm = comm_handle(comm);
  ev.source = ForcedMatches::event_source(asked, source);
  ev.tag = event_tag(tag);
  ev.pc = reinterpret_cast<std::uint64_t>(pc);
  int rc;
  {
    const BlockedScope blocked(rt, call, ev, ev.pc);
    rc = run(st);
  }
  if (rc != MPI_SUCCESS) return rc;
  forced_matches().posted(asked);
  ev.status_source = event_rank(st->MPI_SOURCE);
  ev.status_tag = st->MPI_TAG;
  ev.bytes = received_bytes(st);
  rt.wait(rt.push(call, ev, source != MPI_PROC_NULL));
  return rc;
}

// Irecv and Recv_init: the event names the request. `asked`: the source the
// program gave; `source`: the one MPI was called with.
template <class F>
int post_recv(mpi::Call call, MPI_Comm comm, int asked, int source, int tag,
              MPI_Request* request, bool persistent, void* pc, F&& pmpi) {
  const intercept::CallEntry entered;  // the event is sent after the call
  const int rc = pmpi();
  Runtime& rt = runtime();
  if (rc != MPI_SUCCESS || !rt.active()) return rc;
  if (!persistent) forced_matches().posted(asked, request);
  mpi::IrecvEvent ev{};
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

template <class F>
int nonblocking_recv(mpi::Call call, MPI_Comm comm, int& source, int tag,
                     MPI_Request* request, void* pc, F&& pmpi) {
  const int asked = force_source(comm, source);
  return post_recv(call, comm, asked, source, tag, request, false, pc, pmpi);
}

// A persistent receive: each MPI_Start posts it, and a started wildcard
// receive may be forced by a replay (then each start forces, not this call).
template <class Count, class F>
int recv_init(mpi::Call call, void* buf, Count count, MPI_Datatype type, int source, int tag,
              MPI_Comm comm, MPI_Request* request, void* pc, F&& pmpi) {
  const int rc = post_recv(call, comm, source, source, tag, request, true, pc, pmpi);
  if (rc == MPI_SUCCESS && source == MPI_ANY_SOURCE)
    forced_matches().persistent_wildcard(
        *request, {buf, count, type, tag, comm, !std::is_same_v<Count, int>});
  return rc;
}

// Mrecv: the receive of a probed message.
template <class F>
int matched_recv(mpi::Call call, MPI_Message* message, MPI_Status* status, F&& pmpi) {
  const intercept::CallEntry entered;  // the event is sent after the call
  Runtime& rt = runtime();
  if (!rt.active()) return pmpi(status);
  const MPI_Message saved = *message;
  // Message handles are named like requests (MPICH takes them from its
  // request pool).
  const std::uint64_t message_id = rt.request_id(saved);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  mpi::MrecvEvent ev{};
  ev.message = message_id;
  int rc;
  {
    const BlockedScope blocked(rt, call, ev);
    rc = pmpi(st);
  }
  if (rc != MPI_SUCCESS) return rc;
  ev.status_source = event_rank(st->MPI_SOURCE);
  ev.status_tag = st->MPI_TAG;
  ev.bytes = received_bytes(st);
  rt.wait(rt.push(call, ev, saved != MPI_MESSAGE_NO_PROC));
  return rc;
}

template <class F>
int matched_irecv(mpi::Call call, MPI_Message* message, MPI_Request* request, F&& pmpi) {
  const intercept::CallEntry entered;  // the event is sent after the call
  Runtime& rt = runtime();
  if (!rt.active()) return pmpi();
  const MPI_Message saved = *message;
  const std::uint64_t message_id = rt.request_id(saved);
  const int rc = pmpi();
  if (rc != MPI_SUCCESS) return rc;
  mpi::MrecvEvent ev{};
  ev.message = message_id;
  ev.request = rt.new_request_id(*request);
  rt.push(call, ev, false);
  if (saved != MPI_MESSAGE_NO_PROC) rt.remember(*request, RequestKind::Waits);
  return rc;
}

// MPI_Sendrecv and MPI_Sendrecv_replace: a send and a receive; the status is
// the receive's.
template <class F>
int sendrecv_replace(mpi::Call call, MPI_Comm comm, int dest, int sendtag,
                     std::uint64_t send_bytes, int& source, int recvtag, MPI_Status* status,
                     void* pc, F&& pmpi) {
  const int asked = force_source(comm, source);
  const intercept::CallEntry entered;  // the event is sent after the call
  Runtime& rt = runtime();
  if (!rt.active()) return pmpi(status);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  mpi::SendrecvEvent ev{};
  ev.comm = comm_handle(comm);
  ev.dest = event_rank(dest);
  ev.send_tag = sendtag;
  ev.source = ForcedMatches::event_source(asked, source);
  ev.recv_tag = event_tag(recvtag);
  ev.pc = reinterpret_cast<std::uint64_t>(pc);
  ev.send_bytes = send_bytes;
  int rc;
  {
    const BlockedScope blocked(rt, call, ev, ev.pc);
    rc = pmpi(st);
  }
  if (rc != MPI_SUCCESS) return rc;
  forced_matches().posted(asked);
  ev.status_source = event_rank(st->MPI_SOURCE);
  ev.status_tag = st->MPI_TAG;
  ev.recv_bytes = received_bytes(st);
  rt.wait(rt.push(call, ev, source != MPI_PROC_NULL));
  return rc;
}

// The receive and the send started (`start_recv`, `start_send`) and tested
// together: MPI_Sendrecv where the rank yields its core.
template <class R, class S>
int sendrecv_yielding(MPI_Status* status, R&& start_recv, S&& start_send) {
  MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int rc = start_recv(&r[0]);
  if (rc != MPI_SUCCESS) return rc;
  rc = start_send(&r[1]);
  if (rc != MPI_SUCCESS) {
    if (r[0] != MPI_REQUEST_NULL) {  // the send failed: the receive must not stay pending
      PMPI_Cancel(&r[0]);
      PMPI_Request_free(&r[0]);
    }
    return rc;
  }
  MPI_Status st[2];
  const int trc = test_yielding([&](int* flag) { return PMPI_Testall(2, r, flag, st); });
  if (status != MPI_STATUS_IGNORE) *status = st[0];
  return trc == MPI_ERR_IN_STATUS ? (st[0].MPI_ERROR != MPI_SUCCESS ? st[0].MPI_ERROR
                                                                    : st[1].MPI_ERROR)
                                  : trc;
}

template <class R, class S, class F>
int sendrecv(mpi::Call call, MPI_Comm comm, int dest, int sendtag, std::uint64_t send_bytes,
             int& source, int recvtag, MPI_Status* status, void* pc, R&& start_recv,
             S&& start_send, F&& pmpi) {
  return sendrecv_replace(call, comm, dest, sendtag, send_bytes, source, recvtag, status, pc,
                          [&](MPI_Status* st) {
    return runtime().yields() ? sendrecv_yielding(st, start_recv, start_send) : pmpi(st);
  });
}

template <class F>
int isendrecv(mpi::Call call, MPI_Comm comm, int dest, int sendtag, std::uint64_t send_bytes,
              int& source, int recvtag, MPI_Request* request, void* pc, F&& pmpi) {
  const int asked = force_source(comm, source);
  const intercept::CallEntry entered;  // the event is sent after the call
  const int rc = pmpi();
  Runtime& rt = runtime();
  if (rc != MPI_SUCCESS || !rt.active()) return rc;
  forced_matches().posted(asked, request);
  mpi::IsendrecvEvent ev{};
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

}  // namespace vcx::mpi_intercept
