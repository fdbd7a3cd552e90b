/* Race-free twin of race_shmem_local_atomics.c: a shmem_barrier_all
 * between A's atomics and T's local accesses completes the atomics and
 * orders them before T's loads and stores. The controls are those of
 * race_shmem_local_atomics.c. No races.
 *
 * (long, not int, for compare_swap: Open MPI 4.1.4's 4-byte
 * compare-and-swap writes 8 bytes into its result.) PEs: A = 0 makes
 * atomics on the symmetric memory of T = 1; other PEs only call the
 * barriers. */
#include <shmem.h>
#include <stdio.h>

static long gctr;

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (n < 2) {
    fprintf(stderr, "race_free_shmem_local_atomics: needs at least 2 PEs\n");
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
    shmem_int_atomic_inc(&cnt[0], T);
    shmem_int_atomic_add(&cnt[1], 2, T);
    r[0] = shmem_int_atomic_fetch_add(&cnt[2], 1, T);
    lr[0] = shmem_long_atomic_compare_swap(&lc[0], 0, 1, T);
    r[1] = shmem_int_atomic_fetch(&cnt[3], T);
    lr[1] = shmem_long_atomic_fetch_inc(&gctr, T);
    r[2] = shmem_int_atomic_fetch(&cnt[4], T);
    shmem_int_atomic_set(&cnt[5], 1, T);
    shmem_int_atomic_inc(&cnt[7], T);
  }
  /* The barrier race_shmem_local_atomics.c lacks. */
  shmem_barrier_all();
  /* T's accesses. */
  if (me == T) {
    cnt[0] = 0;
    v = cnt[1];
    v += cnt[2];
    lc[0] = 5;
    cnt[3] = 1;
    lv = gctr;
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
