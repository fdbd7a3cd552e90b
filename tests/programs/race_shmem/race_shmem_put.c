/* Races between OpenSHMEM puts. A blocking put (shmem_TYPE_put, _p,
 * shmem_putmem) is complete only at the calling PE's next shmem_quiet or
 * barrier, a shmem_TYPE_put_nbi likewise; until then it may still write.
 *
 *   a  A and B put into the same int of T, with nothing between;
 *   b  a byte-wise put of three bytes by A and a shmem_char_p by B into
 *      its last byte;
 *   e  a two-element put by A and B's shmem_int_p into its second
 *      element;
 *   c  A writes the same int twice with shmem_int_p, no quiet between;
 *   d  A's shmem_int_put_nbi, then its shmem_int_g of the same int;
 *   h  A's blocking shmem_int_put, then its shmem_int_get of the same int
 *      (the put is not complete when it returns);
 *   f  one shmem_int_put line run twice by A in a loop;
 *   g  one shmem_int_p line run by A and by B.
 * Unmarked controls: adjacent ints; two byte-wise puts into the two halves
 * of one int; a put, shmem_quiet, a put; a put_nbi, shmem_quiet, a get; the
 * same int written in consecutive barrier phases.
 *
 * race_free_shmem_put.c has a shmem_barrier_all between the first and the
 * second accesses of a, b and e, a shmem_quiet between the accesses of c,
 * d, h and in the loop of f, and a barrier between the turns of A and B in
 * g. PEs: A = 0 and B = 2 (1 with two PEs) access the symmetric heap of
 * T = 1; other PEs only call the barriers. */
#include <shmem.h>
#include <stdio.h>

#define SLOTS 16

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (n < 2) {
    fprintf(stderr, "race_shmem_put: needs at least 2 PEs\n");
    shmem_global_exit(2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  int *mem = shmem_calloc(SLOTS, sizeof(int));
  /* Open MPI 4.1.4's shmem_calloc zeroes the block after its barrier: this
   * barrier keeps the zeroing from overwriting other PEs' first writes. */
  shmem_barrier_all();

  int one = 1, two[2] = {2, 3}, got[4];
  char bytes[4] = {'a', 'b', 'c', 'd'};

  /* First accesses. */
  if (me == A) {
    shmem_int_put(&mem[0], &one, 1, T); /* race: a */
    shmem_int_put(&mem[1], two, 2, T); /* race: e */
    shmem_int_p(&mem[3], 1, T);
    shmem_putmem(&mem[5], bytes, 2, T);
    shmem_putmem(&mem[6], bytes, 3, T); /* race: b */
  }
  /* Second accesses (race_free_shmem_put.c has a barrier here). */
  if (me == B) {
    shmem_int_put(&mem[0], &two[0], 1, T); /* race: a */
    shmem_int_p(&mem[2], 2, T); /* race: e */
    shmem_int_p(&mem[4], 2, T);
    shmem_putmem((char *)&mem[5] + 2, bytes, 2, T);
    shmem_char_p((char *)&mem[6] + 2, 'x', T); /* race: b */
  }
  shmem_barrier_all();

  /* One PE's own accesses. */
  if (me == A) {
    shmem_int_p(&mem[8], 1, T); /* race: c */
    shmem_int_p(&mem[8], 2, T); /* race: c */
    shmem_int_put_nbi(&mem[9], &one, 1, T); /* race: d */
    got[0] = shmem_int_g(&mem[9], T); /* race: d */
    shmem_int_put(&mem[10], &one, 1, T); /* race: h */
    shmem_int_get(&got[1], &mem[10], 1, T); /* race: h */
    for (int i = 0; i < 2; ++i) {
      shmem_int_put(&mem[11], &two[i], 1, T); /* race: f f */
    }
    /* Controls: completed by shmem_quiet. */
    shmem_int_put(&mem[12], &one, 1, T);
    shmem_quiet();
    shmem_int_put(&mem[12], &two[0], 1, T);
    shmem_int_put_nbi(&mem[13], &one, 1, T);
    shmem_quiet();
    shmem_int_get(&got[2], &mem[13], 1, T);
  }
  shmem_barrier_all();

  /* g: one line, two PEs. */
  if (me == A || me == B) {
    shmem_int_p(&mem[14], me, T); /* race: g g */
  }
  shmem_barrier_all();

  /* Control: the same int in consecutive barrier phases. */
  if (me == A) shmem_int_p(&mem[15], 1, T);
  shmem_barrier_all();
  if (me == B) shmem_int_p(&mem[15], 2, T);
  shmem_barrier_all();

  shmem_free(mem);
  shmem_finalize();
  return 0;
}
