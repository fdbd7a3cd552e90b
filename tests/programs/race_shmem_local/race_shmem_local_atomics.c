/* Local loads and stores against OpenSHMEM atomics on the same memory.
 * Local accesses are never atomic: T's local load or store of the bytes a
 * remote atomic that modifies them (inc, add, fetch_add, compare_swap,
 * fetch_inc, ...) races with it unless a synchronisation orders them, and
 * so does T's local store of the bytes an atomic_fetch reads; T's local
 * load and an atomic_fetch are two reads. An atomic without a result is
 * complete at the calling PE's next shmem_quiet or barrier, a fetching one
 * when it returns; neither orders anything at T.
 *
 * A's atomics on T's memory while T accesses it, nothing between:
 *   a  A's shmem_int_atomic_inc, T's store into the int;
 *   b  A's shmem_int_atomic_add, T's load of the int;
 *   c  A's shmem_int_atomic_fetch_add, T's load of the int;
 *   d  A's shmem_long_atomic_compare_swap, T's store into the long;
 *   e  A's shmem_int_atomic_fetch (a read), T's store into the int;
 *   f  A's shmem_long_atomic_fetch_inc on a static long, T's load of it.
 * Unmarked controls: A's shmem_int_atomic_fetch, T's load of the int (two
 * reads); A's shmem_int_atomic_set on one int, T's store into the next;
 * T's store, the shmem_barrier_all, A's atomic_add on the int; and T's
 * loads and stores of every int and long A's atomics touched after the
 * barrier (which completes them and orders them).
 * (long, not int, for compare_swap: Open MPI 4.1.4's 4-byte
 * compare-and-swap writes 8 bytes into its result.)
 *
 * race_free_shmem_local_atomics.c has a shmem_barrier_all between A's
 * atomics and T's accesses. PEs: A = 0 makes atomics on the symmetric
 * memory of T = 1; other PEs only call the barriers. */
#include <shmem.h>
#include <stdio.h>

static long gctr;

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (n < 2) {
    fprintf(stderr, "race_shmem_local_atomics: needs at least 2 PEs\n");
    shmem_global_exit(2);
  }
  const int A = 0, T = 1;
  int *cnt = shmem_calloc(10, sizeof(int));
  long *lc = shmem_calloc(2, sizeof(long));
  /* Open MPI 4.1.4's shmem_calloc zeroes the block after its barrier: this
   * barrier keeps the zeroing from overwriting other PEs' first writes. */
  shmem_barrier_all();

  int r[4], v = 0;
  long lr[2], lv = 0;

  /* A's atomics. */
  if (me == A) {
    shmem_int_atomic_inc(&cnt[0], T); /* race: a */
    shmem_int_atomic_add(&cnt[1], 2, T); /* race: b */
    r[0] = shmem_int_atomic_fetch_add(&cnt[2], 1, T); /* race: c */
    lr[0] = shmem_long_atomic_compare_swap(&lc[0], 0, 1, T); /* race: d */
    r[1] = shmem_int_atomic_fetch(&cnt[3], T); /* race: e */
    lr[1] = shmem_long_atomic_fetch_inc(&gctr, T); /* race: f */
    r[2] = shmem_int_atomic_fetch(&cnt[4], T);
    shmem_int_atomic_set(&cnt[5], 1, T);
    shmem_int_atomic_inc(&cnt[7], T);
  }
  /* T's accesses (race_free_shmem_local_atomics.c has a barrier here). */
  if (me == T) {
    cnt[0] = 0; /* race: a */
    v = cnt[1]; /* race: b */
    v += cnt[2]; /* race: c */
    lc[0] = 5; /* race: d */
    cnt[3] = 1; /* race: e */
    lv = gctr; /* race: f */
    v += cnt[4];
    cnt[6] = 1;
    cnt[8] = 2;
  }
  shmem_barrier_all();

  /* Controls: ordered by the barrier. */
  if (me == A) {
    shmem_int_atomic_add(&cnt[8], 1, T);
  }
  if (me == T) {
    cnt[0] = 3;
    v += cnt[1];
    cnt[2] = 4;
    lv += lc[0];
    cnt[3] = 5;
    gctr = 6;
    cnt[5] = 7;
    v += cnt[7];
  }
  shmem_barrier_all();

  (void)r;
  (void)lr;
  (void)v;
  (void)lv;
  shmem_free(lc);
  shmem_free(cnt);
  shmem_finalize();
  return 0;
}
