// shmem_init, shmem_init_thread, start_pes, shmem_finalize, shmem_global_exit.
#include "clock_sync.h"
#include "report.h"
#include "vcx/intercept/ending.h"

using namespace vcx::shmem_intercept;

extern "C" {

void shmem_init(void) {
  const Nesting nesting;
  pshmem_init();
  if (nesting.outermost()) runtime().start(Call::shmem_init, SHMEM_THREAD_SINGLE);
}

int shmem_init_thread(int requested, int* provided) {
  const Nesting nesting;
  const int rc = pshmem_init_thread(requested, provided);
  if (rc == 0 && nesting.outermost()) runtime().start(Call::shmem_init_thread, *provided);
  return rc;
}

void start_pes(int npes) {
  const Nesting nesting;
  pstart_pes(npes);
  if (nesting.outermost()) runtime().start(Call::start_pes, SHMEM_THREAD_SINGLE);
}

void shmem_finalize(void) {
  const Nesting nesting;
  if (nesting.outermost()) {
    clock_sync_end();
    runtime().stop();
  }
  pshmem_finalize();
}

void shmem_global_exit(int status) {
  vcx::intercept::record_ending("abort", status);
  Runtime& rt = runtime();
  // The tools learn why the application job is about to end.
  if (rt.active()) rt.push(Call::shmem_global_exit, vcx::shmem::ExitEvent{status, 0}, false);
  pshmem_global_exit(status);
}

}  // extern "C"
