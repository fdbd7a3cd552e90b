// The Wait/Test family. Completed requests are reported by the id of the
// handle they had before the call (MPI resets non-persistent ones; the ids
// are taken before the call, see Runtime::request_id) and their status; the
// call makes the application wait for the tool only if it completed a
// request whose completion merges something (a receive, a synchronous send,
// a collective member's wait part). Completing an inactive persistent
// request completes nothing and is not reported. A persistent receive whose
// start a replay forced is waited for through its stand-in (forced_matches.h).
#include <algorithm>
#include <cstring>
#include <iterator>
#include <vector>

#include "forced_matches.h"
#include "runtime.h"

using namespace vcx::mpi_intercept;
using vcx::mpi::Call;

namespace {

struct Done {
  std::uint64_t request;  // its id (Runtime::request_id)
  const MPI_Status* status;
};

// The completions of one call, gathered before the event is pushed.
thread_local std::vector<Done> t_done;

void add(MPI_Request r, std::uint64_t id, const MPI_Status* st) {
  if (r == MPI_REQUEST_NULL) return;
  t_done.push_back(Done{id, st});
  forced_matches().request_done(r);
}

void report(Call call) {
  Runtime& rt = runtime();
  // Filter out inactive persistent requests and see whether any waits.
  bool waits = false;
  std::size_t n = 0;
  for (const Done& d : t_done) {
    const auto kind = rt.complete(d.request);
    if (!kind) continue;
    waits |= *kind == RequestKind::Waits;
    t_done[n++] = d;
  }
  t_done.resize(n);
  if (n == 0) return;
  const std::size_t bytes =
      sizeof(vcx::mpi::CompletionEvent) + n * sizeof(vcx::mpi::Completion);
  auto* p = static_cast<std::uint8_t*>(rt.begin(call, bytes, waits));
  if (!p) return;
  const vcx::mpi::CompletionEvent head{static_cast<std::uint32_t>(n), 0};
  std::memcpy(p, &head, sizeof head);
  for (std::size_t i = 0; i < n; ++i) {
    // Local and cheap: a cancelled operation matched nothing.
    int cancelled = 0;
    PMPI_Test_cancelled(t_done[i].status, &cancelled);
    const vcx::mpi::Completion c{t_done[i].request,
                                 event_rank(t_done[i].status->MPI_SOURCE),
                                 t_done[i].status->MPI_TAG, cancelled, 0,
                                 received_bytes(t_done[i].status)};
    std::memcpy(p + sizeof head + i * sizeof c, &c, sizeof c);
  }
  rt.wait(rt.commit());
}

MPI_Status* status_array(MPI_Status* user, int n) {
  if (user != MPI_STATUSES_IGNORE) return user;
  auto& v = runtime().statuses();
  if (v.size() < static_cast<std::size_t>(n)) v.resize(static_cast<std::size_t>(n));
  return v.data();
}

MPI_Request* save(const MPI_Request* reqs, int n) {
  auto& v = runtime().saved_requests();
  if (v.size() < static_cast<std::size_t>(n)) v.resize(static_cast<std::size_t>(n));
  std::memcpy(v.data(), reqs, sizeof(MPI_Request) * static_cast<std::size_t>(n));
  return v.data();
}

// The ids of saved requests, taken before the MPI call frees their handles.
const std::uint64_t* ids_of(const MPI_Request* saved, int n) {
  thread_local std::vector<std::uint64_t> v;
  if (v.size() < static_cast<std::size_t>(n)) v.resize(static_cast<std::size_t>(n));
  Runtime& rt = runtime();
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = rt.request_id(saved[i]);
  return v.data();
}

// The Wait forms block until a request completes; the Test forms return.
bool blocks(Call call) {
  return call == Call::Wait || call == Call::Waitall || call == Call::Waitany ||
         call == Call::Waitsome;
}

// What every Wait/Test call does around MPI: a replay's stand-ins replace
// forced persistent receives for the call (forced_matches.h); the handles
// and their ids are kept from before it (MPI resets non-persistent ones);
// once MPI returned success, `done(saved, ids, st)` adds what completed and
// the call is reported. `pmpi(used, st, yield)` is the MPI call on `used`
// with statuses `st`; `yield`: wait by testing while yielding the core.
// `one_status`: the call takes one status (Wait, Test, the "any" forms),
// not an array of them.
template <class F, class D>
int completion(Call call, MPI_Request* requests, int count, MPI_Status* statuses,
               bool one_status, F&& pmpi, D&& done) {
  const vcx::intercept::CallEntry entered;  // the event is sent after the call
  Runtime& rt = runtime();
  if (!rt.active()) {
    // A forced persistent receive's stand-in outlives the analysis.
    MPI_Request* used = forced_matches().substitute(requests, count);
    const int rc = pmpi(used, statuses, false);
    forced_matches().restore(requests, used, count);
    return rc;
  }
  MPI_Request* saved = save(requests, count);
  const std::uint64_t* ids = ids_of(saved, count);
  MPI_Status local;
  MPI_Status* st = !one_status                    ? status_array(statuses, count)
                   : statuses == MPI_STATUS_IGNORE ? &local
                                                   : statuses;
  MPI_Request* used = forced_matches().substitute(requests, count);
  int rc;
  if (blocks(call)) {
    vcx::mpi::BlockedWait waits{};
    waits.count = static_cast<std::uint32_t>(count < 0 ? 0 : count);
    waits.listed = std::min<std::uint32_t>(waits.count, std::size(waits.requests));
    for (std::uint32_t i = 0; i < waits.listed; ++i) waits.requests[i] = ids[i];
    const BlockedScope blocked(rt, call, waits);
    rc = pmpi(used, st, rt.yields());
  } else {
    rc = pmpi(used, st, rt.yields());
  }
  forced_matches().restore(requests, used, count);
  if (rc != MPI_SUCCESS) return rc;
  t_done.clear();
  done(saved, ids, st);
  report(call);
  return rc;
}

// The requests a Waitsome or Testsome completed.
void add_some(const MPI_Request* saved, const std::uint64_t* ids, int outcount,
              const int* indices, const MPI_Status* st) {
  if (outcount == MPI_UNDEFINED) return;
  for (int i = 0; i < outcount; ++i) add(saved[indices[i]], ids[indices[i]], &st[i]);
}

}  // namespace

