/* Race-free twin of race_shmem_strided.c: a shmem_barrier_all between the
 * first and the second accesses, and a shmem_quiet between A's iput and
 * iget of the same element. The controls are those of
 * race_shmem_strided.c. No races.
 *
 * PEs: A = 0 and B = 2 (1 with two PEs) access the symmetric heap of
 * T = 1; other PEs only call the barriers. */
#include <shmem.h>
#include <stdio.h>

#define SLOTS 80

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (n < 2) {
    fprintf(stderr, "race_free_shmem_strided: needs at least 2 PEs\n");
    shmem_global_exit(2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  int *mem = shmem_calloc(SLOTS, sizeof(int));
  long *lm = shmem_calloc(4, sizeof(long));
  /* Open MPI 4.1.4's shmem_calloc zeroes the block after its barrier: this
   * barrier keeps the zeroing from overwriting other PEs' first writes. */
  shmem_barrier_all();

  int src[8] = {1, 2, 3, 4, 5, 6, 7, 8}, loc[8];
  long lsrc[2] = {1, 2};

  /* First accesses. */
  if (me == A) {
    shmem_int_iput(&mem[0], src, 2, 1, 4, T);
    shmem_int_iput(&mem[8], src, 2, 1, 4, T);
    shmem_int_iget(loc, &mem[24], 1, 2, 4, T);
    shmem_int_iget(loc, &mem[32], 1, 3, 3, T);
    shmem_int_iput(&mem[40], src, 4, 1, 3, T);
    shmem_int_iput(&mem[50], src, 2, 1, 3, T);
    shmem_long_iput(&lm[0], lsrc, 2, 1, 2, T);
    shmem_int_iget(loc, &mem[56], 1, 2, 3, T);
  }
  /* The barrier race_shmem_strided.c lacks. */
  shmem_barrier_all();
  /* Second accesses. */
  if (me == B) {
    shmem_int_iput(&mem[1], src, 2, 1, 4, T);
    shmem_int_iput(&mem[14], src, 3, 1, 3, T);
    shmem_int_iput(&mem[25], src, 2, 1, 4, T);
    shmem_int_p(&mem[38], 1, T);
    shmem_int_iget(loc, &mem[41], 1, 1, 8, T);
    shmem_int_p(&mem[53], 1, T);
    shmem_int_p((int *)&lm[2] + 1, 1, T);
    shmem_int_p((int *)&lm[1], 1, T);
    shmem_int_iget(loc, &mem[56], 1, 2, 3, T);
  }
  shmem_barrier_all();

  /* One PE's own accesses. */
  if (me == A) {
    shmem_int_iput(&mem[64], src, 2, 1, 3, T);
    shmem_quiet();
    shmem_int_iget(loc, &mem[68], 1, 1, 2, T);
    shmem_int_iput(&mem[70], src, 2, 1, 3, T);
    shmem_int_iget(loc, &mem[71], 1, 2, 2, T);
  }
  shmem_barrier_all();

  shmem_free(lm);
  shmem_free(mem);
  shmem_finalize();
  return 0;
}
