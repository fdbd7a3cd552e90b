/* Synchronous sends (Ssend / Issend) matched every way a receive can match
 * them: blocking Recv, Irecv + Wait (with clocked calls between post and
 * completion), wildcard receives blocking and non-blocking, the receive
 * half of a Sendrecv, and sends to self; Issend requests completed through
 * Test-family loops.
 *
 * A synchronous send only completes once its receive has started, so every
 * phase either passes a token or has the receive posted before the send.
 *
 * Last, what a completed synchronous send tells its sender (3 ranks or
 * more): rank 0 posts two Irecv(ANY_SOURCE) [a] and [b], waits for both,
 * then MPI_Recv(ANY_SOURCE), all on tag 20. Rank 2's MPI_Ssend e takes [a]
 * (posted first); once it returned, rank 2 tells rank 1, whose MPI_Issend
 * m then takes [b]; once m's MPI_Wait returned, rank 1 tells rank 2, whose
 * message c goes to the MPI_Recv. m was sent after [a]'s match, c after
 * [b]'s (and so [a]'s): no receive could have taken another message. With
 * 4 ranks or more, the same on tag 23 with rank 3's standard-mode send e
 * and no token before m, so either of [a] and [b] may take e or m. */
#include <stdio.h>

#include "gt.h"

#define MSG 8

static const MPI_Comm W = MPI_COMM_WORLD;
static int me, n;
static unsigned long sum;

