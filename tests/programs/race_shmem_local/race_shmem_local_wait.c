/* Local loads and stores ordered through a flag. A PE that returns from
 * shmem_long_wait_until on a flag follows the write that stored the value
 * it found (shmem_long_p, shmem_long_atomic_set), which was delivered then;
 * what the writer did before the flag write is ordered before the PE's
 * accesses after the wait if it was complete before the flag write (a put
 * by the writer's shmem_quiet, a local load or store at once), or
 * delivered before it (a put to the same PE followed by shmem_fence).
 *
 *   a  A's shmem_int_put into T's data, its p of T's flag, no shmem_quiet
 *      between; T waits for the flag and loads the data;
 *   c  A's put, shmem_quiet and p of T's flag; T loads the data before it
 *      waits;
 *   d  T's p of A's flag, then its store into the data; A waits for the
 *      flag and gets the data.
 * Unmarked controls: A's shmem_int_p into T's data, shmem_fence, its p of
 * T's flag, T's wait and store into the data (the fence delivers the data
 * before the flag); A's put, shmem_quiet, p of T's flag, T's wait and
 * load; T's store into the data, its p of A's flag, A's wait and get; A's
 * put_nbi, shmem_quiet, shmem_long_atomic_set of T's flag, T's wait
 * (SHMEM_CMP_GE) and its load and store.
 *
 * Flags (longs) are separate from the data (ints) and each pattern has its
 * own; both are on the symmetric heap. race_free_shmem_local_wait.c calls
 * shmem_quiet before the flag write (a), has T
 * load the data after its wait (c) and store into it before its flag write
 * (d). PEs: A = 0 and T = 1; the data is at T, the flags at T (and at A in
 * d and its control); other PEs only call the barriers. */
#include <shmem.h>
#include <stdio.h>

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (n < 2) {
    fprintf(stderr, "race_shmem_local_wait: needs at least 2 PEs\n");
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
    shmem_int_put(&data[1], &one, 1, T); /* race: a */
    shmem_long_p(&flag[1], 1, T);
  }
  if (me == T) {
    shmem_long_wait_until(&flag[1], SHMEM_CMP_EQ, 1);
    v += data[1]; /* race: a */
  }
  shmem_barrier_all();

  /* control: delivered before the flag */
  if (me == A) {
    shmem_int_p(&data[2], 1, T);
    shmem_fence();
    shmem_long_p(&flag[2], 1, T);
  }
  if (me == T) {
    shmem_long_wait_until(&flag[2], SHMEM_CMP_EQ, 1);
    data[2] = 5;
  }
  shmem_barrier_all();

  /* c */
  if (me == A) {
    shmem_int_put(&data[3], &one, 1, T); /* race: c */
    shmem_quiet();
    shmem_long_p(&flag[3], 1, T);
  }
  if (me == T) {
    v += data[3]; /* race: c */
    shmem_long_wait_until(&flag[3], SHMEM_CMP_EQ, 1);
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
    shmem_long_p(&flag[5], 1, A);
    data[5] = 7; /* race: d */
  }
  if (me == A) {
    shmem_long_wait_until(&flag[5], SHMEM_CMP_EQ, 1);
    shmem_int_get(&got[1], &data[5], 1, T); /* race: d */
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
