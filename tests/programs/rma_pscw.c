/* General active-target synchronisation: MPI_Win_post / MPI_Win_start /
 * MPI_Win_complete / MPI_Win_wait, and MPI_Win_test loops, on two windows:
 * "pw" on world and "pr" on a communicator whose ranks reverse world's (so
 * window ranks and world ranks differ). Phases:
 *
 *   1. star in: rank 0 exposes to everybody else, who each access rank 0
 *      (groups of n-1 and of 1);
 *   2. star out on "pr": its rank 0 (world n-1) accesses all the others,
 *      who wait with MPI_Win_test loops;
 *   3. ring: every rank exposes to and accesses both neighbours at once,
 *      being origin and target in the same phase;
 *   4. self: every rank exposes to itself and its right neighbour and
 *      accesses itself and its left one;
 *   5. sequences: rank 0 exposes twice, first to {1, 2} then to {1}, so
 *      rank 1's second access matches rank 0's second exposure while rank
 *      2 only takes part in the first; epochs with empty groups (not
 *      clocked) lie between, and a message crosses between the epochs.
 *
 * Every rank posts before it starts and completes before it waits, so no
 * call waits for one that comes later. Test loops are bounded and fall
 * back to MPI_Win_wait. Targets check every value put into them after the
 * wait that ends the exposure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gt.h"

#define NW 64
#define SPINS 200
#define MSG 4

static const MPI_Comm W = MPI_COMM_WORLD;
static int me, n;
static unsigned long sum;

static void check_rc(int rc, const char *what) {
  if (rc != MPI_SUCCESS) gt_fail("%s returned %d", what, rc);
}

static void expect(int got, int want, const char *what) {
  if (got != want) gt_fail("%s: got %d, expected %d", what, got, want);
  sum += (unsigned long)got;
}

static int val(int src, int phase, int k) { return 1000 * phase + 10 * src + k; }

/* Group of the given window ranks (duplicates dropped, order kept). */
static MPI_Group group_of(MPI_Win win, const int *ranks, int k) {
  int uniq[8], u = 0;
  for (int i = 0; i < k; ++i) {
    int dup = 0;
    for (int j = 0; j < u; ++j) dup |= uniq[j] == ranks[i];
    if (!dup) uniq[u++] = ranks[i];
  }
  MPI_Group wg, g;
  MPI_Win_get_group(win, &wg);
  check_rc(MPI_Group_incl(wg, u, uniq, &g), "MPI_Group_incl");
  MPI_Group_free(&wg);
  return g;
}

/* Ends an exposure epoch with MPI_Win_test, at most SPINS times. */
static void test_then_wait(MPI_Win win) {
  for (int i = 0; i < SPINS; ++i)
    if (gt_win_test(win)) return;
  gt_win_wait(win);
}

