/* Race-free twin of race_shmem_flags.c: each access before a flag write
 * is complete before it (shmem_quiet before the flag write: a, b, d; the
 * flag written after the data and shmem_quiet: c), so a PE that waited for
 * the flag follows it. The controls are those of race_shmem_flags.c. No
 * races.
 *
 * Flags (longs) are separate from the data (ints) and each pattern has its
 * own; both are on the symmetric heap. PEs: A = 0 and B = 2 (1 with two
 * PEs); the data is at T = 1, the flags at B (and A in d); other PEs only
 * call the barriers. */
#include <shmem.h>
#include <stdio.h>
#include <unistd.h>

#define SLOTS 16

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (n < 2) {
    fprintf(stderr, "race_free_shmem_flags: needs at least 2 PEs\n");
    shmem_global_exit(2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  int *mem = shmem_calloc(SLOTS, sizeof(int));
  long *flag = shmem_calloc(SLOTS, sizeof(long));
  /* Open MPI 4.1.4's shmem_calloc zeroes the block after its barrier: this
   * barrier keeps the zeroing from overwriting other PEs' first writes. */
  shmem_barrier_all();

  int one = 1, two = 2, got[8];

  /* Control. */
  if (me == A) {
    shmem_int_put(&mem[0], &one, 1, T);
    shmem_quiet();
    shmem_long_p(&flag[0], 1, B);
  }
  if (me == B) {
    shmem_long_wait_until(&flag[0], SHMEM_CMP_EQ, 1);
    shmem_int_get(&got[0], &mem[0], 1, T);
  }
  shmem_barrier_all();

  /* a */
  if (me == A) {
    shmem_int_put(&mem[1], &one, 1, T);
    shmem_quiet();
    shmem_long_p(&flag[1], 1, B);
  }
  if (me == B) {
    shmem_long_wait_until(&flag[1], SHMEM_CMP_EQ, 1);
    shmem_int_get(&got[1], &mem[1], 1, T);
  }
  shmem_barrier_all();

  /* b */
  if (me == A) {
    shmem_int_put_nbi(&mem[2], &one, 1, T);
    shmem_quiet();
    shmem_long_atomic_set(&flag[2], 1, B);
  }
  if (me == B) {
    shmem_long_wait_until(&flag[2], SHMEM_CMP_EQ, 1);
    shmem_int_put(&mem[2], &two, 1, T);
  }
  shmem_barrier_all();

  /* c: the data first, then the flag. */
  if (me == A) {
    shmem_int_put(&mem[3], &one, 1, T);
    shmem_quiet();
    shmem_long_p(&flag[3], 1, B);
  }
  if (me == B) {
    shmem_long_wait_until(&flag[3], SHMEM_CMP_EQ, 1);
    shmem_int_get(&got[2], &mem[3], 1, T);
  }
  shmem_barrier_all();

  /* d */
  if (me == A) {
    shmem_int_put(&mem[4], &one, 1, T);
    shmem_quiet();
    shmem_long_p(&flag[4], 1, B);
    shmem_long_wait_until(&flag[5], SHMEM_CMP_EQ, 1);
    shmem_int_put(&mem[4], &two, 1, T);
  }
  if (me == B) {
    shmem_long_wait_until(&flag[4], SHMEM_CMP_EQ, 1);
    shmem_int_get_nbi(&got[3], &mem[4], 1, T);
    shmem_quiet();
    shmem_long_p(&flag[5], 1, A);
  }
  shmem_barrier_all();

  /* Control: an atomic swap as the flag write, polled with shmem_long_test. */
  if (me == A) {
    shmem_int_put(&mem[6], &one, 1, T);
    shmem_quiet();
    (void)shmem_long_atomic_swap(&flag[6], 1, B);
  }
  if (me == B) {
    for (int polls = 0; !shmem_long_test(&flag[6], SHMEM_CMP_EQ, 1); ++polls) {
      if (polls > 1000) usleep(50);
    }
    shmem_int_get(&got[4], &mem[6], 1, T);
  }
  shmem_barrier_all();

  /* Control: a counter step as the flag write. */
  if (me == A) {
    shmem_int_put(&mem[7], &one, 1, T);
    shmem_quiet();
    (void)shmem_long_atomic_fetch_add(&flag[7], 1, B);
  }
  if (me == B) {
    shmem_long_wait_until(&flag[7], SHMEM_CMP_GE, 1);
    shmem_int_put(&mem[7], &two, 1, T);
  }
  shmem_barrier_all();

  shmem_free(flag);
  shmem_free(mem);
  shmem_finalize();
  return 0;
}
