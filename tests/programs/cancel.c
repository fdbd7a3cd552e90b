/* Cancelled receives: MPI_Cancel on MPI_Irecv requests with a specific
 * source and with wildcards, completed by MPI_Wait, MPI_Test loops,
 * MPI_Waitall and MPI_Testany, followed by receives on the same queue that
 * get the messages sent afterwards. A cancelled receive matched nothing;
 * receives posted after it (before or after the cancel) move up.
 *
 *   1. specific source: A posted, cancelled, B posted on the same queue,
 *      A completed (cancelled); after a barrier the message goes to B;
 *   2. wildcard source and tag, completed by a Test loop; after a barrier
 *      wildcard receives get what the neighbours send;
 *   3. a cancelled receive completed by MPI_Waitall together with a send
 *      and a receive that does get a message; its queue is used later;
 *   4. a cancel that fails: the receive has already matched a synchronous
 *      send (the sender's completion proves it, and the sender says so
 *      with a second message), so it completes with the message;
 *   5. races: the messages may or may not be there when the cancel comes,
 *      for a specific and for a wildcard source; whatever MPI decides, the
 *      receives after it pick up the rest;
 *   6. a persistent receive started, cancelled, and started again.
 *
 * Sends are never cancelled (MPICH 4.0.2 does not cancel them). Polling is
 * bounded; the output (digests of all received messages) does not depend
 * on which way the races went. */
#include <stdio.h>
#include <stdlib.h>

#include "gt.h"

#define MSG 8

static const MPI_Comm W = MPI_COMM_WORLD;
static int me, n;
static unsigned long sum;

static void check_rc(int rc, const char *what) {
  if (rc != MPI_SUCCESS) gt_fail("%s returned %d", what, rc);
}

static void barrier(void) {
  check_rc(MPI_Barrier(W), "MPI_Barrier");
  gt_log_coll("MPI_Barrier", "all_to_all", W, -1);
}

