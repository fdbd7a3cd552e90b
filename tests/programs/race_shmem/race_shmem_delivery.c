/* Delivery of OpenSHMEM writes before their completion. A put, p or
 * non-fetching atomic of A into T's memory lasts until A completes it
 * (shmem_quiet, a barrier) or until it is known delivered: A's
 * shmem_fence orders A's writes to T before the fence before its writes to
 * T after it (writes only, not gets); T's return from
 * shmem_long_wait_until on a flag of its own memory shows the write that
 * set the flag delivered, and with it every write of A to T before a
 * shmem_fence that precedes the flag write. What T does after the wait,
 * and what a PE does after synchronising with T after it, follows them.
 *
 *   a  A's shmem_int_p of an int at T, then a second p of the same int
 *      without shmem_fence between (the delivery order is not
 *      guaranteed);
 *   b  A's shmem_int_put of data at T, its shmem_long_p of T's flag, no
 *      fence between; T waits for the flag and puts into the data itself
 *      (the flag's delivery says nothing of the data's);
 *   c  A's p of T's flag (1), T's p of A's ack flag before T waits for its
 *      flag, A's wait for the ack and second p of T's flag (2): the ack
 *      carries nothing of the first p;
 *   d  A's shmem_int_put of an int at T, shmem_fence, A's shmem_int_get of
 *      the same int (the fence orders writes only);
 *   e  A's put of data at T, its p of T's flag, no fence between; T waits
 *      for the flag and p's A's ack flag; A waits for the ack and gets the
 *      data;
 *   f  A's p of T's flag while T polls the flag with shmem_long_g (a g is
 *      no synchronisation);
 *   g  A's shmem_int_get_nbi of an int at T, shmem_fence, A's shmem_int_put
 *      of the same int (the fence orders puts and non-fetching atomics,
 *      not non-blocking gets);
 *   h  A's shmem_int_get_nbi of an int at T, shmem_fence, its p of T's
 *      flag; T waits for the flag and puts into the int.
 * Unmarked controls: A's put of two ints at T, shmem_fence, its
 * shmem_int_atomic_add to one of them; A's shmem_int_put_nbi of two ints,
 * shmem_fence, shmem_long_atomic_set of T's flag, T's wait and its put
 * into both ints; the same with shmem_quiet instead of the fence; with 3
 * or more PEs only: A's put of data at T, shmem_fence, its p of T's flag,
 * T's wait and p of B's flag, B's wait and get of the data; A's p of T's
 * flag (1), T's wait and p of B's flag, B's wait and p of T's flag (2).
 *
 * race_free_shmem_delivery.c calls shmem_fence between A's two p's (a) and
 * between the data put and the flag p (b, e), lets T wait for its flag
 * before it writes the ack (c), calls shmem_quiet instead of the fence (d)
 * and lets T wait for its flag before it polls it (f); A calls shmem_quiet
 * instead of the fence after its get_nbi (g, h).
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
    fprintf(stderr, "race_shmem_delivery: needs at least 2 PEs\n");
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

  /* a */
  if (me == A) {
    shmem_int_p(&mem[0], 1, T); /* race: a */
    shmem_int_p(&mem[0], 2, T); /* race: a */
  }
  shmem_barrier_all();

  /* b */
  if (me == A) {
    shmem_int_put(&mem[1], &one, 1, T); /* race: b */
    shmem_long_p(&flag[0], 1, T);
  }
  if (me == T) {
    shmem_long_wait_until(&flag[0], SHMEM_CMP_EQ, 1);
    shmem_int_put(&mem[1], &two, 1, T); /* race: b */
  }
  shmem_barrier_all();

  /* c */
  if (me == A) {
    shmem_long_p(&flag[1], 1, T); /* race: c */
    shmem_long_wait_until(&flag[2], SHMEM_CMP_EQ, 1);
    shmem_long_p(&flag[1], 2, T); /* race: c */
  }
  if (me == T) {
    shmem_long_p(&flag[2], 1, A);
    shmem_long_wait_until(&flag[1], SHMEM_CMP_GE, 1);
  }
  shmem_barrier_all();

  /* d */
  if (me == A) {
    shmem_int_put(&mem[2], &one, 1, T); /* race: d */
    shmem_fence();
    shmem_int_get(&got[0], &mem[2], 1, T); /* race: d */
  }
  shmem_barrier_all();

  /* e */
  if (me == A) {
    shmem_int_put(&mem[3], &one, 1, T); /* race: e */
    shmem_long_p(&flag[3], 1, T);
    shmem_long_wait_until(&flag[4], SHMEM_CMP_EQ, 1);
    shmem_int_get(&got[1], &mem[3], 1, T); /* race: e */
  }
  if (me == T) {
    shmem_long_wait_until(&flag[3], SHMEM_CMP_EQ, 1);
    shmem_long_p(&flag[4], 1, A);
  }
  shmem_barrier_all();

  /* f */
  if (me == A) shmem_long_p(&flag[5], 1, T); /* race: f */
  if (me == T) {
    for (int polls = 0; seen != 1; ++polls) {
      if (polls > 100) usleep(100);
      seen = shmem_long_g(&flag[5], T); /* race: f */
    }
  }
  shmem_barrier_all();

  /* g */
  if (me == A) {
    shmem_int_get_nbi(&got[3], &mem[12], 1, T); /* race: g */
    shmem_fence();
    shmem_int_put(&mem[12], &one, 1, T); /* race: g */
  }
  shmem_quiet();
  shmem_barrier_all();

  /* h */
  if (me == A) {
    shmem_int_get_nbi(&got[3], &mem[13], 1, T); /* race: h */
    shmem_fence();
    shmem_long_p(&flag[12], 1, T);
  }
  if (me == T) {
    shmem_long_wait_until(&flag[12], SHMEM_CMP_EQ, 1);
    shmem_int_put(&mem[13], &two, 1, T); /* race: h */
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
