/* The "crooked barrier" (DAMPI's paper, Fig. 1):
 *
 *   P0: Isend(to P1)       Barrier   Wait
 *   P1: Irecv(from *)      Barrier   Recv(from *)   Wait
 *   P2: Barrier            Isend(to P1)             Wait
 *
 * P1's Irecv may be matched by P2's message although P2 sends after the
 * barrier. Ranks beyond P2 only join the barrier. With two ranks, rank 0
 * sends both messages (one before, one after the barrier), which keeps the
 * shape of the pattern. Repeated a few times; the ground truth records which
 * message each receive got. */
#include <stdio.h>

#include "gt.h"

#define MSG 8
#define ITERS 3
#define TAG 22

static const MPI_Comm W = MPI_COMM_WORLD;

static void barrier(void) {
  MPI_Barrier(W);
  gt_log_coll("MPI_Barrier", "all_to_all", W, -1);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  gt_init();
  int me = gt_rank(), n = gt_size();
  int sb[2][MSG], rb[2][MSG];
  unsigned long sum = 0;

  for (int it = 0; it < ITERS; ++it) {
    gt_reqs rq;
    gt_reqs_init(&rq);
    if (me == 1) {
      gt_irecv(&rq, rb[0], MSG, MPI_ANY_SOURCE, TAG, W);
      barrier();
      sum += gt_recv(rb[1], MSG, MPI_ANY_SOURCE, TAG, W, NULL);
      gt_complete(&rq, GT_WAIT_EACH);
      sum += rq.digest;
    } else if (me == 0) {
      gt_isend(&rq, "std", sb[0], MSG, 1, TAG, W);
      barrier();
      if (n == 2) gt_isend(&rq, "std", sb[1], MSG, 1, TAG, W);
      gt_complete(&rq, n == 2 ? GT_WAITALL : GT_WAIT_EACH);
    } else if (me == 2) {
      barrier();
      gt_isend(&rq, "std", sb[0], MSG, 1, TAG, W);
      gt_complete(&rq, GT_WAIT_EACH);
    } else {
      barrier();
    }
  }

  barrier();
  printf("crooked_barrier rank %d sum %lu\n", me, sum);
  gt_finalize();
  MPI_Finalize();
  return 0;
}
