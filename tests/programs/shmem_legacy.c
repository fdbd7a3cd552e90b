/* The legacy OpenSHMEM names of shmem-compat.h: start_pes, _my_pe,
 * _num_pes, shmalloc, shmemalign, shrealloc, shfree, and no shmem_finalize
 * (Open MPI finalises at exit; vcx ends the analysis then). Checked
 * against the oracle; prints the same with and without vcx. */
#include <shmem.h>
#include <stdio.h>

#include "shmem_gt.h"

int main(void) {
  start_pes(0);
  sgt_init();
  const int me = _my_pe(), npes = _num_pes();
  long *cell = shmalloc(sizeof(long));
  sgt_world("shmalloc");
  double *aligned = shmemalign(128, sizeof(double));
  sgt_world("shmemalign");
  shmem_long_p(cell, 10L * me, (me + 1) % npes);
  shmem_barrier_all();
  sgt_world("shmem_barrier_all");
  printf("PE %d got %ld\n", me, *cell);
  cell = shrealloc(cell, 4 * sizeof(long));
  sgt_world("shrealloc");
  if (me == npes - 1) shfree(NULL); /* does nothing: no event, no synchronisation */
  shfree(aligned);
  sgt_world("shfree");
  shfree(cell);
  sgt_world("shfree");
  sgt_finalize();
  return 0;
}
