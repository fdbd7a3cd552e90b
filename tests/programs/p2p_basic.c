/* Blocking point-to-point in every send mode: rings both ways (one of them
 * with a message above the eager limit), buffered sends, ready sends into
 * pre-posted receives, synchronous sends, wildcard source/tag receives,
 * several tags between one pair, and sends to self.
 *
 * Every pattern is deadlock-free without relying on MPI buffering: rings
 * pass a token, and a receive is posted (or the send is buffered) wherever
 * two ranks would otherwise wait for each other. */
#include <stdio.h>
#include <stdlib.h>

#include "gt.h"

#define MSG 8
#define BIG 20000 /* 80 KB: above MPICH's eager threshold */

static int me, n;
static unsigned long sum;
static int buf[BIG];
static int rbuf[4][MSG];
static const MPI_Comm W = MPI_COMM_WORLD;

/* Rank 0 starts and every other rank forwards, so no two ranks ever wait
 * for each other's send. */
static void token_ring(int dir, const char *mode, int count, int tag) {
  int to = (me + dir + n) % n, from = (me - dir + n) % n;
  if (me == 0) {
    gt_send(mode, buf, count, to, tag, W);
    sum += gt_recv(buf, count, from, tag, W, NULL);
  } else {
    sum += gt_recv(buf, count, from, tag, W, NULL);
    gt_send(mode, buf, count, to, tag, W);
  }
}

static void barrier(void) {
  MPI_Barrier(W);
  gt_log_coll("MPI_Barrier", "all_to_all", W, -1);
}

static void expect_tag(const MPI_Status *st, int tag) {
  if (st->MPI_TAG != tag) gt_fail("expected tag %d, got %d", tag, st->MPI_TAG);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  gt_init();
  me = gt_rank();
  n = gt_size();
  int right = (me + 1) % n, left = (me - 1 + n) % n;

  int bsize = 1 << 20;
  void *bspace = malloc((size_t)bsize);
  if (!bspace) gt_fail("out of memory");
  MPI_Buffer_attach(bspace, bsize);

  /* Rings: standard and synchronous, both directions, one large message. */
  token_ring(+1, "std", MSG, 1);
  token_ring(-1, "std", BIG, 2);
  token_ring(+1, "sync", MSG, 3);
  token_ring(-1, "sync", MSG, 4);

  /* Buffered sends never block, so all of them go before any receive. */
  int b1[MSG], b2[MSG], b3[MSG];
  gt_send("buffered", b1, MSG, right, 10, W);
  gt_send("buffered", b2, MSG, left, 11, W);
  gt_send("buffered", b3, MSG, me, 12, W);
  sum += gt_recv(rbuf[0], MSG, left, 10, W, NULL);
  sum += gt_recv(rbuf[1], MSG, right, 11, W, NULL);
  sum += gt_recv(rbuf[2], MSG, me, 12, W, NULL);

  /* Ready send: the barrier orders every pre-posted receive before every
   * ready send. */
  {
    gt_reqs rq;
    gt_reqs_init(&rq);
    int sb[MSG];
    gt_irecv(&rq, rbuf[0], MSG, left, 20, W);
    barrier();
    gt_send("ready", sb, MSG, right, 20, W);
    gt_complete(&rq, GT_WAIT_EACH);
    sum += rq.digest;
  }

  /* Wildcards at rank 0. Each sender sends tags 31, 30, 32 in that order and
   * rank 0 asks for all 31s (any source), then each sender's next message
   * (any tag: by non-overtaking its 30), then the rest (any source, any tag):
   * every receive can be satisfied by a send its sender has already reached. */
  if (me == 0) {
    MPI_Status st;
    for (int k = 1; k < n; ++k) {
      sum += gt_recv(rbuf[0], MSG, MPI_ANY_SOURCE, 31, W, &st);
      expect_tag(&st, 31);
    }
    for (int r = 1; r < n; ++r) {
      sum += gt_recv(rbuf[0], MSG, r, MPI_ANY_TAG, W, &st);
      expect_tag(&st, 30);
    }
    for (int k = 1; k < n; ++k) {
      sum += gt_recv(rbuf[0], MSG, MPI_ANY_SOURCE, MPI_ANY_TAG, W, &st);
      expect_tag(&st, 32);
    }
  } else {
    gt_send("std", buf, MSG, 0, 31, W);
    gt_send("std", buf, MSG, 0, 30, W);
    gt_send("std", buf, MSG, 0, 32, W);
  }
  /* Keeps the any-tag receives above from seeing the next phase's messages. */
  barrier();

  /* Several tags on one pair: buffered, received in reverse tag order; then
   * same-tag standard and synchronous sends received in order. */
  if (me == 1) {
    int t0[MSG], t1[MSG], t2[MSG];
    gt_send("buffered", t0, MSG, 0, 50, W);
    gt_send("buffered", t1, MSG, 0, 51, W);
    gt_send("buffered", t2, MSG, 0, 52, W);
    for (int k = 0; k < 3; ++k) sum += gt_recv(rbuf[k], MSG, 0, 60, W, NULL);
    sum += gt_recv(rbuf[0], MSG, 0, 61, W, NULL);
    sum += gt_recv(rbuf[1], MSG, 0, 62, W, NULL);
  } else if (me == 0) {
    for (int t = 52; t >= 50; --t) sum += gt_recv(rbuf[0], MSG, 1, t, W, NULL);
    for (int k = 0; k < 3; ++k) gt_send("std", buf, MSG, 1, 60, W);
    gt_send("sync", buf, MSG, 1, 61, W);
    gt_send("sync", buf, MSG, 1, 62, W);
  }

  /* Sends to self, the receive posted first in the blocking cases. */
  {
    gt_reqs rq;
    gt_reqs_init(&rq);
    int s0[MSG], s1[MSG];
    gt_irecv(&rq, rbuf[0], MSG, me, 70, W);
    gt_send("std", s0, MSG, me, 70, W);
    gt_irecv(&rq, rbuf[1], MSG, me, 72, W);
    gt_send("sync", s1, MSG, me, 72, W);
    gt_complete(&rq, GT_WAITALL);
    sum += rq.digest;
  }

  barrier();
  MPI_Buffer_detach(&bspace, &bsize);
  free(bspace);

  printf("p2p_basic rank %d sum %lu\n", me, sum);
  gt_finalize();
  MPI_Finalize();
  return 0;
}
