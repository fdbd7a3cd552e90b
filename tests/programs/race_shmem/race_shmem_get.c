/* Races of OpenSHMEM gets. A blocking get (shmem_TYPE_get, _g,
 * shmem_getmem) reads until it returns; a shmem_TYPE_get_nbi until the
 * calling PE's next shmem_quiet or barrier. shmem_sync_all orders the
 * calls before it before those after it, and completes nothing.
 *
 *   a  A's shmem_int_get and B's shmem_int_p of the same int, with nothing
 *      between;
 *   e  A's shmem_int_put and B's shmem_getmem of four bytes that cover its
 *      first half (and the second half of the int before, which nobody
 *      writes);
 *   b  A's shmem_int_get_nbi, shmem_sync_all, B's shmem_int_put of the int;
 *   d  B's shmem_int_put, shmem_sync_all, A's shmem_int_g of the int;
 *   c  A's shmem_int_get_nbi, then its shmem_int_p into the int it reads.
 * Unmarked controls: two gets of one int (A's get and B's get, A's
 * get_nbi and B's g); A's two-byte getmem and B's shmem_char_p of the next
 * byte; a blocking get (or g), shmem_sync_all, a put (or p) of the int by
 * another PE; A's get_nbi, shmem_quiet, put; A's get, then put.
 *
 * race_free_shmem_get.c has a shmem_barrier_all between the first and the
 * second accesses of a and e, every PE call shmem_quiet before the
 * shmem_sync_all (b, d), and A call shmem_quiet between its accesses in c.
 * PEs: A = 0 and B = 2 (1 with two PEs) access the symmetric heap of
 * T = 1; other PEs only call the barriers and shmem_sync_all. */
#include <shmem.h>
#include <stdio.h>

#define SLOTS 16

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (n < 2) {
    fprintf(stderr, "race_shmem_get: needs at least 2 PEs\n");
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
    shmem_int_get(&got[0], &mem[0], 1, T); /* race: a */
    shmem_int_put(&mem[2], &one, 1, T); /* race: e */
    shmem_int_get(&got[1], &mem[3], 1, T);
    shmem_int_get_nbi(&got[2], &mem[4], 1, T);
    shmem_getmem(buf, &mem[5], 2, T);
  }
  /* Second accesses (race_free_shmem_get.c has a barrier here). */
  if (me == B) {
    shmem_int_p(&mem[0], 2, T); /* race: a */
    shmem_getmem(buf, (char *)&mem[1] + 2, 4, T); /* race: e */
    shmem_int_get(&got[3], &mem[3], 1, T);
    got[4] = shmem_int_g(&mem[4], T);
    shmem_char_p((char *)&mem[5] + 2, 'x', T);
  }
  shmem_barrier_all();

  /* Ordered by shmem_sync_all, which completes nothing. */
  if (me == A) {
    shmem_int_get_nbi(&got[5], &mem[8], 1, T); /* race: b */
    shmem_int_get(&got[6], &mem[9], 1, T);
    got[7] = shmem_int_g(&mem[10], T);
  }
  if (me == B) {
    shmem_int_put(&mem[12], &two, 1, T); /* race: d */
  }
  /* (race_free_shmem_get.c: every PE calls shmem_quiet here.) */
  shmem_sync_all();
  if (me == B) {
    shmem_int_put(&mem[8], &two, 1, T); /* race: b */
    shmem_int_put(&mem[9], &two, 1, T);
    shmem_int_p(&mem[10], 2, T);
  }
  if (me == A) {
    got[8] = shmem_int_g(&mem[12], T); /* race: d */
  }
  shmem_barrier_all();

  /* One PE's own accesses. */
  if (me == A) {
    shmem_int_get_nbi(&got[9], &mem[13], 1, T); /* race: c */
    shmem_int_p(&mem[13], 1, T); /* race: c */
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
