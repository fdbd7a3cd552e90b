/* Passive-target synchronisation: MPI_Win_lock / MPI_Win_unlock (exclusive
 * and shared) and MPI_Win_lock_all / MPI_Win_unlock_all on two windows,
 * "lw" on world and "lr" on a communicator whose ranks reverse world's.
 * The gt library counts the epochs of every lock (see gt.h), which gives
 * the oracle the real order in which each lock was held. Phases:
 *
 *   1. every rank takes the exclusive lock of every rank in turn, its own
 *      first;
 *   2. everybody contends for rank 0's lock, alternating exclusive and
 *      shared epochs (rank 0 locking itself);
 *   3. one rank at a time holds MPI_Win_lock_all while the others keep
 *      taking single locks of every rank, then all ranks hold
 *      MPI_Win_lock_all together;
 *   4. two locks held at once: rank 0's exclusively, then the last rank's
 *      shared, always in that order;
 *   5. on "lr", exclusive and shared locks of window ranks that are not
 *      the world ranks;
 *   6. MPI_PROC_NULL as the target of a lock, of every kind of data call
 *      and of an unlock: valid MPI that locks and touches nothing, so
 *      nothing is logged (none of it is clocked);
 *   7. a lock nobody else wants, taken again and again (vcx keeps it as a
 *      lease): each rank takes its right neighbour's lock exclusively,
 *      then shared, then everybody takes rank 0's lock, which its left
 *      neighbour may still hold as a lease.
 *
 * MPI_Win_lock may block until the lock is granted, so no epoch waits for
 * another rank's progress, and a process holding one lock waits for
 * another only in phase 4, where every process acquires in the same order
 * and nothing else runs (barriers around it). Within an epoch only atomic
 * accumulates, reads through MPI_Get_accumulate, and (exclusive epochs)
 * puts touch the window. A fence then makes the totals visible; they and
 * every lock counter are checked against counts the ranks sum up. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gt.h"

#define NW 64
#define ROUNDS 3

static const MPI_Comm W = MPI_COMM_WORLD;
static int me, n;
static unsigned long sum;
/* Exclusive epochs this rank ran per target, per window. */
static long long excl_w[8], excl_r[8];

static void check_rc(int rc, const char *what) {
  if (rc != MPI_SUCCESS) gt_fail("%s returned %d", what, rc);
}

static void expect(long long got, long long want, const char *what) {
  if (got != want) gt_fail("%s: got %lld, expected %lld", what, got, want);
  sum += (unsigned long)got;
}

static void barrier(void) {
  check_rc(MPI_Barrier(W), "MPI_Barrier");
  gt_log_coll("MPI_Barrier", "all_to_all", W, -1);
}

static void add(int v, int target, int slot, MPI_Win win) {
  check_rc(MPI_Accumulate(&v, 1, MPI_INT, target, slot, 1, MPI_INT, MPI_SUM, win),
           "MPI_Accumulate");
}

/* An atomic read; the value depends on timing, so it is only sanity
 * checked. */
static int read_atomic(int target, int slot, MPI_Win win) {
  int dummy = 0, v = -1;
  check_rc(MPI_Get_accumulate(&dummy, 1, MPI_INT, &v, 1, MPI_INT, target, slot, 1, MPI_INT,
                              MPI_NO_OP, win),
           "MPI_Get_accumulate");
  check_rc(MPI_Win_flush(target, win), "MPI_Win_flush");
  if (v < 0) gt_fail("read %d from rank %d slot %d", v, target, slot);
  return v;
}

static void lock(int type, int target, MPI_Win win, long long *tally) {
  gt_win_lock(type, target, 0, win);
  if (type == MPI_LOCK_EXCLUSIVE) ++tally[target];
}

/* Single-lock epochs of phases 1 and 3: exclusive ones add to slot 0 and
 * put into this rank's slot 8+me; shared ones add to slot 1. */
