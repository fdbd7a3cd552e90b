// MPI_Init, MPI_Init_thread, MPI_Finalize.
#include "runtime.h"

using namespace vcx::mpi_intercept;

extern "C" {

int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) runtime().start(MPI_THREAD_SINGLE);
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) runtime().start(*provided);
  return rc;
}

int MPI_Finalize(void) {
  runtime().measure_clocks_at_end();
  runtime().stop();
  return PMPI_Finalize();
}

}  // extern "C"

extern "C" int MPI_Abort(MPI_Comm comm, int errorcode) {
  record_ending("abort", errorcode);
  Runtime& rt = runtime();
  if (rt.active()) {
    // The tools learn why the application job is about to end.
    vcx::mpi::AbortEvent ev{};
    ev.comm = comm_handle(comm);
    ev.errorcode = errorcode;
    rt.push(vcx::mpi::Call::Abort, ev, false);
  }
  return PMPI_Abort(comm, errorcode);
}
