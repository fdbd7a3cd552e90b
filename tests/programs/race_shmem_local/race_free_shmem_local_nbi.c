/* Race-free twin of race_shmem_local_nbi.c: A calls shmem_quiet after each
 * nbi call, before its loads and stores of the call's local buffer, so
 * every access of a buffer follows the call's completion. The controls are
 * those of race_shmem_local_nbi.c. No races.
 *
 * PEs: A = 0 puts into and gets from the symmetric heap of T = 1, which
 * makes no local accesses; other PEs only call the barriers. */
#include <shmem.h>
#include <stdio.h>

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (n < 2) {
    fprintf(stderr, "race_free_shmem_local_nbi: needs at least 2 PEs\n");
    shmem_global_exit(2);
  }
  const int A = 0, T = 1;
  int *mem = shmem_calloc(16, sizeof(int));
  /* Open MPI 4.1.4's shmem_calloc zeroes the block after its barrier: this
   * barrier keeps the zeroing from overwriting other PEs' first writes. */
  shmem_barrier_all();

  int src[4] = {1, 2, 3, 4}, dst[4] = {0, 0, 0, 0};
  int bsrc[2] = {5, 6}, bdst[2] = {0, 0}, v = 0;
  char csrc[4] = {'a', 'b', 'c', 'd'};

  if (me == A) {
    shmem_int_put_nbi(&mem[0], src, 2, T);
    shmem_quiet();
    v = src[0];
    src[1] = 7;
    src[2] = 8;
    shmem_int_get_nbi(dst, &mem[8], 2, T);
    shmem_quiet();
    v += dst[0];
    dst[1] = 9;
    v += dst[2];
    dst[3] = 1;
    shmem_putmem_nbi(&mem[4], csrc, 4, T);
    shmem_quiet();
    for (int i = 0; i < 4; ++i) csrc[i] = 'z';
    /* Controls: blocking calls, done with their buffers on return. */
    shmem_int_put(&mem[10], bsrc, 2, T);
    bsrc[0] = 9;
    shmem_int_get(bdst, &mem[12], 2, T);
    v += bdst[1];
    shmem_quiet();
    /* Controls: after shmem_quiet. */
    src[0] = 9;
    src[1] = 10;
    v += dst[0];
    dst[1] = 11;
    for (int i = 0; i < 4; ++i) csrc[i] = 'q';
  }
  shmem_barrier_all();

  (void)v;
  shmem_free(mem);
  shmem_finalize();
  return 0;
}
