/* Race-free twin of race_shmem_get.c: a shmem_barrier_all between the first
 * and the second accesses (a, e), every PE calls shmem_quiet before the
 * shmem_sync_all, which completes A's get_nbi (b) and B's put (d) before
 * the sync orders them, and A calls shmem_quiet between its get_nbi and
 * its p (c). The controls are those of race_shmem_get.c. No races.
 *
 * PEs: A = 0 and B = 2 (1 with two PEs) access the symmetric heap of
 * T = 1; other PEs only call the barriers, shmem_quiet and shmem_sync_all. */
#include <shmem.h>
#include <stdio.h>

#define SLOTS 16

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (n < 2) {
    fprintf(stderr, "race_free_shmem_get: needs at least 2 PEs\n");
    shmem_global_exit(2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  int *mem = shmem_calloc(SLOTS, sizeof(int));
  /* Open MPI 4.1.4's shmem_calloc zeroes the block after its barrier: this
   * barrier keeps the zeroing from overwriting other PEs' first writes. */
  shmem_barrier_all();

  int one = 1, two = 2, got[16];
  char buf[4];

  /* First accesses. */
  if (me == A) {
    shmem_int_get(&got[0], &mem[0], 1, T);
    shmem_int_put(&mem[2], &one, 1, T);
    shmem_int_get(&got[1], &mem[3], 1, T);
    shmem_int_get_nbi(&got[2], &mem[4], 1, T);
    shmem_getmem(buf, &mem[5], 2, T);
  }
  /* The barrier race_shmem_get.c lacks. */
  shmem_barrier_all();
  /* Second accesses. */
  if (me == B) {
    shmem_int_p(&mem[0], 2, T);
    shmem_getmem(buf, (char *)&mem[1] + 2, 4, T);
    shmem_int_get(&got[3], &mem[3], 1, T);
    got[4] = shmem_int_g(&mem[4], T);
    shmem_char_p((char *)&mem[5] + 2, 'x', T);
  }
  shmem_barrier_all();

  /* Completed by shmem_quiet, ordered by shmem_sync_all. */
  if (me == A) {
    shmem_int_get_nbi(&got[5], &mem[8], 1, T);
    shmem_int_get(&got[6], &mem[9], 1, T);
    got[7] = shmem_int_g(&mem[10], T);
  }
  if (me == B) {
    shmem_int_put(&mem[12], &two, 1, T);
  }
  /* The quiet race_shmem_get.c lacks. */
  shmem_quiet();
  shmem_sync_all();
  if (me == B) {
    shmem_int_put(&mem[8], &two, 1, T);
    shmem_int_put(&mem[9], &two, 1, T);
    shmem_int_p(&mem[10], 2, T);
  }
  if (me == A) {
    got[8] = shmem_int_g(&mem[12], T);
  }
  shmem_barrier_all();

  /* One PE's own accesses, each completed before the next. */
  if (me == A) {
    shmem_int_get_nbi(&got[9], &mem[13], 1, T);
    shmem_quiet();
    shmem_int_p(&mem[13], 1, T);
    /* Controls. */
    shmem_int_get_nbi(&got[10], &mem[14], 1, T);
    shmem_quiet();
    shmem_int_put(&mem[14], &one, 1, T);
    shmem_int_get(&got[11], &mem[15], 1, T);
    shmem_int_put(&mem[15], &one, 1, T);
  }
  shmem_barrier_all();

  shmem_free(mem);
  shmem_finalize();
  return 0;
}