static void put(int v, int target, int slot, MPI_Win win) {
  check_rc(MPI_Put(&v, 1, MPI_INT, target, slot, 1, MPI_INT, win), "MPI_Put");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  gt_init();
  me = gt_rank();
  n = gt_size();
  int right = (me + 1) % n, left = (me - 1 + n) % n;

  MPI_Comm rev;
  check_rc(MPI_Comm_split(W, 0, -me, &rev), "MPI_Comm_split");
  int rme;
  MPI_Comm_rank(rev, &rme);

  int *a, *r;
  MPI_Win pw, pr;
  gt_win_allocate(NW * sizeof(int), sizeof(int), W, "pw", &a, &pw);
  gt_win_allocate(NW * sizeof(int), sizeof(int), rev, "pr", &r, &pr);
  memset(a, 0, NW * sizeof(int));
  memset(r, 0, NW * sizeof(int));

  /* 1. Star in on pw. */
  if (me == 0) {
    int others[8];
    for (int i = 1; i < n; ++i) others[i - 1] = i;
    MPI_Group g = group_of(pw, others, n - 1);
    gt_win_post(g, 0, pw);
    gt_win_wait(pw);
    MPI_Group_free(&g);
    for (int i = 1; i < n; ++i) expect(a[i], val(i, 1, i), "star in");
  } else {
    int zero = 0;
    MPI_Group g = group_of(pw, &zero, 1);
    gt_win_start(g, 0, pw);
    put(val(me, 1, me), 0, me, pw);
    gt_win_complete(pw);
    MPI_Group_free(&g);
  }

  /* 2. Star out on pr: window rank 0 accesses window ranks 1..n-1. */
  if (rme == 0) {
    int others[8];
    for (int i = 1; i < n; ++i) others[i - 1] = i;
    MPI_Group g = group_of(pr, others, n - 1);
    gt_win_start(g, 0, pr);
    for (int i = 1; i < n; ++i) put(val(rme, 2, i), i, 8, pr);
    gt_win_complete(pr);
    MPI_Group_free(&g);
  } else {
    int zero = 0;
    MPI_Group g = group_of(pr, &zero, 1);
    gt_win_post(g, 0, pr);
    test_then_wait(pr);
    MPI_Group_free(&g);
    expect(r[8], val(0, 2, rme), "star out");
  }

  /* 3. Ring on pw: both neighbours are origins and targets (at N=2 the
   * same rank, once). Each origin writes its own slot. */
  {
    int nb[2] = {left, right};
    MPI_Group g = group_of(pw, nb, 2);
    gt_win_post(g, 0, pw);
    gt_win_start(g, 0, pw);
    put(val(me, 3, 0), left, 16 + me, pw);
    if (right != left) put(val(me, 3, 0), right, 16 + me, pw);
    gt_win_complete(pw);
    test_then_wait(pw);
    MPI_Group_free(&g);
    expect(a[16 + left], val(left, 3, 0), "ring from the left");
    expect(a[16 + right], val(right, 3, 0), "ring from the right");
  }

  /* 4. Self on pw: origins of t are t and t+1, so o's targets are o and
   * o-1. */
  {
    int ex[2] = {me, right}, ac[2] = {me, left};
    MPI_Group ge = group_of(pw, ex, 2), ga = group_of(pw, ac, 2);
    gt_win_post(ge, 0, pw);
    gt_win_start(ga, 0, pw);
    put(val(me, 4, 1), me, 24 + me, pw);
    put(val(me, 4, 2), left, 24 + me, pw);
    gt_win_complete(pw);
    gt_win_wait(pw);
    MPI_Group_free(&ge);
    MPI_Group_free(&ga);
    expect(a[24 + me], val(me, 4, 1), "put to self");
    if (right != me) expect(a[24 + right], val(right, 4, 2), "put from the right");
  }

  /* 5. Sequences on pw. Rank 0's exposures: {1, 2} (or {1} at N=2),
   * then {1}. Rank 1 accesses rank 0 twice, with an empty epoch between;
   * rank 2 once. Ranks from 3 on run only empty epochs. A message from
   * rank 1 reaches rank 0 between the two exposures. The barrier keeps
   * rank 0's first post from reaching rank 2 inside its start of phase 4:
   * MPICH's MPI_Win_start counts posts from any target and would wait
   * forever (docs/testing.md, "Random programs"). */
  check_rc(MPI_Barrier(W), "MPI_Barrier");
  gt_log_coll("MPI_Barrier", "all_to_all", W, -1);
  {
    int sb[MSG], rb[MSG];
    MPI_Group empty = MPI_GROUP_EMPTY;
    if (me == 0) {
      int first[2] = {1, 2}, second = 1;
      MPI_Group g1 = group_of(pw, first, n > 2 ? 2 : 1), g2 = group_of(pw, &second, 1);
      gt_win_post(g1, 0, pw);
      test_then_wait(pw);
      gt_win_post(empty, 0, pw);
      gt_win_wait(pw);
      sum += gt_recv(rb, MSG, 1, 5, W, NULL);
      gt_win_post(g2, 0, pw);
      gt_win_wait(pw);
      MPI_Group_free(&g1);
      MPI_Group_free(&g2);
      expect(a[33], val(1, 5, 1), "second access of rank 1");
      if (n > 2) expect(a[34], val(2, 5, 0), "access of rank 2");
      expect(a[35], val(1, 5, 0), "first access of rank 1");
    } else if (me == 1 || me == 2) {
      int zero = 0;
      MPI_Group g = group_of(pw, &zero, 1);
      gt_win_start(g, 0, pw);
      put(val(me, 5, 0), 0, me == 1 ? 35 : 34, pw);
      gt_win_complete(pw);
      if (me == 1) {
        gt_win_start(empty, 0, pw);
        gt_win_complete(pw);
        gt_send("std", sb, MSG, 0, 5, W);
        gt_win_start(g, 0, pw);
        put(val(me, 5, 1), 0, 33, pw);
        gt_win_complete(pw);
      }
      MPI_Group_free(&g);
    } else {
      gt_win_post(empty, 0, pw);
      gt_win_start(empty, 0, pw);
      gt_win_complete(pw);
      test_then_wait(pw);
    }
  }

  gt_win_free(&pr);
  gt_win_free(&pw);
  MPI_Comm_free(&rev);

  printf("rma_pscw rank %d sum %lu\n", me, sum);
  gt_finalize();
  MPI_Finalize();
  return 0;
}
