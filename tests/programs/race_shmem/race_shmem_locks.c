/* OpenSHMEM locks (shmem_set_lock, shmem_test_lock, shmem_clear_lock): a
 * release precedes the next acquisition of the same lock, and nothing
 * else. In each pattern A writes an int of T inside a critical region it
 * ends with shmem_quiet and shmem_clear_lock; B accesses the same int:
 *
 *   a  without taking any lock;
 *   b  holding another lock;
 *   c  after a shmem_test_lock that failed (it returned 1: A held the
 *      lock, which B learns through a flag; a failed test acquires
 *      nothing) and while A still holds the lock.
 * Unmarked controls (the same lock on both sides, whichever PE gets it
 * first): two puts; a put and a blocking get; A's put_nbi completed by
 * shmem_quiet inside its region; a lock B takes by polling
 * shmem_test_lock; three regions of A and three of B writing the same
 * int.
 *
 * Every access is completed (shmem_quiet, or a blocking get) before the
 * shmem_clear_lock that ends its region: whether shmem_clear_lock itself
 * completes the puts of the region is left out here.
 *
 * race_free_shmem_locks.c has B take the lock A takes (a, b), and in c,
 * after its failed test, signal A first and then take the lock, so that
 * its put follows A's region. Locks and flags are on the symmetric heap
 * (Open MPI completes remote operations on static symmetric memory only
 * while the target PE is inside a call that progresses). PEs: A = 0 and
 * B = 2 (1 with two PEs) access the symmetric heap of T = 1; other PEs
 * only call the barriers. */
#include <shmem.h>
#include <stdio.h>
#include <unistd.h>

#define SLOTS 16

/* Takes lock by polling shmem_test_lock; after many failed polls by
 * shmem_set_lock (either way an acquisition). */
static void poll_lock(long *lock) {
  for (int tries = 0; shmem_test_lock(lock) != 0; ++tries) {
    if (tries == 10000) {
      shmem_set_lock(lock);
      return;
    }
    usleep(100);
  }
}

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (n < 2) {
    fprintf(stderr, "race_shmem_locks: needs at least 2 PEs\n");
    shmem_global_exit(2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  int *mem = shmem_calloc(SLOTS, sizeof(int));
  long *lock1 = shmem_calloc(1, sizeof(long));
  long *lock2 = shmem_calloc(1, sizeof(long));
  long *flag = shmem_calloc(2, sizeof(long));
  /* Open MPI 4.1.4's shmem_calloc zeroes the block after its barrier: this
   * barrier keeps the zeroing from overwriting other PEs' first writes. */
  shmem_barrier_all();

  int one = 1, got[4];

  /* a */
  if (me == A) {
    shmem_set_lock(lock1);
    shmem_int_p(&mem[0], 1, T); /* race: a */
    shmem_quiet();
    shmem_clear_lock(lock1);
  }
  if (me == B) {
    shmem_int_p(&mem[0], 2, T); /* race: a */
    shmem_quiet();
  }
  shmem_barrier_all();

  /* b */
  if (me == A) {
    shmem_set_lock(lock1);
    shmem_int_put(&mem[1], &one, 1, T); /* race: b */
    shmem_quiet();
    shmem_clear_lock(lock1);
  }
  if (me == B) {
    shmem_set_lock(lock2);
    shmem_int_get(&got[0], &mem[1], 1, T); /* race: b */
    shmem_clear_lock(lock2);
  }
  shmem_barrier_all();

  /* c */
  if (me == A) {
    shmem_set_lock(lock1);
    shmem_long_p(&flag[0], 1, B);
    shmem_int_p(&mem[2], 1, T); /* race: c */
    shmem_quiet();
    shmem_long_wait_until(&flag[1], SHMEM_CMP_EQ, 1);
    shmem_clear_lock(lock1);
  }
  if (me == B) {
    shmem_long_wait_until(&flag[0], SHMEM_CMP_EQ, 1);
    if (shmem_test_lock(lock1) == 0) {
      fprintf(stderr, "race_shmem_locks: shmem_test_lock took a lock held by PE %d\n", A);
      shmem_global_exit(1);
    }
    shmem_int_p(&mem[2], 2, T); /* race: c */
    shmem_quiet();
    shmem_long_p(&flag[1], 1, A);
  }
  shmem_barrier_all();

  /* Controls: the same lock. */
  if (me == A || me == B) {
    shmem_set_lock(lock1);
    shmem_int_p(&mem[3], me, T);
    shmem_quiet();
    shmem_clear_lock(lock1);
  }
  shmem_barrier_all();
  if (me == A) {
    shmem_set_lock(lock1);
    shmem_int_put(&mem[4], &one, 1, T);
    shmem_quiet();
    shmem_clear_lock(lock1);
  }
  if (me == B) {
    shmem_set_lock(lock1);
    shmem_int_get(&got[1], &mem[4], 1, T);
    shmem_clear_lock(lock1);
  }
  shmem_barrier_all();
  if (me == A) {
    shmem_set_lock(lock1);
    shmem_int_put_nbi(&mem[5], &one, 1, T);
    shmem_quiet();
    shmem_clear_lock(lock1);
  }
  if (me == B) {
    poll_lock(lock1);
    shmem_int_p(&mem[5], 2, T);
    shmem_quiet();
    shmem_clear_lock(lock1);
  }
  shmem_barrier_all();
  for (int i = 0; i < 3; ++i) {
    if (me == A || me == B) {
      shmem_set_lock(lock1);
      shmem_int_p(&mem[6], me + i, T);
      shmem_quiet();
      shmem_clear_lock(lock1);
    }
  }
  shmem_barrier_all();

  shmem_free(flag);
  shmem_free(lock2);
  shmem_free(lock1);
  shmem_free(mem);
  shmem_finalize();
  return 0;
}
