/* Races of strided puts and gets (shmem_TYPE_iput, shmem_TYPE_iget): each
 * accesses only its nelems elements, sst or dst elements apart at the
 * target, not the gaps between them. Like shmem_TYPE_put, an iput is
 * complete at the calling PE's next shmem_quiet or barrier; an iget when
 * it returns.
 *
 * A makes its first accesses while B makes its own, nothing between:
 *   a  iputs of stride 2 (elements 8, 10, 12, 14) and of stride 3 (14, 17,
 *      20): one element in common;
 *   b  an iget of stride 3 (32, 35, 38) and a shmem_int_p into 38;
 *   c  an iput of stride 4 (40, 44, 48) and an iget of stride 1 (41..48);
 *   d  a shmem_long_iput of stride 2 (longs 0 and 2) and a shmem_int_p
 *      into the upper half of long 2;
 *   e  A's own iput of stride 2 (64, 66, 68), then its iget of 68 and 69.
 * Unmarked controls: iputs of stride 2 into the even and the odd elements;
 * an iget of the even and an iput of the odd elements; a p into a gap of
 * an iput (53 between 50, 52, 54; the lower half of long 1 between longs
 * 0 and 2); two igets of the same elements; A's iput of the even and iget
 * of the odd elements, no quiet between.
 *
 * race_free_shmem_strided.c has a shmem_barrier_all between the first and
 * the second accesses and a shmem_quiet between A's accesses in e.
 * PEs: A = 0 and B = 2 (1 with two PEs) access the symmetric heap of
 * T = 1; other PEs only call the barriers. */
#include <shmem.h>
#include <stdio.h>

#define SLOTS 80

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (n < 2) {
    fprintf(stderr, "race_shmem_strided: needs at least 2 PEs\n");
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
    shmem_int_iput(&mem[8], src, 2, 1, 4, T); /* race: a */
    shmem_int_iget(loc, &mem[24], 1, 2, 4, T);
    shmem_int_iget(loc, &mem[32], 1, 3, 3, T); /* race: b */
    shmem_int_iput(&mem[40], src, 4, 1, 3, T); /* race: c */
    shmem_int_iput(&mem[50], src, 2, 1, 3, T);
    shmem_long_iput(&lm[0], lsrc, 2, 1, 2, T); /* race: d */
    shmem_int_iget(loc, &mem[56], 1, 2, 3, T);
  }
  /* Second accesses (race_free_shmem_strided.c has a barrier here). */
  if (me == B) {
    shmem_int_iput(&mem[1], src, 2, 1, 4, T);
    shmem_int_iput(&mem[14], src, 3, 1, 3, T); /* race: a */
    shmem_int_iput(&mem[25], src, 2, 1, 4, T);
    shmem_int_p(&mem[38], 1, T); /* race: b */
    shmem_int_iget(loc, &mem[41], 1, 1, 8, T); /* race: c */
    shmem_int_p(&mem[53], 1, T);
    shmem_int_p((int *)&lm[2] + 1, 1, T); /* race: d */
    shmem_int_p((int *)&lm[1], 1, T);
    shmem_int_iget(loc, &mem[56], 1, 2, 3, T);
  }
  shmem_barrier_all();

  /* One PE's own accesses. */
  if (me == A) {
    shmem_int_iput(&mem[64], src, 2, 1, 3, T); /* race: e */
    shmem_int_iget(loc, &mem[68], 1, 1, 2, T); /* race: e */
    shmem_int_iput(&mem[70], src, 2, 1, 3, T);
    shmem_int_iget(loc, &mem[71], 1, 2, 2, T);
  }
  shmem_barrier_all();

  shmem_free(lm);
  shmem_free(mem);
  shmem_finalize();
  return 0;
}
