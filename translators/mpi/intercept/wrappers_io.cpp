// Calls that return generalized requests: MPI-IO's non-blocking calls (the
// MPI library implements them as generalized requests) and MPI_Grequest_start.
// They synchronise nothing the tool models, so nothing is reported; the
// interceptor only remembers each request until it completes, because while
// one lives the blocking calls must wait in MPI instead of testing and
// yielding the core (Runtime::yields()).
#include "runtime.h"

using namespace vcx::mpi_intercept;

namespace {

template <class Start>
int generalized(MPI_Request* request, Start&& start) {
  const int rc = start();
  Runtime& rt = runtime();
  if (rc == MPI_SUCCESS && rt.active()) {
    rt.new_request_id(*request);
    rt.remember(*request, RequestKind::Other, false, Runtime::Life::WaitsInMpi);
  }
  return rc;
}

}  // namespace

extern "C" {

int MPI_Grequest_start(MPI_Grequest_query_function* query_fn, MPI_Grequest_free_function* free_fn,
                       MPI_Grequest_cancel_function* cancel_fn, void* extra_state,
                       MPI_Request* request) {
  return generalized(request, [&] {
    return PMPI_Grequest_start(query_fn, free_fn, cancel_fn, extra_state, request);
  });
}

int MPI_File_iread(MPI_File fh, void* buf, int count, MPI_Datatype type, MPI_Request* request) {
  return generalized(request, [&] { return PMPI_File_iread(fh, buf, count, type, request); });
}
int MPI_File_iwrite(MPI_File fh, const void* buf, int count, MPI_Datatype type,
                    MPI_Request* request) {
  return generalized(request, [&] { return PMPI_File_iwrite(fh, buf, count, type, request); });
}
int MPI_File_iread_at(MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype type,
                      MPI_Request* request) {
  return generalized(request,
                     [&] { return PMPI_File_iread_at(fh, offset, buf, count, type, request); });
}
int MPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                       MPI_Datatype type, MPI_Request* request) {
  return generalized(request,
                     [&] { return PMPI_File_iwrite_at(fh, offset, buf, count, type, request); });
}
int MPI_File_iread_shared(MPI_File fh, void* buf, int count, MPI_Datatype type,
                          MPI_Request* request) {
  return generalized(request,
                     [&] { return PMPI_File_iread_shared(fh, buf, count, type, request); });
}
int MPI_File_iwrite_shared(MPI_File fh, const void* buf, int count, MPI_Datatype type,
                           MPI_Request* request) {
  return generalized(request,
                     [&] { return PMPI_File_iwrite_shared(fh, buf, count, type, request); });
}
int MPI_File_iread_all(MPI_File fh, void* buf, int count, MPI_Datatype type,
                       MPI_Request* request) {
  return generalized(request, [&] { return PMPI_File_iread_all(fh, buf, count, type, request); });
}
int MPI_File_iwrite_all(MPI_File fh, const void* buf, int count, MPI_Datatype type,
                        MPI_Request* request) {
  return generalized(request,
                     [&] { return PMPI_File_iwrite_all(fh, buf, count, type, request); });
}
int MPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void* buf, int count,
                          MPI_Datatype type, MPI_Request* request) {
  return generalized(
      request, [&] { return PMPI_File_iread_at_all(fh, offset, buf, count, type, request); });
}
int MPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                           MPI_Datatype type, MPI_Request* request) {
  return generalized(
      request, [&] { return PMPI_File_iwrite_at_all(fh, offset, buf, count, type, request); });
}

#if MPI_VERSION >= 4
int MPI_File_iread_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype type,
                     MPI_Request* request) {
  return generalized(request, [&] { return PMPI_File_iread_c(fh, buf, count, type, request); });
}
int MPI_File_iwrite_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype type,
                      MPI_Request* request) {
  return generalized(request, [&] { return PMPI_File_iwrite_c(fh, buf, count, type, request); });
}
int MPI_File_iread_at_c(MPI_File fh, MPI_Offset offset, void* buf, MPI_Count count,
                        MPI_Datatype type, MPI_Request* request) {
  return generalized(request,
                     [&] { return PMPI_File_iread_at_c(fh, offset, buf, count, type, request); });
}
int MPI_File_iwrite_at_c(MPI_File fh, MPI_Offset offset, const void* buf, MPI_Count count,
                         MPI_Datatype type, MPI_Request* request) {
  return generalized(
      request, [&] { return PMPI_File_iwrite_at_c(fh, offset, buf, count, type, request); });
}
int MPI_File_iread_shared_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype type,
                            MPI_Request* request) {
  return generalized(request,
                     [&] { return PMPI_File_iread_shared_c(fh, buf, count, type, request); });
}
int MPI_File_iwrite_shared_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype type,
                             MPI_Request* request) {
  return generalized(request,
                     [&] { return PMPI_File_iwrite_shared_c(fh, buf, count, type, request); });
}
int MPI_File_iread_all_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype type,
                         MPI_Request* request) {
  return generalized(request,
                     [&] { return PMPI_File_iread_all_c(fh, buf, count, type, request); });
}
int MPI_File_iwrite_all_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype type,
                          MPI_Request* request) {
  return generalized(request,
                     [&] { return PMPI_File_iwrite_all_c(fh, buf, count, type, request); });
}
int MPI_File_iread_at_all_c(MPI_File fh, MPI_Offset offset, void* buf, MPI_Count count,
                            MPI_Datatype type, MPI_Request* request) {
  return generalized(
      request, [&] { return PMPI_File_iread_at_all_c(fh, offset, buf, count, type, request); });
}
int MPI_File_iwrite_at_all_c(MPI_File fh, MPI_Offset offset, const void* buf, MPI_Count count,
                             MPI_Datatype type, MPI_Request* request) {
  return generalized(
      request, [&] { return PMPI_File_iwrite_at_all_c(fh, offset, buf, count, type, request); });
}
#endif

}  // extern "C"
