/* Large-count (_c) variants mixed with their plain forms: point-to-point in
 * every mode, blocking and non-blocking, Sendrecv(_replace), persistent
 * requests, matched probes, and blocking, non-blocking and persistent
 * collectives. The _c calls synchronise exactly like the plain ones and are
 * logged under their own names. */
#include <stdio.h>
#include <stdlib.h>

#include "gt.h"

#define MSG 8

static const MPI_Comm W = MPI_COMM_WORLD;
static int me, n;
static unsigned long sum;
static long acc;

static void check_rc(int rc, const char *what) {
  if (rc != MPI_SUCCESS) gt_fail("%s returned %d", what, rc);
}

static void expect_count_c(const MPI_Status *st, const char *what) {
  MPI_Count c = -1;
  MPI_Get_count_c(st, MPI_INT, &c);
  if (c != MSG) gt_fail("%s: %lld ints, expected %d", what, (long long)c, MSG);
}

static void log_send(const char *call, const char *mode, gt_msgid id, int dest) {
  gt_log_send(call, mode, id, W, dest);
}

/* Blocking _c send in the given mode. */
static void send_c(const char *mode, int *buf, int dest, int tag) {
  gt_msgid id = gt_stamp(buf);
  gt_fill(buf, MSG);
  const char *call;
  int rc;
  if (mode[0] == 's' && mode[1] == 't') {
    call = "MPI_Send_c";
    rc = MPI_Send_c(buf, MSG, MPI_INT, dest, tag, W);
  } else if (mode[0] == 'b') {
    call = "MPI_Bsend_c";
    rc = MPI_Bsend_c(buf, MSG, MPI_INT, dest, tag, W);
  } else if (mode[0] == 'r') {
    call = "MPI_Rsend_c";
    rc = MPI_Rsend_c(buf, MSG, MPI_INT, dest, tag, W);
  } else {
    call = "MPI_Ssend_c";
    rc = MPI_Ssend_c(buf, MSG, MPI_INT, dest, tag, W);
  }
  check_rc(rc, call);
  gt_match(W, dest, tag);
  log_send(call, mode, id, dest);
}

static void recv_c(int *buf, int src, int tag) {
  MPI_Status st;
  check_rc(MPI_Recv_c(buf, MSG, MPI_INT, src, tag, W, &st), "MPI_Recv_c");
  expect_count_c(&st, "MPI_Recv_c");
  gt_match(W, src, tag);
  gt_log_recv("MPI_Recv_c", buf);
  sum += gt_check(buf, MSG);
}

static int irecv_c(gt_reqs *s, int *buf, int src, int tag) {
  gt_req info;
  MPI_Request rq;
  gt_unmark(buf);
  gt_req_recv(&info, buf);
  check_rc(MPI_Irecv_c(buf, MSG, MPI_INT, src, tag, W, &rq), "MPI_Irecv_c");
  gt_match(W, src, tag);
  gt_log_post("MPI_Irecv_c", &info);
  return gt_reqs_add(s, rq, &info, MSG, 1);
}

static int isend_c(gt_reqs *s, int sync, int *buf, int dest, int tag) {
  gt_req info;
  MPI_Request rq;
  gt_msgid id = gt_stamp(buf);
  gt_fill(buf, MSG);
  gt_req_send(&info);
  const char *call = sync ? "MPI_Issend_c" : "MPI_Isend_c";
  check_rc(sync ? MPI_Issend_c(buf, MSG, MPI_INT, dest, tag, W, &rq)
                : MPI_Isend_c(buf, MSG, MPI_INT, dest, tag, W, &rq),
           call);
  gt_match(W, dest, tag);
  gt_log_isend(call, sync ? "sync" : "std", id, W, dest, &info);
  return gt_reqs_add(s, rq, &info, 0, 0);
}

/* Collectives: arguments small and derived from the ranks, results folded
 * into acc, which is the same in every run. */
