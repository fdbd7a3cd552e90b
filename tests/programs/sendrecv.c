/* MPI_Sendrecv and MPI_Sendrecv_replace: rings in both directions (one with
 * a wildcard source, one with a message above the eager limit) and pairwise
 * exchanges over several pairings, where a rank without a partner exchanges
 * with itself. A Sendrecv's send and receive proceed together, so rings and
 * pairs need no ordering. */
#include <stdio.h>

#include "gt.h"

#define MSG 8
#define BIG 20000 /* 80 KB: above MPICH's eager threshold */
#define RING_ROUNDS 3

static const MPI_Comm W = MPI_COMM_WORLD;
static unsigned long sum;
static int big[BIG];

static void sendrecv(int dest, int stag, int src, int rtag) {
  int out[MSG], in[MSG];
  gt_msgid id = gt_stamp(out);
  gt_fill(out, MSG);
  MPI_Status st;
  MPI_Sendrecv(out, MSG, MPI_INT, dest, stag, in, MSG, MPI_INT, src, rtag, W, &st);
  gt_begin("MPI_Sendrecv");
  gt_op_send("std", id, dest, NULL);
  gt_op_recv(gt_read(in));
  gt_end();
  sum += gt_check(in, MSG);
}

static void sendrecv_replace(int *buf, int count, int dest, int stag, int src, int rtag) {
  gt_msgid id = gt_stamp(buf);
  gt_fill(buf, count);
  MPI_Status st;
  MPI_Sendrecv_replace(buf, count, MPI_INT, dest, stag, src, rtag, W, &st);
  gt_begin("MPI_Sendrecv_replace");
  gt_op_send("std", id, dest, NULL);
  gt_op_recv(gt_read(buf));
  gt_end();
  sum += gt_check(buf, count);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  gt_init();
  int me = gt_rank(), n = gt_size();
  int right = (me + 1) % n, left = (me - 1 + n) % n;
  int rep[MSG];

  for (int k = 0; k < RING_ROUNDS; ++k) {
    sendrecv(right, 1, left, 1);
    /* Only the right neighbour sends tag 2 here, whatever the source says. */
    sendrecv(left, 2, MPI_ANY_SOURCE, 2);
    sendrecv_replace(rep, MSG, right, 3, left, 3);
    sendrecv_replace(rep, MSG, left, 4, right, MPI_ANY_TAG);
  }
  sendrecv_replace(big, BIG, right, 5, left, 5);

  /* Pairings me^1, me^2, me^3: symmetric, and a rank whose partner does
   * not exist exchanges with itself. */
  for (int k = 1; k <= 3; ++k) {
    int partner = me ^ k;
    if (partner >= n) partner = me;
    sendrecv(partner, 10 + k, partner, MPI_ANY_TAG);
    sendrecv_replace(rep, MSG, partner, 20 + k, partner, 20 + k);
  }

  MPI_Barrier(W);
  gt_log_coll("MPI_Barrier", "all_to_all", W, -1);
  printf("sendrecv rank %d sum %lu\n", me, sum);
  gt_finalize();
  MPI_Finalize();
  return 0;
}