extern "C" {

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  return completion(
      Call::Wait, request, 1, status, true,
      [&](MPI_Request* used, MPI_Status* st, bool yield) {
        return yield ? test_yielding([&](int* flag) { return PMPI_Test(used, flag, st); })
                     : PMPI_Wait(used, st);
      },
      [&](const MPI_Request* saved, const std::uint64_t* ids, const MPI_Status* st) {
        add(saved[0], ids[0], st);
      });
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  return completion(
      Call::Test, request, 1, status, true,
      [&](MPI_Request* used, MPI_Status* st, bool) { return PMPI_Test(used, flag, st); },
      [&](const MPI_Request* saved, const std::uint64_t* ids, const MPI_Status* st) {
        if (*flag) add(saved[0], ids[0], st);
      });
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  return completion(
      Call::Waitall, requests, count, statuses, false,
      [&](MPI_Request* used, MPI_Status* st, bool yield) {
        return yield ? test_yielding([&](int* flag) { return PMPI_Testall(count, used, flag, st); })
                     : PMPI_Waitall(count, used, st);
      },
      [&](const MPI_Request* saved, const std::uint64_t* ids, const MPI_Status* st) {
        for (int i = 0; i < count; ++i) add(saved[i], ids[i], &st[i]);
      });
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  return completion(
      Call::Testall, requests, count, statuses, false,
      [&](MPI_Request* used, MPI_Status* st, bool) { return PMPI_Testall(count, used, flag, st); },
      [&](const MPI_Request* saved, const std::uint64_t* ids, const MPI_Status* st) {
        if (*flag)
          for (int i = 0; i < count; ++i) add(saved[i], ids[i], &st[i]);
      });
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  return completion(
      Call::Waitany, requests, count, status, true,
      [&](MPI_Request* used, MPI_Status* st, bool yield) {
        return yield ? test_yielding([&](int* flag) {
          return PMPI_Testany(count, used, index, flag, st);
        })
                     : PMPI_Waitany(count, used, index, st);
      },
      [&](const MPI_Request* saved, const std::uint64_t* ids, const MPI_Status* st) {
        if (*index != MPI_UNDEFINED) add(saved[*index], ids[*index], st);
      });
}

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  return completion(
      Call::Testany, requests, count, status, true,
      [&](MPI_Request* used, MPI_Status* st, bool) {
        return PMPI_Testany(count, used, index, flag, st);
      },
      [&](const MPI_Request* saved, const std::uint64_t* ids, const MPI_Status* st) {
        if (*flag && *index != MPI_UNDEFINED) add(saved[*index], ids[*index], st);
      });
}

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  return completion(
      Call::Waitsome, requests, incount, statuses, false,
      [&](MPI_Request* used, MPI_Status* st, bool yield) {
        // Testsome reports none done as 0 and no active request as
        // MPI_UNDEFINED, which is where Waitsome returns too.
        return yield ? test_yielding([&](int* flag) {
          const int r = PMPI_Testsome(incount, used, outcount, indices, st);
          *flag = *outcount != 0;
          return r;
        })
                     : PMPI_Waitsome(incount, used, outcount, indices, st);
      },
      [&](const MPI_Request* saved, const std::uint64_t* ids, const MPI_Status* st) {
        add_some(saved, ids, *outcount, indices, st);
      });
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  return completion(
      Call::Testsome, requests, incount, statuses, false,
      [&](MPI_Request* used, MPI_Status* st, bool) {
        return PMPI_Testsome(incount, used, outcount, indices, st);
      },
      [&](const MPI_Request* saved, const std::uint64_t* ids, const MPI_Status* st) {
        add_some(saved, ids, *outcount, indices, st);
      });
}

int MPI_Cancel(MPI_Request* request) {
  Runtime& rt = runtime();
  // Reported first: the translator holds back later receives on the queue
  // of a receive whose cancellation may succeed.
  if (rt.active() && *request != MPI_REQUEST_NULL)
    rt.push(Call::Cancel, vcx::mpi::RequestEvent{rt.request_id(*request)}, false);
  return PMPI_Cancel(forced_matches().substitute(request, 1));
}

}  // extern "C"