static void colls_c(void) {
  MPI_Count one = 1;
  long v = 10L * me + 1, out = 0;
  long all[16], mine[16];

  check_rc(MPI_Bcast_c(&v, one, MPI_LONG, n - 1, W), "MPI_Bcast_c");
  gt_log_coll("MPI_Bcast_c", "one_to_all", W, n - 1);
  acc += v;

  v = 10L * me + 1;
  check_rc(MPI_Allreduce_c(&v, &out, one, MPI_LONG, MPI_SUM, W), "MPI_Allreduce_c");
  gt_log_coll("MPI_Allreduce_c", "all_to_all", W, -1);
  acc += out;

  check_rc(MPI_Reduce_c(&v, &out, one, MPI_LONG, MPI_MAX, 0, W), "MPI_Reduce_c");
  gt_log_coll("MPI_Reduce_c", "all_to_one", W, 0);
  if (me == 0) acc += out;

  check_rc(MPI_Gather_c(&v, one, MPI_LONG, all, one, MPI_LONG, 1 % n, W), "MPI_Gather_c");
  gt_log_coll("MPI_Gather_c", "all_to_one", W, 1 % n);
  if (me == 1 % n)
    for (int i = 0; i < n; ++i) acc += all[i] * (i + 1);

  for (int i = 0; i < n; ++i) all[i] = 100L * me + i;
  check_rc(MPI_Scatter_c(all, one, MPI_LONG, &out, one, MPI_LONG, 0, W), "MPI_Scatter_c");
  gt_log_coll("MPI_Scatter_c", "one_to_all", W, 0);
  acc += out;

  check_rc(MPI_Allgather_c(&v, one, MPI_LONG, all, one, MPI_LONG, W), "MPI_Allgather_c");
  gt_log_coll("MPI_Allgather_c", "all_to_all", W, -1);
  for (int i = 0; i < n; ++i) acc += all[i] * (i + 2);

  for (int i = 0; i < n; ++i) mine[i] = 7L * me + i;
  check_rc(MPI_Alltoall_c(mine, one, MPI_LONG, all, one, MPI_LONG, W), "MPI_Alltoall_c");
  gt_log_coll("MPI_Alltoall_c", "all_to_all", W, -1);
  for (int i = 0; i < n; ++i) acc += all[i] * (i + 3);

  check_rc(MPI_Reduce_scatter_block_c(mine, &out, one, MPI_LONG, MPI_SUM, W),
           "MPI_Reduce_scatter_block_c");
  gt_log_coll("MPI_Reduce_scatter_block_c", "all_to_all", W, -1);
  acc += out;

  check_rc(MPI_Scan_c(&v, &out, one, MPI_LONG, MPI_SUM, W), "MPI_Scan_c");
  gt_log_coll("MPI_Scan_c", "prefix", W, -1);
  acc += out;

  out = 0;
  check_rc(MPI_Exscan_c(&v, &out, one, MPI_LONG, MPI_SUM, W), "MPI_Exscan_c");
  gt_log_coll("MPI_Exscan_c", "prefix", W, -1);
  if (me > 0) acc += out; /* undefined at comm rank 0 */

  check_rc(MPI_Barrier(W), "MPI_Barrier");
  gt_log_coll("MPI_Barrier", "all_to_all", W, -1);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  gt_init();
  me = gt_rank();
  n = gt_size();
  int right = (me + 1) % n, left = (me - 1 + n) % n;
  int sb[16][MSG], rb[16][MSG];

  int bsize = 1 << 16;
  void *bspace = malloc((size_t)bsize);
  if (!bspace) gt_fail("out of memory");
  MPI_Buffer_attach(bspace, bsize);

  /* Token ring with alternating plain and _c calls, every mode. */
  static const char *modes[4] = {"std", "sync", "buffered", "sync"};
  for (int r = 0; r < 4; ++r) {
    if (me == 0) {
      send_c(modes[r], sb[r], right, r);
      if (r % 2)
        sum += gt_recv(rb[r], MSG, left, r, W, NULL);
      else
        recv_c(rb[r], left, r);
    } else {
      if (r % 2)
        recv_c(rb[r], left, r);
      else
        sum += gt_recv(rb[r], MSG, left, r, W, NULL);
      if (r % 2)
        gt_send(modes[r], sb[r], MSG, right, r, W);
      else
        send_c(modes[r], sb[r], right, r);
    }
  }

  /* Ready mode: the receive is posted before a barrier. */
  {
    gt_reqs rq;
    gt_reqs_init(&rq);
    irecv_c(&rq, rb[4], left, 10);
    MPI_Barrier(W);
    gt_log_coll("MPI_Barrier", "all_to_all", W, -1);
    send_c("ready", sb[4], right, 10);
    gt_complete(&rq, GT_WAIT_EACH);
    sum += rq.digest;
  }

  /* Non-blocking _c and plain mixed, with a wildcard, completed together. */
  {
    gt_reqs rq;
    gt_reqs_init(&rq);
    irecv_c(&rq, rb[5], left, 11);
    gt_irecv(&rq, rb[6], MSG, MPI_ANY_SOURCE, 12, W);
    isend_c(&rq, 1, sb[5], right, 11);
    isend_c(&rq, 0, sb[6], left, 12);
    gt_complete(&rq, GT_TESTSOME);
    sum += rq.digest;
  }

  /* Sendrecv_c (the receive half gets a synchronous message) and
   * Sendrecv_replace_c. */
  {
    gt_reqs rq;
    gt_reqs_init(&rq);
    gt_irecv(&rq, rb[7], MSG, left, 14, W);
    gt_isend(&rq, "sync", sb[7], MSG, right, 13, W);
    gt_msgid id = gt_stamp(sb[8]);
    gt_fill(sb[8], MSG);
    MPI_Status st;
    check_rc(MPI_Sendrecv_c(sb[8], MSG, MPI_INT, right, 14, rb[8], MSG, MPI_INT, left, 13, W,
                            &st),
             "MPI_Sendrecv_c");
    expect_count_c(&st, "MPI_Sendrecv_c");
    gt_begin("MPI_Sendrecv_c");
    gt_match(W, right, 14);
    gt_op_send("std", id, gt_world_of(W, right), NULL);
    gt_match(W, left, 13);
    gt_op_recv(gt_read(rb[8]));
    gt_end();
    sum += gt_check(rb[8], MSG);
    gt_complete(&rq, GT_WAITALL);
    sum += rq.digest;

    int *buf = sb[9];
    id = gt_stamp(buf);
    gt_fill(buf, MSG);
    check_rc(MPI_Sendrecv_replace_c(buf, MSG, MPI_INT, left, 15, right, 15, W, &st),
             "MPI_Sendrecv_replace_c");
    gt_begin("MPI_Sendrecv_replace_c");
    gt_match(W, left, 15);
    gt_op_send("std", id, gt_world_of(W, left), NULL);
    gt_match(W, right, 15);
    gt_op_recv(gt_read(buf));
    gt_end();
    sum += gt_check(buf, MSG);
  }

  /* Persistent _c requests, started twice. */
  {
    MPI_Request s, r;
    gt_req si, ri;
    gt_req_send(&si);
    gt_req_recv(&ri, rb[10]);
    check_rc(MPI_Send_init_c(sb[10], MSG, MPI_INT, right, 16, W, &s), "MPI_Send_init_c");
    gt_begin("MPI_Send_init_c");
    gt_op_init(si.name, "send");
    gt_end();
    check_rc(MPI_Recv_init_c(rb[10], MSG, MPI_INT, left, 16, W, &r), "MPI_Recv_init_c");
    gt_begin("MPI_Recv_init_c");
    gt_op_init(ri.name, "recv");
    gt_end();
    for (int k = 0; k < 2; ++k) {
      gt_reqs rq;
      gt_reqs_init(&rq);
      MPI_Request both[2] = {r, s};
      gt_unmark(rb[10]);
      gt_msgid id = gt_stamp(sb[10]);
      gt_fill(sb[10], MSG);
      gt_begin("MPI_Startall");
      gt_match(W, left, 16);
      gt_op_post(ri.name);
      gt_match(W, right, 16);
      gt_op_send("std", id, gt_world_of(W, right), si.name);
      check_rc(MPI_Startall(2, both), "MPI_Startall");
      gt_end();
      gt_reqs_add(&rq, r, &ri, MSG, 1);
      gt_reqs_add(&rq, s, &si, 0, 0);
      gt_complete(&rq, k ? GT_WAITANY : GT_WAITALL);
      sum += rq.digest;
    }
    MPI_Request_free(&s);
    gt_begin("MPI_Request_free");
    gt_op_free(si.name);
    gt_end();
    MPI_Request_free(&r);
    gt_begin("MPI_Request_free");
    gt_op_free(ri.name);
    gt_end();
  }

  /* Matched probe received with Mrecv_c and Imrecv_c; synchronous senders. */
  {
    gt_reqs rq;
    gt_reqs_init(&rq);
    gt_isend(&rq, "sync", sb[11], MSG, right, 17, W);
    gt_isend(&rq, "sync", sb[12], MSG, right, 18, W);
    MPI_Message m;
    MPI_Status st;
    gt_mhandle h;
    check_rc(MPI_Mprobe(left, 17, W, &m, &st), "MPI_Mprobe");
    gt_mhandle_new(&h);
    gt_begin("MPI_Mprobe");
    gt_match(W, left, 17);
    gt_op_mprobe(&h);
    gt_end();
    check_rc(MPI_Mrecv_c(rb[11], MSG, MPI_INT, &m, &st), "MPI_Mrecv_c");
    expect_count_c(&st, "MPI_Mrecv_c");
    gt_begin("MPI_Mrecv_c");
    gt_op_mrecv(&h, gt_read(rb[11]));
    gt_end();
    sum += gt_check(rb[11], MSG);

    check_rc(MPI_Mprobe(left, 18, W, &m, &st), "MPI_Mprobe");
    gt_mhandle_new(&h);
    gt_begin("MPI_Mprobe");
    gt_match(W, left, 18);
    gt_op_mprobe(&h);
    gt_end();
    MPI_Request ir;
    gt_req info;
    gt_unmark(rb[12]);
    gt_req_recv(&info, rb[12]);
    check_rc(MPI_Imrecv_c(rb[12], MSG, MPI_INT, &m, &ir), "MPI_Imrecv_c");
    gt_begin("MPI_Imrecv_c");
    gt_op_imrecv(&h, info.name);
    gt_end();
    gt_reqs_add(&rq, ir, &info, MSG, 1);
    gt_complete(&rq, GT_TESTANY);
    sum += rq.digest;
  }

  colls_c();

  /* Non-blocking and persistent _c collectives, completed with plain calls. */
  {
    gt_reqs rq;
    gt_reqs_init(&rq);
    long b = me == 0 ? 42 : -1, v = me + 1, out = 0;
    gt_req bi, ai;
    MPI_Request r;
    gt_req_send(&bi);
    check_rc(MPI_Ibcast_c(&b, 1, MPI_LONG, 0, W, &r), "MPI_Ibcast_c");
    gt_log_icoll("MPI_Ibcast_c", "one_to_all", W, 0, &bi);
    gt_reqs_add(&rq, r, &bi, 0, 0);
    gt_req_send(&ai);
    check_rc(MPI_Iallreduce_c(&v, &out, 1, MPI_LONG, MPI_SUM, W, &r), "MPI_Iallreduce_c");
    gt_log_icoll("MPI_Iallreduce_c", "all_to_all", W, -1, &ai);
    gt_reqs_add(&rq, r, &ai, 0, 0);
    gt_complete(&rq, GT_WAITSOME);
    acc += b + out;

    MPI_Request p;
    gt_req pi;
    gt_req_send(&pi);
    long pv = 0, pout = 0;
    check_rc(MPI_Allreduce_init_c(&pv, &pout, 1, MPI_LONG, MPI_SUM, W, MPI_INFO_NULL, &p),
             "MPI_Allreduce_init_c");
    gt_begin("MPI_Allreduce_init_c");
    gt_op_init_coll(pi.name, W);
    gt_end();
    for (int k = 0; k < 3; ++k) {
      gt_reqs_init(&rq);
      pv = me * (k + 1);
      gt_begin("MPI_Start");
      gt_op_coll_req("all_to_all", W, -1, pi.name);
      check_rc(MPI_Start(&p), "MPI_Start");
      gt_end();
      gt_reqs_add(&rq, p, &pi, 0, 0);
      gt_complete(&rq, GT_TEST);
      acc += pout;
    }
    MPI_Request_free(&p);
    gt_begin("MPI_Request_free");
    gt_op_free(pi.name);
    gt_end();
  }

  MPI_Barrier(W);
  gt_log_coll("MPI_Barrier", "all_to_all", W, -1);
  MPI_Buffer_detach(&bspace, &bsize);
  free(bspace);
  printf("largecount rank %d sum %lu acc %ld\n", me, sum, acc);
  gt_finalize();
  MPI_Finalize();
  return 0;
}