static void barrier(void) {
  MPI_Barrier(W);
  gt_log_coll("MPI_Barrier", "all_to_all", W, -1);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  gt_init();
  me = gt_rank();
  n = gt_size();
  int right = (me + 1) % n, left = (me - 1 + n) % n;
  int sb[8][MSG], rb[8][MSG];

  /* Token ring: Ssend answered by a blocking Recv. */
  if (me == 0) {
    gt_send("sync", sb[0], MSG, right, 1, W);
    sum += gt_recv(rb[0], MSG, left, 1, W, NULL);
  } else {
    sum += gt_recv(rb[0], MSG, left, 1, W, NULL);
    gt_send("sync", sb[0], MSG, right, 1, W);
  }

  /* Ssend answered by an Irecv posted before a barrier and completed after
   * the send: the answer is the receiver's clock at the post. */
  {
    gt_reqs rq;
    gt_reqs_init(&rq);
    gt_irecv(&rq, rb[0], MSG, left, 2, W);
    barrier();
    gt_send("sync", sb[0], MSG, right, 2, W);
    gt_complete(&rq, GT_WAIT_EACH);
    sum += rq.digest;
  }

  /* Ssend into blocking wildcard receives at rank 0. */
  if (me == 0) {
    for (int k = 1; k < n; ++k) sum += gt_recv(rb[0], MSG, MPI_ANY_SOURCE, 3, W, NULL);
  } else {
    gt_send("sync", sb[0], MSG, 0, 3, W);
  }

  /* Issend into wildcard Irecvs at rank 0, and back: rank 0's Issends into
   * blocking wildcard Recvs at the others. */
  {
    gt_reqs rq;
    gt_reqs_init(&rq);
    if (me == 0) {
      for (int k = 1; k < n; ++k) gt_irecv(&rq, rb[k], MSG, MPI_ANY_SOURCE, 4, W);
      gt_complete(&rq, GT_WAITANY);
      sum += rq.digest;
      gt_reqs_init(&rq);
      for (int k = 1; k < n; ++k) gt_isend(&rq, "sync", sb[k], MSG, k, 5, W);
      gt_complete(&rq, GT_TESTSOME);
    } else {
      gt_isend(&rq, "sync", sb[0], MSG, 0, 4, W);
      gt_complete(&rq, GT_TEST);
      sum += gt_recv(rb[0], MSG, MPI_ANY_SOURCE, 5, W, NULL);
    }
  }

  /* Issend + Irecv in a ring, completed by Test loops. */
  {
    gt_reqs rq;
    gt_reqs_init(&rq);
    gt_isend(&rq, "sync", sb[0], MSG, right, 6, W);
    gt_irecv(&rq, rb[0], MSG, left, 6, W);
    gt_complete(&rq, GT_TEST);
    sum += rq.digest;
  }

  /* Issend answered by a blocking Recv, completed by Testany. */
  {
    gt_reqs rq;
    gt_reqs_init(&rq);
    gt_isend(&rq, "sync", sb[0], MSG, right, 7, W);
    sum += gt_recv(rb[0], MSG, left, 7, W, NULL);
    gt_complete(&rq, GT_TESTANY);
  }

  /* To self: Issend completed with its Irecv by Testall; blocking Ssend into
   * a pre-posted Irecv. */
  {
    gt_reqs rq;
    gt_reqs_init(&rq);
    gt_irecv(&rq, rb[0], MSG, me, 8, W);
    gt_isend(&rq, "sync", sb[0], MSG, me, 8, W);
    gt_complete(&rq, GT_TESTALL);
    sum += rq.digest;
    gt_reqs_init(&rq);
    gt_irecv(&rq, rb[1], MSG, me, 9, W);
    gt_send("sync", sb[1], MSG, me, 9, W);
    gt_complete(&rq, GT_WAITALL);
    sum += rq.digest;
  }

  /* The receive half of a Sendrecv gets a synchronous message. The plain
   * half goes into a posted Irecv, so the Sendrecv cannot wait on a peer
   * that is itself inside its Sendrecv. */
  {
    gt_reqs rq;
    gt_reqs_init(&rq);
    gt_irecv(&rq, rb[2], MSG, left, 11, W);
    gt_isend(&rq, "sync", sb[2], MSG, right, 10, W);
    int *out = sb[3], *in = rb[3];
    gt_msgid id = gt_stamp(out);
    gt_fill(out, MSG);
    MPI_Status st;
    MPI_Sendrecv(out, MSG, MPI_INT, right, 11, in, MSG, MPI_INT, left, 10, W, &st);
    gt_begin("MPI_Sendrecv");
    gt_match(W, right, 11);
    gt_op_send("std", id, right, NULL);
    gt_match(W, left, 10);
    gt_op_recv(gt_read(in));
    gt_end();
    sum += gt_check(in, MSG);
    gt_complete(&rq, GT_WAITALL);
    sum += rq.digest;
  }

  /* The receive of a synchronous send completes only after the receiver got
   * a message the sender sent after its Ssend returned. The answer must come
   * from the receive's posting, not its completion, and must not wait for
   * the completion: once with a specific Irecv, once with a wildcard one
   * (whose queue position is known only at its completion). */
  for (int wild = 0; wild < 2; ++wild) {
    /* Pairs (0,1), (2,3): the even rank only sends, the odd rank only
     * receives, so neither side's waiting can be excused by the other's. */
    const int partner = me ^ 1;
    if (partner < n) {
      if (me % 2 == 0) {
        gt_send("sync", sb[4], MSG, partner, 12, W);
        gt_send("std", sb[5], MSG, partner, 13, W);
      } else {
        gt_reqs rq;
        gt_reqs_init(&rq);
        gt_irecv(&rq, rb[4], MSG, wild ? MPI_ANY_SOURCE : partner, 12, W);
        sum += gt_recv(rb[5], MSG, partner, 13, W, NULL);
        gt_complete(&rq, GT_WAIT_EACH);
        sum += rq.digest;
      }
    }
    barrier();
  }

  if (n >= 3) {
    if (me == 0) {
      for (int tag = 20; tag <= (n >= 4 ? 23 : 20); tag += 3) {
        gt_reqs rq;
        gt_reqs_init(&rq);
        gt_irecv(&rq, rb[6], MSG, MPI_ANY_SOURCE, tag, W);
        gt_irecv(&rq, rb[7], MSG, MPI_ANY_SOURCE, tag, W);
        gt_complete(&rq, GT_WAITALL);
        sum += rq.digest;
        sum += gt_recv(rb[5], MSG, MPI_ANY_SOURCE, tag, W, NULL);
      }
    } else if (me == 1) {
      for (int tag = 20; tag <= (n >= 4 ? 23 : 20); tag += 3) {
        if (tag == 20) sum += gt_recv(rb[6], MSG, 2, 21, W, NULL);
        gt_reqs rq;
        gt_reqs_init(&rq);
        gt_isend(&rq, "sync", sb[6], MSG, 0, tag, W);
        gt_complete(&rq, GT_WAITALL);
        gt_send("std", sb[7], MSG, 2, tag + 2, W);
      }
    } else if (me == 2) {
      for (int tag = 20; tag <= (n >= 4 ? 23 : 20); tag += 3) {
        if (tag == 20) {
          gt_send("sync", sb[6], MSG, 0, 20, W);
          gt_send("std", sb[7], MSG, 1, 21, W);
        }
        sum += gt_recv(rb[6], MSG, 1, tag + 2, W, NULL);
        gt_send("std", sb[5], MSG, 0, tag, W);
      }
    } else if (me == 3) {
      gt_send("std", sb[6], MSG, 0, 23, W);
    }
  }

  barrier();
  printf("sync rank %d sum %lu\n", me, sum);
  gt_finalize();
  MPI_Finalize();
  return 0;
}