static void expect_cancelled(const gt_reqs *s, int k, int want, const char *what) {
  if (s->info[k].cancelled != want)
    gt_fail("%s: cancelled is %d, expected %d", what, s->info[k].cancelled, want);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  gt_init();
  me = gt_rank();
  n = gt_size();
  int right = (me + 1) % n, left = (me - 1 + n) % n;
  int sb[8][MSG], rb[16][MSG];

  /* 1. Nobody sends on tag 10 before the barrier, so A is surely
   * cancelled. */
  {
    gt_reqs ra, rbq;
    gt_reqs_init(&ra);
    gt_reqs_init(&rbq);
    int a = gt_irecv(&ra, rb[0], MSG, left, 10, W);
    gt_cancel(&ra, a);
    gt_irecv(&rbq, rb[1], MSG, left, 10, W);
    gt_complete(&ra, GT_WAIT_EACH);
    expect_cancelled(&ra, a, 1, "specific receive");
    barrier();
    gt_send("std", sb[0], MSG, right, 10, W);
    gt_complete(&rbq, GT_WAITALL);
    sum += rbq.digest;
  }

  /* 2. Wildcards. */
  {
    gt_reqs ra, rq;
    gt_reqs_init(&ra);
    gt_reqs_init(&rq);
    int a = gt_irecv(&ra, rb[0], MSG, MPI_ANY_SOURCE, MPI_ANY_TAG, W);
    gt_cancel(&ra, a);
    gt_complete(&ra, GT_TEST);
    expect_cancelled(&ra, a, 1, "wildcard receive");
    barrier();
    gt_isend(&rq, "std", sb[1], MSG, right, 20, W);
    gt_isend(&rq, "sync", sb[2], MSG, left, 21, W);
    gt_irecv(&rq, rb[1], MSG, MPI_ANY_SOURCE, MPI_ANY_TAG, W);
    gt_irecv(&rq, rb[2], MSG, MPI_ANY_SOURCE, MPI_ANY_TAG, W);
    gt_complete(&rq, GT_TESTANY);
    sum += rq.digest;
  }
  /* Phase 3's messages must not meet phase 2's wildcard receives. */
  barrier();

  /* 3. Tag 31 stays silent until the barrier. */
  {
    gt_reqs rq;
    gt_reqs_init(&rq);
    gt_isend(&rq, "std", sb[3], MSG, right, 30, W);
    int c = gt_irecv(&rq, rb[3], MSG, left, 31, W);
    gt_irecv(&rq, rb[4], MSG, left, 30, W);
    gt_cancel(&rq, c);
    gt_complete(&rq, GT_WAITALL);
    expect_cancelled(&rq, c, 1, "receive completed by MPI_Waitall");
    sum += rq.digest;
    barrier();
    gt_reqs rs;
    gt_reqs_init(&rs);
    gt_isend(&rs, "std", sb[4], MSG, right, 31, W);
    sum += gt_recv(rb[5], MSG, left, 31, W, NULL);
    gt_complete(&rs, GT_WAITALL);
  }

  /* 4. The left neighbour's MPI_Ssend returns only once this receive has
   * matched it; its note on tag 41 is sent after that. */
  {
    gt_reqs ra, rs;
    gt_reqs_init(&ra);
    gt_reqs_init(&rs);
    int a = gt_irecv(&ra, rb[6], MSG, left, 40, W);
    gt_send("sync", sb[5], MSG, right, 40, W);
    gt_isend(&rs, "std", sb[6], MSG, right, 41, W);
    sum += gt_recv(rb[7], MSG, left, 41, W, NULL);
    gt_cancel(&ra, a);
    gt_complete(&ra, GT_WAIT_EACH);
    expect_cancelled(&ra, a, 0, "receive that had matched");
    sum += ra.digest;
    gt_complete(&rs, GT_WAITALL);
  }
  barrier();

  /* 5a. The left neighbour sends two messages at once; A may have taken
   * the first by the time it is cancelled. */
  {
    gt_reqs rs, rq;
    gt_reqs_init(&rs);
    gt_reqs_init(&rq);
    gt_isend(&rs, "std", sb[0], MSG, right, 50, W);
    gt_isend(&rs, "std", sb[1], MSG, right, 50, W);
    int a = gt_irecv(&rq, rb[8], MSG, left, 50, W);
    gt_irecv(&rq, rb[9], MSG, left, 50, W);
    gt_cancel(&rq, a);
    gt_complete(&rq, GT_WAITALL);
    sum += rq.digest;
    if (rq.info[a].cancelled) sum += gt_recv(rb[10], MSG, left, 50, W, NULL);
    gt_complete(&rs, GT_WAITSOME);
  }

  /* 5b. Everybody sends one message to rank 0, which cancels the first of
   * two wildcard receives, then receives what is left. */
  {
    gt_reqs rs;
    gt_reqs_init(&rs);
    gt_isend(&rs, "std", sb[2], MSG, 0, 60, W);
    if (me == 0) {
      gt_reqs rq;
      gt_reqs_init(&rq);
      int a = gt_irecv(&rq, rb[11], MSG, MPI_ANY_SOURCE, 60, W);
      gt_irecv(&rq, rb[12], MSG, MPI_ANY_SOURCE, 60, W);
      gt_cancel(&rq, a);
      gt_complete(&rq, GT_TESTSOME);
      sum += rq.digest;
      int left_over = n - 1 - !rq.info[a].cancelled;
      for (int i = 0; i < left_over; ++i) sum += gt_recv(rb[13], MSG, MPI_ANY_SOURCE, 60, W, NULL);
    }
    gt_complete(&rs, GT_WAITALL);
  }
  barrier();

  /* 6. Persistent receive: the first start is cancelled before anything is
   * sent on tag 70; the second gets the message. */
  {
    MPI_Request p;
    gt_req info;
    gt_req_recv(&info, rb[14]);
    check_rc(MPI_Recv_init(rb[14], MSG, MPI_INT, left, 70, W, &p), "MPI_Recv_init");
    gt_begin("MPI_Recv_init");
    gt_op_init(info.name, "recv");
    gt_end();
    for (int round = 0; round < 2; ++round) {
      gt_reqs rq;
      gt_reqs_init(&rq);
      gt_unmark(rb[14]);
      check_rc(MPI_Start(&p), "MPI_Start");
      gt_match(W, left, 70);
      gt_log_post("MPI_Start", &info);
      int k = gt_reqs_add(&rq, p, &info, MSG, 1);
      if (round == 0) {
        gt_cancel(&rq, k);
        /* The set completes its copy of the handle: the same request. */
        gt_complete(&rq, GT_WAIT_EACH);
        expect_cancelled(&rq, k, 1, "persistent receive");
        barrier();
        gt_send("std", sb[7], MSG, right, 70, W);
      } else {
        gt_complete(&rq, GT_WAIT_EACH);
        sum += rq.digest;
      }
    }
    check_rc(MPI_Request_free(&p), "MPI_Request_free");
    gt_begin("MPI_Request_free");
    gt_op_free(info.name);
    gt_end();
  }

  barrier();
  printf("cancel rank %d sum %lu\n", me, sum);
  gt_finalize();
  MPI_Finalize();
  return 0;
}
