/* Local loads and stores of static symmetric variables against OpenSHMEM
 * puts into them. Built with vcx-oshcc, a program tells the race analysis
 * its plain loads and stores of exposed memory (a PE's symmetric memory, and
 * the local buffers of its nbi calls until shmem_quiet); a local access is
 * complete at once. A put or p into T's memory is complete at the putting
 * PE's next shmem_quiet or barrier, and nothing at T follows it unless a
 * synchronisation orders it: T's local access of the same bytes races with
 * it, whether a load or a store.
 *
 * A puts into the static variables of T while T accesses them, nothing
 * between:
 *   a  A's shmem_int_p into a static int, T's store into it;
 *   b  A's two-element shmem_int_put into a static int array, T's load of
 *      its second element;
 *   c  the same put, T's store into its first element;
 *   d  A's shmem_putmem of two bytes into a static char array, T's store
 *      into the second of them;
 *   e  A's shmem_long_p and shmem_quiet (complete, but nothing orders it
 *      before T's access), T's load of the long.
 * Unmarked controls: T's load and store of the array elements and the
 * byte next to those A writes; A's store into its own copy of the static
 * int (each PE's symmetric variables are its own); T's store, the
 * shmem_barrier_all, A's p into the same int; B's p, the barrier, T's
 * load of the element; and T's loads and stores of every variable A wrote
 * after the barrier (which completes A's puts and orders them).
 *
 * race_free_shmem_local_put.c has a shmem_barrier_all between A's puts and
 * T's accesses. PEs: A = 0 and B = 2 (1 with two PEs) put into the static
 * variables of T = 1; other PEs only call the barriers. */
#include <shmem.h>
#include <stdio.h>

static int gi;
static int ga[4];
static char gc[4];
static long gl;
static int gs;

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (n < 2) {
    fprintf(stderr, "race_shmem_local_put: needs at least 2 PEs\n");
    shmem_global_exit(2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  shmem_barrier_all();

  int two[2] = {2, 3}, v = 0;
  long lv = 0;
  char bytes[2] = {'a', 'b'};

  /* A's puts (and B's). */
  if (me == A) {
    shmem_int_p(&gi, 1, T); /* race: a */
    shmem_int_put(&ga[0], two, 2, T); /* race: b c */
    shmem_putmem(&gc[0], bytes, 2, T); /* race: d */
    shmem_long_p(&gl, 1, T); /* race: e */
    shmem_quiet();
    gi = 5;
  }
  if (me == B) {
    shmem_int_p(&ga[3], 4, T);
  }
  /* T's accesses (race_free_shmem_local_put.c has a barrier here). */
  if (me == T) {
    gi = 7; /* race: a */
    v = ga[1]; /* race: b */
    ga[0] = 9; /* race: c */
    gc[1] = 'x'; /* race: d */
    lv = gl; /* race: e */
    v += ga[2];
    ga[2] = 1;
    gc[2] = 'y';
    gs = 1;
  }
  shmem_barrier_all();

  /* Controls: ordered by the barrier. */
  if (me == A) {
    shmem_int_p(&gs, 2, T);
  }
  if (me == T) {
    gi = 8;
    v += ga[0];
    ga[1] = 1;
    v += ga[3];
    gc[1] = 'z';
    gl = 2;
  }
  shmem_barrier_all();

  (void)v;
  (void)lv;
  shmem_finalize();
  return 0;
}
