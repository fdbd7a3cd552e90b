/* Local loads and stores against OpenSHMEM gets of the same memory. A
 * blocking get (shmem_TYPE_get, _g, shmem_getmem) reads T's memory until
 * it returns, a shmem_TYPE_get_nbi until the getting PE's next shmem_quiet
 * or barrier; neither is ordered with T's local accesses unless a
 * synchronisation orders them. T's local store of the bytes a get reads
 * races with it; T's local load does not (two reads).
 *
 * A gets from T's memory while T accesses it, nothing between:
 *   a  A's two-element shmem_int_get from a shmem_calloc block, T's store
 *      into its second element;
 *   b  A's shmem_int_g of a static int, T's store into it;
 *   c  A's shmem_getmem of three bytes of a char block, T's store into the
 *      last of them;
 *   d  A's shmem_int_get_nbi and shmem_quiet (complete, but nothing orders
 *      it before T's access), T's store into the int.
 * Unmarked controls: T's loads of the first element of a, of the static
 * int of b and of the bytes of c (two reads); T's store into the byte next
 * to those of c; A's get, T's load of the int; B's get, T's load of the
 * int; T's store, the shmem_barrier_all, A's g of the int; and T's stores
 * into everything A read after the barrier.
 *
 * race_free_shmem_local_get.c has a shmem_barrier_all between A's gets and
 * T's accesses. PEs: A = 0 and B = 2 (1 with two PEs) get from the
 * symmetric memory of T = 1; other PEs only call the barriers. */
#include <shmem.h>
#include <stdio.h>

static int gy;

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (n < 2) {
    fprintf(stderr, "race_shmem_local_get: needs at least 2 PEs\n");
    shmem_global_exit(2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  int *mem = shmem_calloc(8, sizeof(int));
  char *cm = shmem_calloc(8, 1);
  /* Open MPI 4.1.4's shmem_calloc zeroes the block after its barrier: this
   * barrier keeps the zeroing from overwriting other PEs' first writes. */
  shmem_barrier_all();

  int got[8], v = 0;
  char buf[4], cv = 0;

  /* A's gets (and B's). */
  if (me == A) {
    shmem_int_get(got, &mem[0], 2, T); /* race: a */
    got[2] = shmem_int_g(&gy, T); /* race: b */
    shmem_getmem(buf, &cm[1], 3, T); /* race: c */
    shmem_int_get_nbi(&got[3], &mem[4], 1, T); /* race: d */
    shmem_quiet();
    shmem_int_get(&got[4], &mem[5], 1, T);
  }
  if (me == B) {
    shmem_int_get(&got[5], &mem[6], 1, T);
  }
  /* T's accesses (race_free_shmem_local_get.c has a barrier here). */
  if (me == T) {
    mem[1] = 5; /* race: a */
    v = mem[0];
    gy = 3; /* race: b */
    v += gy;
    cm[3] = 'x'; /* race: c */
    cv = cm[2];
    cm[4] = 'y';
    mem[4] = 1; /* race: d */
    v += mem[5];
    v += mem[6];
    mem[7] = 2;
  }
  shmem_barrier_all();

  /* Controls: ordered by the barrier. */
  if (me == A) {
    got[6] = shmem_int_g(&mem[7], T);
  }
  if (me == T) {
    mem[0] = 6;
    mem[1] = 7;
    gy = 4;
    cm[1] = 'z';
    mem[4] = 3;
    mem[5] = 4;
    mem[6] = 5;
  }
  shmem_barrier_all();

  (void)v;
  (void)cv;
  shmem_free(cm);
  shmem_free(mem);
  shmem_finalize();
  return 0;
}
