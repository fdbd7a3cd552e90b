/* MPI_Sendrecv and MPI_Sendrecv_replace: rings in both directions (one with
 * a wildcard source, one with a message above the eager limit) and pairwise
 * exchanges over several pairings, where a rank without a partner exchanges
 * with itself. A Sendrecv's send and receive proceed together, so rings and
 * pairs need no ordering.
 *
 * Then (3 ranks or more) a wildcard Sendrecv whose own send lets another
 * rank send a message its receive could have taken: rank 2 sends rank 0 a
 * message on tag 51, then a token on tag 52; once rank 0 has the token,
 * rank 2's first message has reached it too, so rank 0's
 * MPI_Sendrecv(send to 1 on tag 50, receive ANY_SOURCE on tag 51) takes
 * rank 2's. Rank 1 receives the Sendrecv's send and only then sends on tag
 * 51, which a later MPI_Recv(ANY_SOURCE) takes: it comes after the
 * Sendrecv's send, not after its receive's match, so rank 1 is an
 * alternative source of the Sendrecv's receive. */
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
  gt_match(W, dest, stag);
  gt_op_send("std", id, dest, NULL);
  gt_match(W, src, rtag);
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
  gt_match(W, dest, stag);
  gt_op_send("std", id, dest, NULL);
  gt_match(W, src, rtag);
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

  /* MPI 4 MPI_Isendrecv(_replace): the send signals and the receive is posted
   * at initiation; the receive is waited for at completion, after a clocked
   * call in between. */
  for (int k = 0; k < 2; ++k) {
    int out[MSG], in[MSG];
    gt_msgid id = gt_stamp(out);
    gt_fill(out, MSG);
    gt_unmark(in);
    gt_req rq;
    gt_req_recv(&rq, in);
    MPI_Request req;
    if (k == 0) {
      /* Specific source and tag: MPICH 4.0.2 leaves an MPI_Isendrecv
       * request's status empty, so a wildcard's match could not be known. */
      MPI_Isendrecv(out, MSG, MPI_INT, right, 30, in, MSG, MPI_INT, left, 30, W, &req);
      gt_begin("MPI_Isendrecv");
    } else {
      /* The replace form sends and receives in one buffer. */
      MPI_Isendrecv_replace(out, MSG, MPI_INT, left, 31, right, 31, W, &req);
      gt_req_recv(&rq, out);
      gt_begin("MPI_Isendrecv_replace");
    }
    gt_match(W, k == 0 ? right : left, 30 + k);
    gt_op_send("std", id, k == 0 ? right : left, NULL);
    gt_match(W, k == 0 ? left : right, 30 + k);
    gt_op_post(rq.name);
    gt_end();
    sendrecv(right, 40 + k, left, 40 + k);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    gt_begin("MPI_Wait");
    gt_op_complete(&rq);
    gt_end();
    sum += gt_check(k == 0 ? in : out, MSG);
  }

  if (n >= 3) {
    int msg[MSG];
    MPI_Status st;
    if (me == 2) {
      gt_send("std", msg, MSG, 0, 51, W);
      gt_send("std", msg, MSG, 0, 52, W);
    } else if (me == 1) {
      sum += gt_recv(msg, MSG, 0, 50, W, &st);
      gt_send("std", msg, MSG, 0, 51, W);
    } else if (me == 0) {
      sum += gt_recv(msg, MSG, 2, 52, W, &st);
      sendrecv(1, 50, MPI_ANY_SOURCE, 51);
      sum += gt_recv(msg, MSG, MPI_ANY_SOURCE, 51, W, &st);
    }
  }

  MPI_Barrier(W);
  gt_log_coll("MPI_Barrier", "all_to_all", W, -1);
  printf("sendrecv rank %d sum %lu\n", me, sum);
  gt_finalize();
  MPI_Finalize();
  return 0;
}
