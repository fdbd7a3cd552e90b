/* Fence synchronisation: MPI_Win_fence and MPI_Win_free on four windows at
 * once — allocated on world, created over the program's own buffer on a
 * duplicate of world, allocated on a split communicator whose keys reverse
 * the rank order (one window per colour; a lone member at N=2), and
 * allocated as shared memory — with puts, gets and accumulates in the
 * epochs, fences of different windows interleaved, empty epochs, several
 * asserts, and point-to-point messages between epochs.
 *
 * Every value that lands in a window is checked after the fence that ends
 * its epoch, and gets only read locations nobody writes in that epoch, so
 * the output does not depend on timing. The window created over the
 * program's buffer only receives accumulates (see gt.h on MPICH and puts). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gt.h"

#define NW 64 /* ints per rank and window */
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

/* The value origin `src` writes in epoch `e` for slot `k`. */
static int val(int src, int e, int k) { return 1000 * (e + 1) + 10 * src + k; }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  gt_init();
  me = gt_rank();
  n = gt_size();
  int right = (me + 1) % n, left = (me - 1 + n) % n;
  int sb[MSG], rb[MSG];

  MPI_Comm dup, split;
  check_rc(MPI_Comm_dup(W, &dup), "MPI_Comm_dup");
  int color = me % 2;
  check_rc(MPI_Comm_split(W, color, -me, &split), "MPI_Comm_split");
  int srank, ssize;
  MPI_Comm_rank(split, &srank);
  MPI_Comm_size(split, &ssize);
  char sname[16];
  snprintf(sname, sizeof sname, "fs%d", color);

  int *a, *c, *h;
  int *b = calloc(NW, sizeof(int));
  if (!b) gt_fail("out of memory");
  MPI_Win wa, wb, wc, wh;
  gt_win_allocate(NW * sizeof(int), sizeof(int), W, "fa", &a, &wa);
  gt_win_create(b, NW * sizeof(int), sizeof(int), dup, "fb", &wb);
  gt_win_allocate(NW * sizeof(int), sizeof(int), split, sname, &c, &wc);
  gt_win_allocate_shared(NW * sizeof(int), sizeof(int), W, "fh", &h, &wh);
  memset(a, 0, NW * sizeof(int));
  memset(c, 0, NW * sizeof(int));
  memset(h, 0, NW * sizeof(int));
  /* Read by gets below; written before the first fence, never again. */
  a[NW - 1] = val(me, 9, NW - 1);
  h[NW - 1] = val(me, 9, NW - 1);

  /* Epoch 0 on fa: put to the right, get from the left, everybody adds to
   * rank 0. */
  gt_win_fence(MPI_MODE_NOPRECEDE, wa);
  {
    int v = val(me, 0, 0), got = -1, one = me + 1;
    check_rc(MPI_Put(&v, 1, MPI_INT, right, me, 1, MPI_INT, wa), "MPI_Put");
    check_rc(MPI_Get(&got, 1, MPI_INT, left, NW - 1, 1, MPI_INT, wa), "MPI_Get");
    check_rc(MPI_Accumulate(&one, 1, MPI_INT, 0, 32, 1, MPI_INT, MPI_SUM, wa),
             "MPI_Accumulate");
    gt_win_fence(0, wa);
    expect(got, val(left, 9, NW - 1), "get from the left in epoch 0");
  }
  expect(a[left], val(left, 0, 0), "put from the left in epoch 0");
  expect(a[32], me == 0 ? n * (n + 1) / 2 : 0, "accumulates of epoch 0");

  /* A message between epochs: rank 0 tells the last rank something, so
   * the next fences carry rank 0's past to everybody else twice over. */
  if (me == 0 && n > 1) gt_send("std", sb, MSG, n - 1, 1, W);
  if (me == n - 1 && n > 1) sum += gt_recv(rb, MSG, 0, 1, W, NULL);

  /* Interleaved epochs of fb and the split window: fb opens, the split
   * window runs a whole epoch (accumulates into its member 0) while fb's
   * accumulates are pending, then fb closes. */
  gt_win_fence(MPI_MODE_NOPRECEDE, wb);
  gt_win_fence(MPI_MODE_NOPRECEDE, wc);
  {
    int two = 2 * me + 1;
    int far = (me + 2) % n;
    check_rc(MPI_Accumulate(&two, 1, MPI_INT, far, me, 1, MPI_INT, MPI_SUM, wb),
             "MPI_Accumulate");
    int mine = 100 + me;
    check_rc(MPI_Accumulate(&mine, 1, MPI_INT, 0, 5, 1, MPI_INT, MPI_SUM, wc),
             "MPI_Accumulate");
    gt_win_fence(MPI_MODE_NOSTORE, wc);
    gt_win_fence(MPI_MODE_NOSTORE, wb);
  }
  {
    int from = (me - 2 + 2 * n) % n, want = 0;
    for (int r = 0; r < n; ++r) want += r % 2 == color ? 100 + r : 0;
    expect(b[from], 2 * from + 1, "accumulate into fb");
    expect(c[5], srank == 0 ? want : 0, "accumulates into the split window");
  }

  /* Three more epochs on fa, each put going one rank further; an empty
   * epoch on the split window in between. */
  for (int e = 1; e <= 3; ++e) {
    int t = (me + e) % n, from = (me - e % n + n) % n;
    int v = val(me, e, 48 + e);
    check_rc(MPI_Put(&v, 1, MPI_INT, t, 48 + e, 1, MPI_INT, wa), "MPI_Put");
    gt_win_fence(0, wa);
    expect(a[48 + e], val(from, e, 48 + e), "rotating put on fa");
    if (e == 2) gt_win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOPUT, wc);
  }

  /* Shared window: get from the last rank, put to the left. */
  gt_win_fence(MPI_MODE_NOPRECEDE, wh);
  {
    int v = val(me, 4, 7), got = -1;
    check_rc(MPI_Get(&got, 1, MPI_INT, n - 1, NW - 1, 1, MPI_INT, wh), "MPI_Get");
    check_rc(MPI_Put(&v, 1, MPI_INT, left, 7, 1, MPI_INT, wh), "MPI_Put");
    gt_win_fence(MPI_MODE_NOSUCCEED, wh);
    expect(got, val(n - 1, 9, NW - 1), "get on the shared window");
  }
  expect(h[7], val(right, 4, 7), "put on the shared window");

  /* Last fa epoch: every rank adds its rank to everybody's slot 40. */
  {
    for (int t = 0; t < n; ++t)
      check_rc(MPI_Accumulate(&me, 1, MPI_INT, t, 40, 1, MPI_INT, MPI_SUM, wa),
               "MPI_Accumulate");
    gt_win_fence(MPI_MODE_NOSUCCEED, wa);
  }
  expect(a[40], n * (n - 1) / 2, "accumulates of the last epoch");

  /* Frees in another order than the creations. */
  gt_win_free(&wc);
  gt_win_free(&wh);
  gt_win_free(&wa);
  gt_win_free(&wb);
  free(b);
  MPI_Comm_free(&split);
  MPI_Comm_free(&dup);

  printf("rma_fence rank %d sum %lu\n", me, sum);
  gt_finalize();
  MPI_Finalize();
  return 0;
}
