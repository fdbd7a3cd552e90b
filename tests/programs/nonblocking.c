/* Non-blocking point-to-point: every send mode (Isend, Ibsend, Issend,
 * Irsend), every completion call (Wait, Waitall, Waitany, Waitsome, Test,
 * Testall, Testany, Testsome), wildcard Irecvs, and requests that stay
 * pending across a round and complete together with the next round's.
 *
 * Each round: post the neighbour receives (and, at rank 0, wildcard
 * receives), barrier (which makes the ready-mode sends legal), start the
 * sends, complete with this round's method. All receives are posted before
 * any send they can match starts, so nothing depends on buffering. */
#include <stdio.h>
#include <stdlib.h>

#include "gt.h"

#define MSG 8
#define ROUNDS 8
#define TAG_FROM_LEFT 1
#define TAG_FROM_RIGHT 2
#define TAG_WILD 3

static const MPI_Comm W = MPI_COMM_WORLD;
/* Buffers stay untouched until their request completes, possibly in the
 * next round, so each round has its own. */
static int nbuf[ROUNDS][4][MSG];
static int wbuf[ROUNDS][8][MSG];

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  gt_init();
  int me = gt_rank(), n = gt_size();
  int right = (me + 1) % n, left = (me - 1 + n) % n;
  static const char *modes[4] = {"std", "buffered", "sync", "ready"};

  int bsize = 1 << 20;
  void *bspace = malloc((size_t)bsize);
  if (!bspace) gt_fail("out of memory");
  MPI_Buffer_attach(bspace, bsize);

  unsigned long sum = 0;
  gt_reqs cur, wild, carry;
  gt_reqs_init(&carry);

  for (int r = 0; r < ROUNDS; ++r) {
    const char *mode = modes[r % 4];
    gt_method method = (gt_method)(r % GT_METHODS);
    /* Wildcard traffic of even rounds completes in the following round. */
    int defer = (r % 2 == 0) && r + 1 < ROUNDS;

    gt_reqs_init(&cur);
    gt_reqs_init(&wild);
    gt_reqs_move(&cur, &carry);

    gt_irecv(&cur, nbuf[r][0], MSG, left, TAG_FROM_LEFT, W);
    gt_irecv(&cur, nbuf[r][1], MSG, right, TAG_FROM_RIGHT, W);
    if (me == 0)
      for (int k = 1; k < n; ++k) gt_irecv(&wild, wbuf[r][k], MSG, MPI_ANY_SOURCE, TAG_WILD, W);

    MPI_Barrier(W);
    gt_log_coll("MPI_Barrier", "all_to_all", W, -1);

    gt_isend(&cur, mode, nbuf[r][2], MSG, right, TAG_FROM_LEFT, W);
    gt_isend(&cur, mode, nbuf[r][3], MSG, left, TAG_FROM_RIGHT, W);
    /* Never ready mode here: a wildcard receive of an earlier round may still
     * be the one this message matches. */
    if (me != 0) gt_isend(&wild, (r % 2) ? "sync" : "std", wbuf[r][0], MSG, 0, TAG_WILD, W);

    gt_reqs_move(defer ? &carry : &cur, &wild);
    gt_complete(&cur, method);
    sum += cur.digest;
  }
  if (gt_reqs_active(&carry)) gt_fail("requests left after the last round");

  MPI_Barrier(W);
  gt_log_coll("MPI_Barrier", "all_to_all", W, -1);
  MPI_Buffer_detach(&bspace, &bsize);
  free(bspace);

  printf("nonblocking rank %d sum %lu\n", me, sum);
  gt_finalize();
  MPI_Finalize();
  return 0;
}
