/* Race-free twin of race_shmem_local_wait.c: each access before a flag
 * write is complete before it (A's shmem_quiet before its flag write: a,
 * and b, where race_shmem_local_wait.c has shmem_fence; T's local store
 * before its flag write: d), and T loads the data after its wait (c), so
 * the PE that waited for the flag follows it. The controls are those of
 * race_shmem_local_wait.c. No races.
 *
 * Flags (longs) are separate from the data (ints) and each pattern has its
 * own; both are on the symmetric heap. PEs: A = 0 and T = 1; the data is at
 * T, the flags at T (and at A in d and its control); other PEs only call
 * the barriers. */
#include <shmem.h>
#include <stdio.h>

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (n < 2) {
    fprintf(stderr, "race_free_shmem_local_wait: needs at least 2 PEs\n");
    shmem_global_exit(2);
  }
  const int A = 0, T = 1;
  int *data = shmem_calloc(8, sizeof(int));
  long *flag = shmem_calloc(8, sizeof(long));
  /* Open MPI 4.1.4's shmem_calloc zeroes the block after its barrier: this
   * barrier keeps the zeroing from overwriting other PEs' first writes. */
  shmem_barrier_all();

  int one = 1, got[4], v = 0;

  /* Control: put, quiet, flag; wait, load. */
  if (me == A) {
    shmem_int_put(&data[0], &one, 1, T);
    shmem_quiet();
    shmem_long_p(&flag[0], 1, T);
  }
  if (me == T) {
    shmem_long_wait_until(&flag[0], SHMEM_CMP_EQ, 1);
    v += data[0];
  }
  shmem_barrier_all();

  /* a */
  if (me == A) {
    shmem_int_put(&data[1], &one, 1, T);
    shmem_quiet();
    shmem_long_p(&flag[1], 1, T);
  }
  if (me == T) {
    shmem_long_wait_until(&flag[1], SHMEM_CMP_EQ, 1);
    v += data[1];
  }
  shmem_barrier_all();

  /* b */
  if (me == A) {
    shmem_int_p(&data[2], 1, T);
    shmem_quiet();
    shmem_long_p(&flag[2], 1, T);
  }
  if (me == T) {
    shmem_long_wait_until(&flag[2], SHMEM_CMP_EQ, 1);
    data[2] = 5;
  }
  shmem_barrier_all();

  /* c */
  if (me == A) {
    shmem_int_put(&data[3], &one, 1, T);
    shmem_quiet();
    shmem_long_p(&flag[3], 1, T);
  }
  if (me == T) {
    shmem_long_wait_until(&flag[3], SHMEM_CMP_EQ, 1);
    v += data[3];
  }
  shmem_barrier_all();

  /* Control: T's store, its flag write; A's wait, get. */
  if (me == T) {
    data[4] = 7;
    shmem_long_p(&flag[4], 1, A);
  }
  if (me == A) {
    shmem_long_wait_until(&flag[4], SHMEM_CMP_EQ, 1);
    shmem_int_get(&got[0], &data[4], 1, T);
  }
  shmem_barrier_all();

  /* d */
  if (me == T) {
    data[5] = 7;
    shmem_long_p(&flag[5], 1, A);
  }
  if (me == A) {
    shmem_long_wait_until(&flag[5], SHMEM_CMP_EQ, 1);
    shmem_int_get(&got[1], &data[5], 1, T);
  }
  shmem_barrier_all();

  /* Control: put_nbi, quiet, atomic_set; wait (GE), load and store. */
  if (me == A) {
    shmem_int_put_nbi(&data[6], &one, 1, T);
    shmem_quiet();
    shmem_long_atomic_set(&flag[6], 1, T);
  }
  if (me == T) {
    shmem_long_wait_until(&flag[6], SHMEM_CMP_GE, 1);
    v += data[6];
    data[6] = 2;
  }
  shmem_barrier_all();

  (void)got;
  (void)v;
  shmem_free(flag);
  shmem_free(data);
  shmem_finalize();
  return 0;
}
