/* Probes: MPI_Probe / MPI_Iprobe followed by a receive, and matched probes
 * (MPI_Mprobe / MPI_Improbe) followed by MPI_Mrecv / MPI_Imrecv, with
 * wildcard source and tag, standard and synchronous senders (blocking and
 * non-blocking), and clocked calls between a matched probe and its receive:
 * a synchronous sender is answered with the receiver's clock at the probe.
 *
 * Phases end with a barrier, so a wildcard probe only ever sees the
 * messages of its own phase. Polling loops are bounded and fall back to the
 * blocking probe, so nothing depends on timing to terminate. */
#include <stdio.h>
#include <stdlib.h>

#include "gt.h"

#define MSG 8
#define SPINS 100

static const MPI_Comm W = MPI_COMM_WORLD;
static int me, n;
static unsigned long sum;

static void check_rc(int rc, const char *what) {
  if (rc != MPI_SUCCESS) gt_fail("%s returned %d", what, rc);
}

static void barrier(void) {
  MPI_Barrier(W);
  gt_log_coll("MPI_Barrier", "all_to_all", W, -1);
}

static void log_nothing(const char *call) {
  gt_begin(call);
  gt_end();
}

static void expect_count(const MPI_Status *st, const char *what) {
  int c = -1;
  MPI_Get_count(st, MPI_INT, &c);
  if (c != MSG) gt_fail("%s: %d ints, expected %d", what, c, MSG);
}

/* MPI_Iprobe until found (at most SPINS times), then MPI_Probe. */
static void probe_polling(int src, int tag, MPI_Status *st) {
  for (int i = 0; i < SPINS; ++i) {
    int flag;
    check_rc(MPI_Iprobe(src, tag, W, &flag, st), "MPI_Iprobe");
    log_nothing("MPI_Iprobe");
    if (flag) return;
  }
  check_rc(MPI_Probe(src, tag, W, st), "MPI_Probe");
  log_nothing("MPI_Probe");
}

static void mprobe(int src, int tag, MPI_Message *m, gt_mhandle *h, MPI_Status *st) {
  check_rc(MPI_Mprobe(src, tag, W, m, st), "MPI_Mprobe");
  gt_mhandle_new(h);
  gt_begin("MPI_Mprobe");
  gt_match(W, src, tag);
  gt_op_mprobe(h);
  gt_end();
  expect_count(st, "MPI_Mprobe");
}

/* MPI_Improbe until found (at most SPINS times), then MPI_Mprobe. */
static void improbe_polling(int src, int tag, MPI_Message *m, gt_mhandle *h, MPI_Status *st) {
  for (int i = 0; i < SPINS; ++i) {
    int flag;
    check_rc(MPI_Improbe(src, tag, W, &flag, m, st), "MPI_Improbe");
    if (flag) {
      gt_mhandle_new(h);
      gt_begin("MPI_Improbe");
      gt_match(W, src, tag);
      gt_op_mprobe(h);
      gt_end();
      expect_count(st, "MPI_Improbe");
      return;
    }
    log_nothing("MPI_Improbe");
  }
  mprobe(src, tag, m, h, st);
}

static void mrecv(int *buf, MPI_Message *m, const gt_mhandle *h) {
  MPI_Status st;
  check_rc(MPI_Mrecv(buf, MSG, MPI_INT, m, &st), "MPI_Mrecv");
  expect_count(&st, "MPI_Mrecv");
  gt_begin("MPI_Mrecv");
  gt_op_mrecv(h, gt_read(buf));
  gt_end();
  sum += gt_check(buf, MSG);
}

