/* Persistent point-to-point: Send_init, Bsend_init, Ssend_init, Rsend_init
 * and Recv_init (specific and wildcard source), started over several rounds
 * by MPI_Start and MPI_Startall, polled with MPI_Request_get_status, then
 * completed by every Wait/Test variant, and freed at the end (one request
 * is freed without ever being started).
 *
 * Each round: start the receives that ready-mode sends need, barrier, then
 * start the sends. In odd rounds one Startall starts the std and sync
 * receives together with all sends, so that Startall is clocked and answers
 * the synchronous message it receives with its own tick. Every receive is
 * started before anything of the round is completed, so nothing depends on
 * buffering. */
#include <stdio.h>
#include <stdlib.h>

#include "gt.h"

#define MSG 8
#define ROUNDS 8 /* every completion method once */
#define TAG_BASE 10
#define TAG_WILD 20
#define NMODES 4

enum { M_STD, M_BUF, M_SYNC, M_READY };
static const char *mode_name[NMODES] = {"std", "buffered", "sync", "ready"};
static const char *init_name[NMODES] = {"MPI_Send_init", "MPI_Bsend_init", "MPI_Ssend_init",
                                        "MPI_Rsend_init"};

static const MPI_Comm W = MPI_COMM_WORLD;
static int me, n;

/* A persistent request with its bookkeeping. */
typedef struct {
  MPI_Request req;
  gt_req info;
  int buf[MSG];
  const char *mode; /* NULL for receives */
  int dest_world;
  int peer, tag; /* as given at the _init: destination or wanted source */
} preq;

static preq sends[NMODES], recvs[NMODES], wild[16], wsend, unused;

static void check_rc(int rc, const char *what) {
  if (rc != MPI_SUCCESS) gt_fail("%s returned %d", what, rc);
}

static void make_send(preq *p, int m, int dest, int tag) {
  int rc;
  p->mode = mode_name[m];
  p->dest_world = gt_world_of(W, dest);
  p->peer = dest;
  p->tag = tag;
  gt_req_send(&p->info);
  switch (m) {
    case M_STD: rc = MPI_Send_init(p->buf, MSG, MPI_INT, dest, tag, W, &p->req); break;
    case M_BUF: rc = MPI_Bsend_init(p->buf, MSG, MPI_INT, dest, tag, W, &p->req); break;
    case M_SYNC: rc = MPI_Ssend_init(p->buf, MSG, MPI_INT, dest, tag, W, &p->req); break;
    default: rc = MPI_Rsend_init(p->buf, MSG, MPI_INT, dest, tag, W, &p->req); break;
  }
  check_rc(rc, init_name[m]);
  gt_begin(init_name[m]);
  gt_op_init(p->info.name, "send");
  gt_end();
}

static void make_recv(preq *p, int src, int tag) {
  p->mode = NULL;
  p->peer = src;
  p->tag = tag;
  gt_req_recv(&p->info, p->buf);
  check_rc(MPI_Recv_init(p->buf, MSG, MPI_INT, src, tag, W, &p->req), "MPI_Recv_init");
  gt_begin("MPI_Recv_init");
  gt_op_init(p->info.name, "recv");
  gt_end();
}

/* Prepares the buffer for a start and logs the op the start performs: a
 * send carries a fresh message id, a receive is posted. */
static void start_op(preq *p) {
  gt_match(W, p->peer, p->tag);
  if (p->mode) {
    gt_msgid id = gt_stamp(p->buf);
    gt_fill(p->buf, MSG);
    gt_op_send(p->mode, id, p->dest_world, p->info.name);
  } else {
    gt_unmark(p->buf);
    gt_op_post(p->info.name);
  }
}

/* The line is assembled before the call (a send's id must be in its buffer
 * when it starts) and written once the call returned. */
static void start_one(gt_reqs *s, preq *p) {
  gt_begin("MPI_Start");
  start_op(p);
  check_rc(MPI_Start(&p->req), "MPI_Start");
  gt_end();
  gt_reqs_add(s, p->req, &p->info, p->mode ? 0 : MSG, p->mode ? 0 : 1);
}

static void start_all(gt_reqs *s, preq **ps, int k) {
  MPI_Request rq[16];
  gt_begin("MPI_Startall");
  for (int i = 0; i < k; ++i) {
    start_op(ps[i]);
    rq[i] = ps[i]->req;
  }
  check_rc(MPI_Startall(k, rq), "MPI_Startall");
  gt_end();
  for (int i = 0; i < k; ++i) {
    ps[i]->req = rq[i];
    gt_reqs_add(s, rq[i], &ps[i]->info, ps[i]->mode ? 0 : MSG, ps[i]->mode ? 0 : 1);
  }
}

static void free_req(preq *p) {
  check_rc(MPI_Request_free(&p->req), "MPI_Request_free");
  gt_begin("MPI_Request_free");
  gt_op_free(p->info.name);
  gt_end();
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

  for (int m = 0; m < NMODES; ++m) {
    make_recv(&recvs[m], left, TAG_BASE + m);
    make_send(&sends[m], m, right, TAG_BASE + m);
  }
  if (me == 0) {
    for (int k = 1; k < n; ++k) make_recv(&wild[k], MPI_ANY_SOURCE, TAG_WILD);
  } else {
    make_send(&wsend, M_SYNC, 0, TAG_WILD);
  }
  make_send(&unused, M_STD, right, TAG_BASE + 7);

  unsigned long sum = 0;
  for (int r = 0; r < ROUNDS; ++r) {
    gt_reqs cur;
    gt_reqs_init(&cur);
    int odd = r % 2;

    /* Receives that must be posted before the barrier (ready mode), and in
     * even rounds the others too. */
    preq *pre[2] = {&recvs[M_READY], &recvs[M_BUF]};
    start_all(&cur, pre, 2);
    if (!odd) {
      start_one(&cur, &recvs[M_STD]);
      start_one(&cur, &recvs[M_SYNC]);
    }
    if (me == 0) {
      preq *w[16];
      for (int k = 1; k < n; ++k) w[k - 1] = &wild[k];
      if (odd) {
        for (int k = 0; k < n - 1; ++k) start_one(&cur, w[k]);
      } else {
        start_all(&cur, w, n - 1);
      }
    }

    MPI_Barrier(W);
    gt_log_coll("MPI_Barrier", "all_to_all", W, -1);

    if (odd) {
      preq *all[6] = {&recvs[M_STD], &recvs[M_SYNC], &sends[M_STD],
                      &sends[M_BUF], &sends[M_SYNC], &sends[M_READY]};
      start_all(&cur, all, 6);
    } else {
      for (int m = 0; m < NMODES; ++m) start_one(&cur, &sends[m]);
    }
    if (me != 0) start_one(&cur, &wsend);

    /* Inspecting a request neither completes nor clocks it. */
    gt_poll_status(&cur, 2);
    gt_complete(&cur, (gt_method)((r * 3) % GT_METHODS));
    sum += cur.digest;
  }

  for (int m = 0; m < NMODES; ++m) {
    free_req(&sends[m]);
    free_req(&recvs[m]);
  }
  if (me == 0) {
    for (int k = 1; k < n; ++k) free_req(&wild[k]);
  } else {
    free_req(&wsend);
  }
  free_req(&unused);

  MPI_Barrier(W);
  gt_log_coll("MPI_Barrier", "all_to_all", W, -1);
  MPI_Buffer_detach(&bspace, &bsize);
  free(bspace);

  printf("persistent rank %d sum %lu\n", me, sum);
  gt_finalize();
  MPI_Finalize();
  return 0;
}
