/* Race-free twin of race_shmem_delivery.c: A calls shmem_fence between
 * its two p's of the int (a) and between its put of the data and its p of
 * T's flag (b, e), so that T's wait shows the data delivered; T waits for
 * its flag before it writes A's ack flag (c); A calls shmem_quiet instead
 * of shmem_fence before its get (d); T waits for its flag before it polls
 * it with shmem_long_g (f); A calls shmem_quiet instead of shmem_fence
 * after its shmem_int_get_nbi (g, h). The controls are those of
 * race_shmem_delivery.c. No races.
 *
 * Data (ints) and flags (longs) are on the symmetric heap, each case with
 * its own. PEs: A = 0 writes into T = 1 (the flags A writes are at T, the
 * acks T writes at A); B = 2 takes part in the two controls that need
 * 3 PEs; other PEs only call the barriers. */
#include <shmem.h>
#include <stdio.h>
#include <unistd.h>

#define SLOTS 16

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (n < 2) {
    fprintf(stderr, "race_free_shmem_delivery: needs at least 2 PEs\n");
    shmem_global_exit(2);
  }
  const int A = 0, T = 1, B = 2;
  int *mem = shmem_calloc(SLOTS, sizeof(int));
  long *flag = shmem_calloc(SLOTS, sizeof(long));
  /* Open MPI 4.1.4's shmem_calloc zeroes the block after its barrier: this
   * barrier keeps the zeroing from overwriting other PEs' first writes. */
  shmem_barrier_all();

  int one = 1, two = 2, pair[2] = {1, 2}, got[4];
  long seen = 0;

  /* a: a fence between the two p's. */
  if (me == A) {
    shmem_int_p(&mem[0], 1, T);
    shmem_fence();
    shmem_int_p(&mem[0], 2, T);
  }
  shmem_barrier_all();

  /* b: a fence between the data and the flag. */
  if (me == A) {
    shmem_int_put(&mem[1], &one, 1, T);
    shmem_fence();
    shmem_long_p(&flag[0], 1, T);
  }
  if (me == T) {
    shmem_long_wait_until(&flag[0], SHMEM_CMP_EQ, 1);
    shmem_int_put(&mem[1], &two, 1, T);
  }
  shmem_barrier_all();

  /* c: T waits for its flag before it writes the ack. */
  if (me == A) {
    shmem_long_p(&flag[1], 1, T);
    shmem_long_wait_until(&flag[2], SHMEM_CMP_EQ, 1);
    shmem_long_p(&flag[1], 2, T);
  }
  if (me == T) {
    shmem_long_wait_until(&flag[1], SHMEM_CMP_GE, 1);
    shmem_long_p(&flag[2], 1, A);
  }
  shmem_barrier_all();

  /* d: shmem_quiet instead of the fence. */
  if (me == A) {
    shmem_int_put(&mem[2], &one, 1, T);
    shmem_quiet();
    shmem_int_get(&got[0], &mem[2], 1, T);
  }
  shmem_barrier_all();

  /* e: a fence between the data and the flag. */
  if (me == A) {
    shmem_int_put(&mem[3], &one, 1, T);
    shmem_fence();
    shmem_long_p(&flag[3], 1, T);
    shmem_long_wait_until(&flag[4], SHMEM_CMP_EQ, 1);
    shmem_int_get(&got[1], &mem[3], 1, T);
  }
  if (me == T) {
    shmem_long_wait_until(&flag[3], SHMEM_CMP_EQ, 1);
    shmem_long_p(&flag[4], 1, A);
  }
  shmem_barrier_all();

  /* f: T waits for its flag before it polls it. */
  if (me == A) shmem_long_p(&flag[5], 1, T);
  if (me == T) {
    shmem_long_wait_until(&flag[5], SHMEM_CMP_EQ, 1);
    for (int polls = 0; seen != 1; ++polls) {
      if (polls > 100) usleep(100);
      seen = shmem_long_g(&flag[5], T);
    }
  }
  shmem_barrier_all();

  /* g: a quiet completes the get_nbi before the put. */
  if (me == A) {
    shmem_int_get_nbi(&got[3], &mem[12], 1, T);
    shmem_quiet();
    shmem_int_put(&mem[12], &one, 1, T);
  }
  shmem_quiet();
  shmem_barrier_all();

  /* h: a quiet completes the get_nbi before the flag write. */
  if (me == A) {
    shmem_int_get_nbi(&got[3], &mem[13], 1, T);
    shmem_quiet();
    shmem_long_p(&flag[12], 1, T);
  }
  if (me == T) {
    shmem_long_wait_until(&flag[12], SHMEM_CMP_EQ, 1);
    shmem_int_put(&mem[13], &two, 1, T);
  }
  shmem_quiet();
  shmem_barrier_all();

  /* Control: the fence orders A's atomic after its put. */
  if (me == A) {
    shmem_int_put(&mem[4], pair, 2, T);
    shmem_fence();
    shmem_int_atomic_add(&mem[5], 1, T);
  }
  shmem_barrier_all();

  /* Control: put_nbi, fence, atomic set of the flag; T waits, puts. */
  if (me == A) {
    shmem_int_put_nbi(&mem[6], pair, 2, T);
    shmem_fence();
    shmem_long_atomic_set(&flag[6], 1, T);
  }
  if (me == T) {
    shmem_long_wait_until(&flag[6], SHMEM_CMP_EQ, 1);
    shmem_int_put(&mem[6], pair, 2, T);
  }
  shmem_barrier_all();

  /* Control: shmem_quiet instead of the fence. */
  if (me == A) {
    shmem_int_put_nbi(&mem[8], pair, 2, T);
    shmem_quiet();
    shmem_long_atomic_set(&flag[7], 1, T);
  }
  if (me == T) {
    shmem_long_wait_until(&flag[7], SHMEM_CMP_EQ, 1);
    shmem_int_put(&mem[8], pair, 2, T);
  }
  shmem_barrier_all();

  if (n > 2) {
    /* Control: delivered at T's wait, passed on to B by T's flag. */
    if (me == A) {
      shmem_int_put(&mem[10], &one, 1, T);
      shmem_fence();
      shmem_long_p(&flag[8], 1, T);
    }
    if (me == T) {
      shmem_long_wait_until(&flag[8], SHMEM_CMP_EQ, 1);
      shmem_long_p(&flag[9], 1, B);
    }
    if (me == B) {
      shmem_long_wait_until(&flag[9], SHMEM_CMP_EQ, 1);
      shmem_int_get(&got[2], &mem[10], 1, T);
    }
    shmem_barrier_all();

    /* Control: T's flag written by A, then by B after the chain. */
    if (me == A) shmem_long_p(&flag[10], 1, T);
    if (me == T) {
      shmem_long_wait_until(&flag[10], SHMEM_CMP_EQ, 1);
      shmem_long_p(&flag[11], 1, B);
    }
    if (me == B) {
      shmem_long_wait_until(&flag[11], SHMEM_CMP_EQ, 1);
      shmem_long_p(&flag[10], 2, T);
    }
    shmem_barrier_all();
  }

  shmem_free(flag);
  shmem_free(mem);
  shmem_finalize();
  return 0;
}
