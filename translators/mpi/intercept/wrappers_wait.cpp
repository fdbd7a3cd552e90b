// The Wait/Test family. Completed requests are reported with the handle they
// had before the call (MPI resets them) and their status; the call makes the
// application wait for the tool only if it completed a receive or a
// synchronous send.
#include <cstring>

#include "runtime.h"

using namespace vcx::mpi_intercept;
using vcx::mpi::Call;

namespace {

// Collects the completed requests of one call and pushes the event.
class Completions {
 public:
  explicit Completions(Call call) : call_(call) {}

  // Pushes an event for `count` completions, calling fill(i, request, status)
  // to get each; returns the event's seq (0 if nothing to report).
  template <class Get>
  std::uint64_t push(int count, Get&& get) {
    Runtime& rt = runtime();
    if (count <= 0 || !rt.active()) return 0;
    const std::size_t bytes =
        sizeof(vcx::mpi::CompletionEvent) + static_cast<std::size_t>(count) * sizeof(vcx::mpi::Completion);
    // Whether the tool must answer depends on the requests; look first.
    bool waits = false;
    for (int i = 0; i < count; ++i) {
      MPI_Request r;
      const MPI_Status* st;
      get(i, r, st);
      waits |= rt.forget(r) != RequestKind::Other;
    }
    auto* p = static_cast<std::uint8_t*>(rt.begin(call_, bytes, waits));
    if (!p) return 0;
    vcx::mpi::CompletionEvent head{static_cast<std::uint32_t>(count), 0};
    std::memcpy(p, &head, sizeof head);
    auto* out = reinterpret_cast<vcx::mpi::Completion*>(p + sizeof head);
    for (int i = 0; i < count; ++i) {
      MPI_Request r;
      const MPI_Status* st;
      get(i, r, st);
      int cancelled = 0;
      out[i] = vcx::mpi::Completion{request_handle(r), event_rank(st->MPI_SOURCE), st->MPI_TAG, cancelled, 0};
    }
    return rt.commit();
  }

 private:
  Call call_;
};

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

}  // namespace

extern "C" {

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  Runtime& rt = runtime();
  if (!rt.active()) return PMPI_Wait(request, status);
  const MPI_Request saved = *request;
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  const int rc = PMPI_Wait(request, st);
  if (rc != MPI_SUCCESS || saved == MPI_REQUEST_NULL) return rc;
  rt.wait(Completions(Call::Wait).push(1, [&](int, MPI_Request& r, const MPI_Status*& s) {
    r = saved;
    s = st;
  }));
  return rc;
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  Runtime& rt = runtime();
  if (!rt.active()) return PMPI_Test(request, flag, status);
  const MPI_Request saved = *request;
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  const int rc = PMPI_Test(request, flag, st);
  if (rc != MPI_SUCCESS || !*flag || saved == MPI_REQUEST_NULL) return rc;
  rt.wait(Completions(Call::Test).push(1, [&](int, MPI_Request& r, const MPI_Status*& s) {
    r = saved;
    s = st;
  }));
  return rc;
}

static int report_all(Call call, int count, const MPI_Request* saved, const MPI_Status* st) {
  // Completed = every request that was active (non-null) before the call.
  int n = 0;
  for (int i = 0; i < count; ++i) n += saved[i] != MPI_REQUEST_NULL;
  int k = -1;
  int next = 0;
  Runtime& rt = runtime();
  rt.wait(Completions(call).push(n, [&](int i, MPI_Request& r, const MPI_Status*& s) {
    // Walk forward to the i-th non-null request (calls come in order 0..n-1).
    if (i == 0) next = 0;
    while (saved[next] == MPI_REQUEST_NULL) ++next;
    k = next++;
    r = saved[k];
    s = &st[k];
  }));
  return MPI_SUCCESS;
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  Runtime& rt = runtime();
  if (!rt.active()) return PMPI_Waitall(count, requests, statuses);
  MPI_Request* saved = save(requests, count);
  MPI_Status* st = status_array(statuses, count);
  const int rc = PMPI_Waitall(count, requests, st);
  if (rc != MPI_SUCCESS) return rc;
  report_all(Call::Waitall, count, saved, st);
  return rc;
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  Runtime& rt = runtime();
  if (!rt.active()) return PMPI_Testall(count, requests, flag, statuses);
  MPI_Request* saved = save(requests, count);
  MPI_Status* st = status_array(statuses, count);
  const int rc = PMPI_Testall(count, requests, flag, st);
  if (rc != MPI_SUCCESS || !*flag) return rc;
  report_all(Call::Testall, count, saved, st);
  return rc;
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  Runtime& rt = runtime();
  if (!rt.active()) return PMPI_Waitany(count, requests, index, status);
  MPI_Request* saved = save(requests, count);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  const int rc = PMPI_Waitany(count, requests, index, st);
  if (rc != MPI_SUCCESS || *index == MPI_UNDEFINED) return rc;
  rt.wait(Completions(Call::Waitany).push(1, [&](int, MPI_Request& r, const MPI_Status*& s) {
    r = saved[*index];
    s = st;
  }));
  return rc;
}

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  Runtime& rt = runtime();
  if (!rt.active()) return PMPI_Testany(count, requests, index, flag, status);
  MPI_Request* saved = save(requests, count);
  MPI_Status local;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &local : status;
  const int rc = PMPI_Testany(count, requests, index, flag, st);
  if (rc != MPI_SUCCESS || !*flag || *index == MPI_UNDEFINED) return rc;
  rt.wait(Completions(Call::Testany).push(1, [&](int, MPI_Request& r, const MPI_Status*& s) {
    r = saved[*index];
    s = st;
  }));
  return rc;
}

static void report_some(Call call, const MPI_Request* saved, int outcount, const int* indices,
                        const MPI_Status* st) {
  if (outcount == MPI_UNDEFINED || outcount <= 0) return;
  Runtime& rt = runtime();
  rt.wait(Completions(call).push(outcount, [&](int i, MPI_Request& r, const MPI_Status*& s) {
    r = saved[indices[i]];
    s = &st[i];
  }));
}

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  Runtime& rt = runtime();
  if (!rt.active()) return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  MPI_Request* saved = save(requests, incount);
  MPI_Status* st = status_array(statuses, incount);
  const int rc = PMPI_Waitsome(incount, requests, outcount, indices, st);
  if (rc == MPI_SUCCESS) report_some(Call::Waitsome, saved, *outcount, indices, st);
  return rc;
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  Runtime& rt = runtime();
  if (!rt.active()) return PMPI_Testsome(incount, requests, outcount, indices, statuses);
  MPI_Request* saved = save(requests, incount);
  MPI_Status* st = status_array(statuses, incount);
  const int rc = PMPI_Testsome(incount, requests, outcount, indices, st);
  if (rc == MPI_SUCCESS) report_some(Call::Testsome, saved, *outcount, indices, st);
  return rc;
}

}  // extern "C"