static void single_epoch(int type, int t, MPI_Win win, int stamp) {
  lock(type, t, win, excl_w);
  if (type == MPI_LOCK_EXCLUSIVE) {
    add(1, t, 0, win);
    check_rc(MPI_Put(&stamp, 1, MPI_INT, t, 8 + me, 1, MPI_INT, win), "MPI_Put");
  } else {
    add(1, t, 1, win);
    read_atomic(t, 0, win);
  }
  gt_win_unlock(t, win);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  gt_init();
  me = gt_rank();
  n = gt_size();
  if (n > 8) gt_fail("at most 8 ranks");

  MPI_Comm rev;
  check_rc(MPI_Comm_split(W, 0, -me, &rev), "MPI_Comm_split");
  int *a, *r;
  MPI_Win lw, lr;
  gt_win_allocate(NW * sizeof(int), sizeof(int), W, "lw", &a, &lw);
  gt_win_allocate(NW * sizeof(int), sizeof(int), rev, "lr", &r, &lr);
  memset(a, 0, NW * sizeof(int));
  memset(r, 0, NW * sizeof(int));
  /* Makes the zeroed data and lock counters visible before any lock. */
  gt_win_fence(MPI_MODE_NOSUCCEED, lw);
  gt_win_fence(MPI_MODE_NOSUCCEED, lr);

  /* 1. Exclusive lock of every rank, own first. */
  for (int k = 0; k < n; ++k) single_epoch(MPI_LOCK_EXCLUSIVE, (me + k) % n, lw, 100 + me);

  /* 2. Contention on rank 0: exclusive epochs add 1 to slot 16, shared
   * ones read it and add 1 to slot 17. */
  for (int i = 0; i < ROUNDS; ++i) {
    int excl = (me + i) % 2 == 0;
    lock(excl ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, 0, lw, excl_w);
    if (excl) {
      add(1, 0, 16, lw);
    } else {
      int seen = read_atomic(0, 16, lw);
      if (seen > n * ROUNDS) gt_fail("slot 16 of rank 0 reads %d", seen);
      add(1, 0, 17, lw);
    }
    gt_win_unlock(0, lw);
  }

  /* 3. MPI_Win_lock_all held by one rank at a time (rank 0, then the last
   * rank) while the others take single locks of every rank; the holder
   * adds to slot 2 everywhere. Then everybody holds it at once. */
  for (int holder = 0; holder < n; holder += n - 1) {
    barrier();
    if (me == holder) {
      gt_win_lock_all(0, lw);
      for (int t = 0; t < n; ++t) {
        add(1, t, 2, lw);
        read_atomic(t, 0, lw);
      }
      gt_win_unlock_all(lw);
    } else {
      for (int k = 1; k <= n; ++k) {
        int t = (me + k) % n, excl = (t + me) % 2 == 0;
        single_epoch(excl ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, t, lw, 200 + me);
      }
    }
    if (n == 1) break;
  }
  barrier();
  gt_win_lock_all(0, lw);
  for (int t = 0; t < n; ++t) add(1, t, 3, lw);
  gt_win_unlock_all(lw);
  barrier();

  /* 4. Rank 0's lock exclusively, then the last rank's shared (at N=2 and
   * up distinct), in that order everywhere; the second round takes rank
   * 0's shared and the last rank's exclusively. */
  for (int round = 0; round < 2; ++round) {
    int first = round == 0 ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED;
    int second = round == 0 ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE;
    lock(first, 0, lw, excl_w);
    lock(second, n - 1, lw, excl_w);
    add(1, 0, 20 + round, lw);
    add(1, n - 1, 22 + round, lw);
    gt_win_unlock(n - 1, lw);
    gt_win_unlock(0, lw);
  }
  barrier();

  /* 5. On lr: window rank 0 (world n-1) exclusively, window rank n-1
   * (world 0) shared, one at a time. */
  for (int i = 0; i < 2; ++i) {
    lock(MPI_LOCK_EXCLUSIVE, 0, lr, excl_r);
    add(me + 1, 0, 30, lr);
    gt_win_unlock(0, lr);
    lock(MPI_LOCK_SHARED, n - 1, lr, excl_r);
    add(1, n - 1, 31, lr);
    gt_win_unlock(n - 1, lr);
  }

  /* 6. MPI_PROC_NULL everywhere a target goes. */
  {
    int v = 1, got = -1, cmp = 0;
    MPI_Request req;
    check_rc(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, MPI_PROC_NULL, 0, lw), "MPI_Win_lock(PROC_NULL)");
    check_rc(MPI_Put(&v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, lw), "MPI_Put(PROC_NULL)");
    check_rc(MPI_Get(&got, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, lw), "MPI_Get(PROC_NULL)");
    check_rc(MPI_Accumulate(&v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, MPI_SUM, lw),
             "MPI_Accumulate(PROC_NULL)");
    check_rc(MPI_Fetch_and_op(&v, &got, MPI_INT, MPI_PROC_NULL, 0, MPI_SUM, lw),
             "MPI_Fetch_and_op(PROC_NULL)");
    check_rc(MPI_Compare_and_swap(&v, &cmp, &got, MPI_INT, MPI_PROC_NULL, 0, lw),
             "MPI_Compare_and_swap(PROC_NULL)");
    check_rc(MPI_Rput(&v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, lw, &req), "MPI_Rput");
    check_rc(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait(MPI_Rput)");
    check_rc(MPI_Win_flush(MPI_PROC_NULL, lw), "MPI_Win_flush(PROC_NULL)");
    check_rc(MPI_Win_unlock(MPI_PROC_NULL, lw), "MPI_Win_unlock(PROC_NULL)");
    check_rc(MPI_Win_lock(MPI_LOCK_SHARED, MPI_PROC_NULL, 0, lr), "MPI_Win_lock(PROC_NULL)");
    check_rc(MPI_Win_unlock(MPI_PROC_NULL, lr), "MPI_Win_unlock(PROC_NULL)");
  }

  /* 7. Uncontended re-acquisitions, then a change of kind and contention. */
  {
    const int right = (me + 1) % n;
    for (int i = 0; i < ROUNDS; ++i) {
      lock(MPI_LOCK_EXCLUSIVE, right, lw, excl_w);
      add(1, right, 40, lw);
      gt_win_unlock(right, lw);
    }
    for (int i = 0; i < 2; ++i) {
      lock(MPI_LOCK_SHARED, right, lw, excl_w);
      add(1, right, 41, lw);
      read_atomic(right, 40, lw);
      gt_win_unlock(right, lw);
    }
    for (int i = 0; i < 2; ++i) {
      lock(MPI_LOCK_EXCLUSIVE, 0, lw, excl_w);
      add(1, 0, 42, lw);
      gt_win_unlock(0, lw);
    }
  }

  /* Exclusive epochs per target of both windows, summed over the ranks. */
  long long mine[16], all[16];
  for (int t = 0; t < 8; ++t) {
    mine[t] = excl_w[t];
    mine[8 + t] = excl_r[t];
  }
  check_rc(MPI_Allreduce(mine, all, 16, MPI_LONG_LONG, MPI_SUM, W), "MPI_Allreduce");
  gt_log_coll("MPI_Allreduce", "all_to_all", W, -1);

  gt_win_fence(MPI_MODE_NOSUCCEED, lw);
  gt_win_fence(MPI_MODE_NOSUCCEED, lr);
  int rme;
  MPI_Comm_rank(rev, &rme);
  expect(gt_win_counter(lw), all[me], "exclusive epochs on my lock of lw");
  expect(gt_win_counter(lr), all[8 + rme], "exclusive epochs on my lock of lr");
  /* What landed here: phase 2 epochs (rank 0 only), and per phase-3
   * round each non-holder q's epoch on this rank, exclusive when me + q is
   * even; exclusive epochs of phases 1 and 3 add to slot 0 and leave q's
   * stamp in slot 8+q (phase 3 comes later, so its stamp wins). */
  long long p2_excl = 0, p2_shared = 0;
  for (int q = 0; q < n; ++q)
    for (int i = 0; i < ROUNDS; ++i) *((q + i) % 2 == 0 ? &p2_excl : &p2_shared) += 1;
  long long p3_excl = 0, p3_shared = 0, rounds = 0;
  int stamp[8];
  for (int q = 0; q < n; ++q) stamp[q] = 100 + q;
  for (int holder = 0; holder < n; holder += n - 1) {
    ++rounds;
    for (int q = 0; q < n; ++q) {
      if (q == holder) continue;
      if ((me + q) % 2 == 0) {
        ++p3_excl;
        stamp[q] = 200 + q;
      } else {
        ++p3_shared;
      }
    }
    if (n == 1) break;
  }
  expect(a[0], n + p3_excl, "exclusive adds to slot 0");
  expect(a[1], p3_shared, "shared adds to slot 1");
  expect(a[2], rounds, "lock_all holders' adds to slot 2");
  expect(a[3], n, "everybody's lock_all adds to slot 3");
  for (int q = 0; q < n; ++q) expect(a[8 + q], stamp[q], "stamp of the last exclusive epoch");
  expect(a[16], me == 0 ? p2_excl : 0, "phase 2 exclusive adds");
  expect(a[17], me == 0 ? p2_shared : 0, "phase 2 shared adds");
  expect(a[20] + a[21], me == 0 ? 2 * n : 0, "phase 4 adds to rank 0");
  expect(a[22] + a[23], me == n - 1 ? 2 * n : 0, "phase 4 adds to the last rank");
  expect(a[40], ROUNDS, "phase 7 exclusive adds by the left neighbour");
  expect(a[41], 2, "phase 7 shared adds by the left neighbour");
  expect(a[42], me == 0 ? 2 * n : 0, "phase 7 adds to rank 0");
  expect(r[30], rme == 0 ? n * (n + 1) : 0, "lr exclusive adds");
  expect(r[31], rme == n - 1 ? 2 * n : 0, "lr shared adds");

  gt_win_free(&lr);
  gt_win_free(&lw);
  MPI_Comm_free(&rev);

  printf("rma_locks rank %d sum %lu\n", me, sum);
  gt_finalize();
  MPI_Finalize();
  return 0;
}
