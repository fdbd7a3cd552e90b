/* A long stream of point-to-point traffic in many rounds, so that the tool
 * processes exchange thousands of messages and their transport reuses its
 * buffers many times over. Each round every rank pre-posts two receives
 * (one from its left neighbour, one with MPI_ANY_SOURCE), then sends to its
 * right neighbour (every fifth round synchronously, so the receiver's tool
 * answers) and to the rank two places on (itself at N = 2); every 100 rounds
 * all ranks meet in an MPI_Allreduce.
 *
 * Rounds come from argv[1] (default 1000). Deadlock-free without MPI
 * buffering: every receive is posted before any send of its round. */
#include <stdio.h>
#include <stdlib.h>

#include "gt.h"

#define MSG 8

static const MPI_Comm W = MPI_COMM_WORLD;

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  gt_init();
  const int me = gt_rank(), n = gt_size();
  const int rounds = argc > 1 ? atoi(argv[1]) : 1000;
  if (rounds < 1) gt_fail("rounds must be positive, got '%s'", argv[1]);
  const int right = (me + 1) % n, left = (me - 1 + n) % n;
  const int far = (me + 2) % n;
  int sb[2][MSG], rb[2][MSG];
  unsigned long sum = 0;

  for (int r = 0; r < rounds; ++r) {
    gt_reqs rq;
    gt_reqs_init(&rq);
    /* One sender per tag and round, so the wildcard always matches the
     * message of this round (later ones cannot overtake it). */
    gt_irecv(&rq, rb[0], MSG, left, 1, W);
    gt_irecv(&rq, rb[1], MSG, MPI_ANY_SOURCE, 2, W);
    gt_isend(&rq, r % 5 == 0 ? "sync" : "std", sb[0], MSG, right, 1, W);
    gt_isend(&rq, "std", sb[1], MSG, far, 2, W);
    gt_complete(&rq, r % 2 ? GT_WAITALL : GT_WAITANY);
    sum += rq.digest;
    if (r % 100 == 99) {
      unsigned long total = 0;
      MPI_Allreduce(&sum, &total, 1, MPI_UNSIGNED_LONG, MPI_SUM, W);
      gt_log_coll("MPI_Allreduce", "all_to_all", W, -1);
    }
  }

  printf("stream rank %d rounds %d sum %lu\n", me, rounds, sum);
  gt_finalize();
  MPI_Finalize();
  return 0;
}
