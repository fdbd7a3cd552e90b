/* Locks taken with MPI_MODE_NOCHECK, the way OpenCoarrays' `event wait`
 * takes them (libcaf_mpi, PREFIX(event_wait)/PREFIX(event_post)):
 *
 *   waiter: MPI_Win_lock_all(MPI_MODE_NOCHECK, ev); poll its own counter
 *           with MPI_Win_sync (and MPI_Win_flush to itself, for progress)
 *           until enough posts arrived; MPI_Win_unlock_all;
 *           MPI_Win_lock(shared, self) + MPI_Fetch_and_op(-count) + unlock.
 *   poster: MPI_Win_lock(exclusive, waiter) + MPI_Accumulate(+1) + unlock.
 *
 * The posters' exclusive locks are requested while the waiter holds its
 * NOCHECK lock_all on the same target. MPI acquires no lock for a NOCHECK
 * holding (MPICH does not contact the target), so the posters get theirs
 * at once; vcx must not make them wait behind it either, or the waiter
 * polls for ever (it did: the tool ordered the NOCHECK lock_all as a
 * shared holding). Phases:
 *
 *   1. ROUNDS rounds, waiter = round % n, as above;
 *   2. what the assertion is meant for, exclusion by other means: between
 *      two barriers every rank takes a NOCHECK exclusive lock of the next
 *      rank (no two ranks lock the same target) and adds to its slot 1.
 *
 * A single NOCHECK lock that the waiter takes of itself instead of
 * lock_all is left out: MPICH 4.0.2 then keeps a poster's exclusive lock
 * waiting at 2 processes, without vcx too.
 *
 * NOCHECK locks and their unlocks are not clocked, so they are not
 * logged; the waiter's later shared lock of itself is, and the gt counter
 * gives the oracle its place after the posters' exclusive epochs. */
#include <stdio.h>
#include <unistd.h>

#include "gt.h"

#define ROUNDS 3

static const MPI_Comm W = MPI_COMM_WORLD;
static int me, n;
static int *base;
static MPI_Win ev;

static void check_rc(int rc, const char *what) {
  if (rc != MPI_SUCCESS) gt_fail("%s returned %d", what, rc);
}

static void barrier(void) {
  check_rc(MPI_Barrier(W), "MPI_Barrier");
  gt_log_coll("MPI_Barrier", "all_to_all", W, -1);
}

/* OpenCoarrays' event post: +1 on slot 0 of the waiter. */
static void post(int waiter) {
  int one = 1;
  gt_win_lock(MPI_LOCK_EXCLUSIVE, waiter, 0, ev);
  check_rc(MPI_Accumulate(&one, 1, MPI_INT, waiter, 0, 1, MPI_INT, MPI_SUM, ev),
           "MPI_Accumulate");
  gt_win_unlock(waiter, ev);
}

/* OpenCoarrays' event wait for `count` posts, inside the NOCHECK lock_all
 * epoch the caller opened and closes. */
static void poll(int count) {
  long polls = 0;
  for (;;) {
    check_rc(MPI_Win_sync(ev), "MPI_Win_sync");
    if (base[0] >= count) break;
    check_rc(MPI_Win_flush(me, ev), "MPI_Win_flush");
    if (++polls > 1000) usleep(50);
  }
}

/* Takes the posts waited for off the counter, as OpenCoarrays does. */
static void consume(int count) {
  int minus = -count, old = -1;
  gt_win_lock(MPI_LOCK_SHARED, me, 0, ev);
  check_rc(MPI_Fetch_and_op(&minus, &old, MPI_INT, me, 0, MPI_SUM, ev), "MPI_Fetch_and_op");
  gt_win_unlock(me, ev);
  if (old < count) gt_fail("counter %d, waited for %d", old, count);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  gt_init();
  me = gt_rank();
  n = gt_size();
  gt_win_allocate((MPI_Aint)(2 * sizeof(int)), sizeof(int), W, "ev", &base, &ev);
  base[0] = base[1] = 0;
  gt_win_fence(0, ev);

  unsigned long sum = 0;
  for (int round = 0; round < ROUNDS; ++round) {
    const int waiter = round % n;
    if (me == waiter) {
      check_rc(MPI_Win_lock_all(MPI_MODE_NOCHECK, ev), "MPI_Win_lock_all(NOCHECK)");
      poll(n - 1);
      check_rc(MPI_Win_unlock_all(ev), "MPI_Win_unlock_all");
      consume(n - 1);
      sum += (unsigned long)(n - 1);
    } else {
      post(waiter);
    }
  }

  /* 2. Exclusion by barriers: each target locked by one rank alone. */
  barrier();
  {
    const int next = (me + 1) % n;
    int v = 10 + me;
    check_rc(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, MPI_MODE_NOCHECK, ev),
             "MPI_Win_lock(NOCHECK)");
    check_rc(MPI_Accumulate(&v, 1, MPI_INT, next, 1, 1, MPI_INT, MPI_SUM, ev), "MPI_Accumulate");
    check_rc(MPI_Win_unlock(next, ev), "MPI_Win_unlock");
  }
  barrier();

  gt_win_fence(MPI_MODE_NOSUCCEED, ev);
  if (base[0] != 0) gt_fail("counter left at %d", base[0]);
  if (base[1] != 10 + (me + n - 1) % n) gt_fail("slot 1 holds %d", base[1]);
  gt_win_free(&ev);

  printf("rma_nocheck rank %d consumed %lu\n", me, sum);
  gt_finalize();
  MPI_Finalize();
  return 0;
}