static void imrecv(gt_reqs *s, int *buf, MPI_Message *m, const gt_mhandle *h) {
  MPI_Request rq;
  gt_req info;
  gt_unmark(buf);
  gt_req_recv(&info, buf);
  check_rc(MPI_Imrecv(buf, MSG, MPI_INT, m, &rq), "MPI_Imrecv");
  gt_begin("MPI_Imrecv");
  gt_op_imrecv(h, info.name);
  gt_end();
  gt_reqs_add(s, rq, &info, MSG, 1);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  gt_init();
  me = gt_rank();
  n = gt_size();
  int right = (me + 1) % n, left = (me - 1 + n) % n;
  int sb[16][MSG], rb[16][MSG];
  MPI_Status st;

  int bsize = 1 << 16;
  void *bspace = malloc((size_t)bsize);
  if (!bspace) gt_fail("out of memory");
  MPI_Buffer_attach(bspace, bsize);

  /* 1. Probe (specific source and tag) then Recv from the probed source. */
  {
    gt_reqs rq;
    gt_reqs_init(&rq);
    gt_isend(&rq, "std", sb[0], MSG, right, 1, W);
    check_rc(MPI_Probe(left, 1, W, &st), "MPI_Probe");
    log_nothing("MPI_Probe");
    expect_count(&st, "MPI_Probe");
    sum += gt_recv(rb[0], MSG, st.MPI_SOURCE, st.MPI_TAG, W, NULL);
    gt_complete(&rq, GT_WAITALL);
  }
  barrier();

  /* 2. Iprobe with wildcard source and tag at rank 0, then a receive for
   * exactly what was probed; the senders use distinct tags. */
  if (me == 0) {
    for (int k = 1; k < n; ++k) {
      probe_polling(MPI_ANY_SOURCE, MPI_ANY_TAG, &st);
      if (st.MPI_TAG != 100 + st.MPI_SOURCE) gt_fail("probed tag %d", st.MPI_TAG);
      sum += gt_recv(rb[k], MSG, st.MPI_SOURCE, st.MPI_TAG, W, NULL);
    }
  } else {
    gt_send(me % 2 ? "sync" : "std", sb[1], MSG, 0, 100 + me, W);
  }
  barrier();

  /* 3. Mprobe with wildcard source and tag at rank 0 against blocking
   * synchronous senders: all messages are matched first, then received in
   * reverse order, so the later receives are clocked well after their
   * probes. */
  if (me == 0) {
    MPI_Message msg[16];
    gt_mhandle h[16];
    for (int k = 1; k < n; ++k) {
      mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, &msg[k], &h[k], &st);
      if (st.MPI_TAG != 200 + st.MPI_SOURCE) gt_fail("matched tag %d", st.MPI_TAG);
    }
    for (int k = n - 1; k >= 1; --k) mrecv(rb[k], &msg[k], &h[k]);
  } else {
    gt_send("sync", sb[2], MSG, 0, 200 + me, W);
  }
  barrier();

  /* 4. The other direction: rank 0 Issends to everybody; each receiver
   * matches with Mprobe on a specific source, then does clocked calls (a
   * buffered message to itself) before its Mrecv. */
  if (me == 0) {
    gt_reqs rq;
    gt_reqs_init(&rq);
    for (int k = 1; k < n; ++k) gt_isend(&rq, "sync", sb[3 + k], MSG, k, 300, W);
    gt_complete(&rq, GT_TESTSOME);
  } else {
    MPI_Message m;
    gt_mhandle h;
    mprobe(0, 300, &m, &h, &st);
    gt_send("buffered", sb[3], MSG, me, 301, W);
    sum += gt_recv(rb[3], MSG, me, 301, W, NULL);
    mrecv(rb[4], &m, &h);
  }
  barrier();

  /* 5. Improbe (wildcard source) + Imrecv at rank 0; the receive requests
   * are completed out of order together with a send of rank 0's own.
   * Senders alternate Issend and Isend. */
  if (me == 0) {
    gt_reqs rq;
    gt_reqs_init(&rq);
    gt_isend(&rq, "std", sb[0], MSG, right, 402, W);
    for (int k = 1; k < n; ++k) {
      MPI_Message m;
      gt_mhandle h;
      improbe_polling(MPI_ANY_SOURCE, 400, &m, &h, &st);
      imrecv(&rq, rb[k], &m, &h);
    }
    gt_complete(&rq, GT_WAITANY);
    sum += rq.digest;
  } else {
    gt_reqs rq;
    gt_reqs_init(&rq);
    gt_isend(&rq, me % 2 ? "sync" : "std", sb[0], MSG, 0, 400, W);
    gt_complete(&rq, GT_TEST);
  }
  if (left == 0) {
    /* Rank 0's message of this phase: Improbe with wildcard tag. */
    gt_reqs rq;
    gt_reqs_init(&rq);
    MPI_Message m;
    gt_mhandle h;
    improbe_polling(0, MPI_ANY_TAG, &m, &h, &st);
    if (st.MPI_TAG != 402) gt_fail("matched tag %d", st.MPI_TAG);
    imrecv(&rq, rb[15], &m, &h);
    gt_complete(&rq, GT_TESTSOME);
    sum += rq.digest;
  }
  barrier();

  /* 6. Non-overtaking: two messages from the same sender, the first
   * synchronous; Mprobe with wildcard tag must get them in order. */
  {
    gt_reqs rq;
    gt_reqs_init(&rq);
    gt_isend(&rq, "sync", sb[10], MSG, right, 500, W);
    gt_isend(&rq, "std", sb[11], MSG, right, 501, W);
    MPI_Message m1, m2;
    gt_mhandle h1, h2;
    mprobe(left, MPI_ANY_TAG, &m1, &h1, &st);
    if (st.MPI_TAG != 500) gt_fail("first tag %d", st.MPI_TAG);
    improbe_polling(left, MPI_ANY_TAG, &m2, &h2, &st);
    if (st.MPI_TAG != 501) gt_fail("second tag %d", st.MPI_TAG);
    mrecv(rb[11], &m2, &h2);
    mrecv(rb[10], &m1, &h1);
    gt_complete(&rq, GT_WAITSOME);
  }

  barrier();
  MPI_Buffer_detach(&bspace, &bsize);
  free(bspace);
  printf("probe rank %d sum %lu\n", me, sum);
  gt_finalize();
  MPI_Finalize();
  return 0;
}
