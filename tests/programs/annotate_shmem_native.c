/* Uses every annotation of vcx/annotate_shmem.h once per PE and links
 * nothing but OpenSHMEM: tests/integration/annotate_shmem_native.sh builds
 * it with oshcc alone, runs it natively and under vcx-run. Needs 2 PEs or
 * more. With the argument "bad-version" it calls the carrier with a layout
 * version vcx does not read, which vcx must refuse. */
#include <shmem.h>
#include <stdio.h>
#include <string.h>

#include "vcx/annotate_shmem.h"

int main(int argc, char **argv) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (argc > 1 && strcmp(argv[1], "bad-version") == 0) {
    if (vcx_shmem_annotation)
      vcx_shmem_annotation(VCX_ANNOTATE_SHMEM_VERSION + 1, VCX_ANNOTATE_TICK, 0, 0);
    printf("annotate_shmem_native PE %d: no vcx\n", me);
    shmem_finalize();
    return 0;
  }
  vcx_annotate_shmem_tick();
  /* Ring on queue 5. */
  vcx_annotate_shmem_process_signal((me + 1) % n, 5);
  vcx_annotate_shmem_process_wait((me + n - 1) % n, 5);
  /* Deposit, then let PE 1 fetch after a barrier. */
  if (me == 0) vcx_annotate_shmem_resource_signal(42, n - 1);
  shmem_barrier_all();
  if (me == 1) vcx_annotate_shmem_resource_wait(42, n - 1);
  vcx_annotate_shmem_resource_signal(43, 0);
  vcx_annotate_shmem_resource_wait(44, 0);
  printf("annotate_shmem_native PE %d ok\n", me);
  shmem_finalize();
  return 0;
}
