/* Non-blocking collectives (Ibarrier, Ibcast, Ireduce, Iallreduce,
 * Igather(v), Iscatter(v), Iallgather(v), Ialltoall(v,w),
 * Ireduce_scatter(_block), Iscan, Iexscan) and MPI 4 persistent collectives
 * (MPI_*_init, started several times, also in a different order at each
 * rank).
 *
 * Initiations are separated by point-to-point traffic and by blocking
 * collectives on the same communicator (each counts as the next instance
 * there), several instances on two communicators are outstanding at once,
 * and they are completed out of order together with point-to-point
 * requests (Waitany, Testsome, Waitsome, Testany, last-first Waits). Every
 * rank initiates the same instances in the same order, as MPI requires;
 * completion order is free. Results are checked after all completions, in a
 * fixed order, and folded into a printed checksum.
 *
 * MPICH 4.0.2 limits how persistent collectives can be exercised: later
 * starts of MPI_Gather_init / MPI_Allgather_init deliver stale data (so
 * their input is set before the _init and never changes), MPI_Testall
 * on them reports MPI_ERR_IN_STATUS with clean statuses, and once
 * non-blocking collectives have run, completing them by Waitany/Test can
 * fail with "Invalid communicator". So the first persistent phase runs
 * before any non-blocking collective and uses Waitsome, Testany, Waitany and
 * Testsome, the second one runs after them with Wait/Waitall only. */
#include <stdio.h>
#include <string.h>

#include "gt.h"

#define MSG 8
#define MAXN 4
#define BIG 32

static const MPI_Comm W = MPI_COMM_WORLD;
static int me, n;
static long acc;
static unsigned long sum;

static void check_rc(int rc, const char *what) {
  if (rc != MPI_SUCCESS) gt_fail("%s returned %d", what, rc);
}

static void fold(const long *v, int k) {
  for (int i = 0; i < k; ++i) acc = acc * 31 + v[i];
}

static void ring(MPI_Comm c, int tag) {
  int cr, cs;
  MPI_Comm_rank(c, &cr);
  MPI_Comm_size(c, &cs);
  int sb[MSG], rb[MSG];
  gt_reqs rq;
  gt_reqs_init(&rq);
  gt_irecv(&rq, rb, MSG, (cr - 1 + cs) % cs, tag, c);
  gt_send("std", sb, MSG, (cr + 1) % cs, tag, c);
  gt_complete(&rq, GT_WAITALL);
  sum += rq.digest;
}

/* Logs an initiation on an intracommunicator and adds its request to s. */
static void started(gt_reqs *s, const char *call, const char *kind, MPI_Comm c, int root,
                    MPI_Request r) {
  gt_req info;
  gt_req_send(&info);
  gt_log_icoll(call, kind, c, root, &info);
  gt_reqs_add(s, r, &info, 0, 0);
}

/* Buffers of one batch: untouched until the batch is complete. */
typedef struct {
  long v, bc, red, allred, gat[BIG], gatv[BIG], sca, scav[BIG], ag[BIG], agv[BIG], a2a[BIG],
      a2av[BIG], rs[BIG], rsb, scan, exscan;
  long src[BIG], src2[BIG], src3[BIG], src4[BIG], src5[BIG], src6[BIG], src7[BIG];
  int w_out[MAXN], w_in[MAXN];
  int counts[MAXN], displs[MAXN], total;
  int sc[MAXN], sd[MAXN], rc[MAXN], rd[MAXN];
  int wc[MAXN], wd[MAXN];
  MPI_Datatype wt[MAXN];
  int cr, cs, root, other;
} batch;

static batch B_world, B_split, B_world2;

/* Initiates every non-blocking collective on c into s; p2p on c and a
 * blocking collective in between. */
static void initiate_all(MPI_Comm c, batch *b, gt_reqs *s, int seed) {
  MPI_Request r;
  memset(b, 0, sizeof *b);
  MPI_Comm_rank(c, &b->cr);
  MPI_Comm_size(c, &b->cs);
  const int cr = b->cr, cs = b->cs;
  if (cs < 2) gt_fail("non-blocking collectives need two members here");
  b->root = seed % cs;
  b->other = cs - 1 - b->root;
  b->v = 1000L * seed + 10L * cr + 1;
  for (int i = 0; i < cs; ++i) {
    b->counts[i] = i + 1;
    b->displs[i] = b->total;
    b->total += i + 1;
    b->sc[i] = i + 1; /* Ialltoallv: j+1 elements to member j */
    b->rc[i] = cr + 1;
    b->wc[i] = 1;
    b->wd[i] = i * (int)sizeof(int);
    b->wt[i] = MPI_INT;
  }
  for (int i = 0, st = 0, rt = 0; i < cs; ++i) {
    b->sd[i] = st;
    st += b->sc[i];
    b->rd[i] = rt;
    rt += b->rc[i];
  }
  for (int i = 0; i < BIG; ++i) {
    b->src[i] = b->v + i;
    b->src2[i] = 7L * seed + i;
    b->src3[i] = b->v * 3 + i;
    b->src4[i] = b->v * 5 + i;
    b->src5[i] = b->v * 11 + i;
    b->src6[i] = b->v * 13 + i;
    b->src7[i] = b->v * 2 + i;
  }
  for (int i = 0; i < cs; ++i) b->w_out[i] = (int)b->v + i;

  check_rc(MPI_Ibarrier(c, &r), "MPI_Ibarrier");
  started(s, "MPI_Ibarrier", "all_to_all", c, -1, r);

  b->bc = cr == b->root ? b->v : -1;
  check_rc(MPI_Ibcast(&b->bc, 1, MPI_LONG, b->root, c, &r), "MPI_Ibcast");
  started(s, "MPI_Ibcast", "one_to_all", c, b->root, r);

  ring(c, 10 + seed);

  check_rc(MPI_Ireduce(&b->v, &b->red, 1, MPI_LONG, MPI_SUM, b->other, c, &r), "MPI_Ireduce");
  started(s, "MPI_Ireduce", "all_to_one", c, b->other, r);

  check_rc(MPI_Iallreduce(&b->v, &b->allred, 1, MPI_LONG, MPI_MAX, c, &r), "MPI_Iallreduce");
  started(s, "MPI_Iallreduce", "all_to_all", c, -1, r);

  /* A blocking collective while non-blocking ones are outstanding. */
  {
    long x = b->v, y = 0;
    check_rc(MPI_Allreduce(&x, &y, 1, MPI_LONG, MPI_SUM, c), "MPI_Allreduce");
    gt_log_coll("MPI_Allreduce", "all_to_all", c, -1);
    fold(&y, 1);
  }

  check_rc(MPI_Igather(&b->v, 1, MPI_LONG, b->gat, 1, MPI_LONG, b->root, c, &r), "MPI_Igather");
  started(s, "MPI_Igather", "all_to_one", c, b->root, r);

  check_rc(MPI_Igatherv(b->src, cr + 1, MPI_LONG, b->gatv, b->counts, b->displs, MPI_LONG,
                        b->other, c, &r),
           "MPI_Igatherv");
  started(s, "MPI_Igatherv", "all_to_one", c, b->other, r);

  check_rc(MPI_Iscatter(b->src2, 1, MPI_LONG, &b->sca, 1, MPI_LONG, b->other, c, &r),
           "MPI_Iscatter");
  started(s, "MPI_Iscatter", "one_to_all", c, b->other, r);

  ring(c, 20 + seed);

  check_rc(MPI_Iscatterv(b->src2, b->counts, b->displs, MPI_LONG, b->scav, cr + 1, MPI_LONG,
                         b->root, c, &r),
           "MPI_Iscatterv");
  started(s, "MPI_Iscatterv", "one_to_all", c, b->root, r);

  check_rc(MPI_Iallgather(&b->v, 1, MPI_LONG, b->ag, 1, MPI_LONG, c, &r), "MPI_Iallgather");
  started(s, "MPI_Iallgather", "all_to_all", c, -1, r);

  check_rc(MPI_Iallgatherv(b->src7, cr + 1, MPI_LONG, b->agv, b->counts, b->displs, MPI_LONG, c,
                           &r),
           "MPI_Iallgatherv");
  started(s, "MPI_Iallgatherv", "all_to_all", c, -1, r);

  check_rc(MPI_Ialltoall(b->src3, 1, MPI_LONG, b->a2a, 1, MPI_LONG, c, &r), "MPI_Ialltoall");
  started(s, "MPI_Ialltoall", "all_to_all", c, -1, r);

  check_rc(MPI_Ialltoallv(b->src4, b->sc, b->sd, MPI_LONG, b->a2av, b->rc, b->rd, MPI_LONG, c,
                          &r),
           "MPI_Ialltoallv");
  started(s, "MPI_Ialltoallv", "all_to_all", c, -1, r);

  check_rc(MPI_Ialltoallw(b->w_out, b->wc, b->wd, b->wt, b->w_in, b->wc, b->wd, b->wt, c, &r),
           "MPI_Ialltoallw");
  started(s, "MPI_Ialltoallw", "all_to_all", c, -1, r);

  ring(c, 30 + seed);

  check_rc(MPI_Ireduce_scatter(b->src, b->rs, b->counts, MPI_LONG, MPI_SUM, c, &r),
           "MPI_Ireduce_scatter");
  started(s, "MPI_Ireduce_scatter", "all_to_all", c, -1, r);

  check_rc(MPI_Ireduce_scatter_block(b->src5, &b->rsb, 1, MPI_LONG, MPI_SUM, c, &r),
           "MPI_Ireduce_scatter_block");
  started(s, "MPI_Ireduce_scatter_block", "all_to_all", c, -1, r);

  check_rc(MPI_Iscan(&b->v, &b->scan, 1, MPI_LONG, MPI_SUM, c, &r), "MPI_Iscan");
  started(s, "MPI_Iscan", "prefix", c, -1, r);

  check_rc(MPI_Iexscan(&b->v, &b->exscan, 1, MPI_LONG, MPI_SUM, c, &r), "MPI_Iexscan");
  started(s, "MPI_Iexscan", "prefix", c, -1, r);
}

static long contrib(int seed, int cr) { return 1000L * seed + 10L * cr + 1; }

static void check_all(const batch *b, int seed) {
  const int cr = b->cr, cs = b->cs;
  if (b->bc != contrib(seed, b->root)) gt_fail("Ibcast got %ld", b->bc);
  if (cr == b->other) fold(&b->red, 1);
  if (b->allred != contrib(seed, cs - 1)) gt_fail("Iallreduce got %ld", b->allred);
  if (cr == b->root)
    for (int i = 0; i < cs; ++i)
      if (b->gat[i] != contrib(seed, i)) gt_fail("Igather slot %d got %ld", i, b->gat[i]);
  if (cr == b->other) fold(b->gatv, b->total);
  if (b->sca != 7L * seed + cr) gt_fail("Iscatter got %ld", b->sca);
  fold(b->scav, cr + 1);
  for (int i = 0; i < cs; ++i)
    if (b->ag[i] != contrib(seed, i)) gt_fail("Iallgather slot %d got %ld", i, b->ag[i]);
  fold(b->agv, b->total);
  fold(b->a2a, cs);
  fold(b->a2av, cs * (cr + 1));
  for (int j = 0; j < cs; ++j)
    if (b->w_in[j] != (int)contrib(seed, j) + cr) gt_fail("Ialltoallw from %d", j);
  fold(b->rs, cr + 1);
  fold(&b->rsb, 1);
  long want = 0;
  for (int i = 0; i <= cr; ++i) want += contrib(seed, i);
  if (b->scan != want) gt_fail("Iscan got %ld, want %ld", b->scan, want);
  if (cr > 0 && b->exscan != want - contrib(seed, cr)) gt_fail("Iexscan got %ld", b->exscan);
}

/* ---- Persistent collectives ------------------------------------------- */

typedef struct {
  const char *init_call, *kind;
  int root; /* comm rank, -1 for none */
  MPI_Request req;
  gt_req info;
} pcoll;

/* MPI_Scatter_init is left out: in MPICH 4.0.2 its later starts deliver
 * stale data or fail with "Invalid communicator" at 3 or more ranks.
 * MPI_Scatterv_init covers one-to-all scattering instead. */
enum { P_BARRIER, P_BCAST, P_REDUCE, P_ALLREDUCE, P_GATHER, P_SCATTERV, P_ALLGATHER,
       P_ALLTOALL, P_RSB, P_SCAN, P_EXSCAN, P_COUNT };

static pcoll P[P_COUNT];
static long p_in, p_const, p_bc, p_red, p_allred, p_gat[MAXN], p_sca_src[MAXN], p_sca, p_ag[MAXN],
    p_a2a_src[MAXN], p_a2a[MAXN], p_rsb_src[MAXN], p_rsb, p_scan, p_exscan;

static void pinit(int k, const char *call, const char *kind, int root, int rc) {
  check_rc(rc, call);
  P[k].init_call = call;
  P[k].kind = kind;
  P[k].root = root;
  gt_req_send(&P[k].info);
  gt_begin(call);
  gt_op_init_coll(P[k].info.name, W);
  gt_end();
}

static void op_start(int k) {
  gt_op_coll_req(P[k].kind, W, P[k].root < 0 ? -1 : gt_world_of(W, P[k].root), P[k].info.name);
}

/* Persistent collectives on world, each started `rounds` times (alternately
 * one Startall of all, and single Starts in reverse order with other
 * traffic between them), completed by methods[round % 4]; never Testall
 * (see the top of the file). */
static void persistent_colls(int rounds, const gt_method *methods) {
  p_const = 7L * me + 3; /* before the _init calls: MPICH may take it there */
  pinit(P_BARRIER, "MPI_Barrier_init", "all_to_all", -1,
        MPI_Barrier_init(W, MPI_INFO_NULL, &P[P_BARRIER].req));
  pinit(P_BCAST, "MPI_Bcast_init", "one_to_all", n - 1,
        MPI_Bcast_init(&p_bc, 1, MPI_LONG, n - 1, W, MPI_INFO_NULL, &P[P_BCAST].req));
  pinit(P_REDUCE, "MPI_Reduce_init", "all_to_one", 0,
        MPI_Reduce_init(&p_in, &p_red, 1, MPI_LONG, MPI_SUM, 0, W, MPI_INFO_NULL,
                        &P[P_REDUCE].req));
  pinit(P_ALLREDUCE, "MPI_Allreduce_init", "all_to_all", -1,
        MPI_Allreduce_init(&p_in, &p_allred, 1, MPI_LONG, MPI_MAX, W, MPI_INFO_NULL,
                           &P[P_ALLREDUCE].req));
  pinit(P_GATHER, "MPI_Gather_init", "all_to_one", 1 % n,
        MPI_Gather_init(&p_const, 1, MPI_LONG, p_gat, 1, MPI_LONG, 1 % n, W, MPI_INFO_NULL,
                        &P[P_GATHER].req));
  int ones[MAXN], idx[MAXN];
  for (int i = 0; i < n; ++i) {
    ones[i] = 1;
    idx[i] = i;
  }
  pinit(P_SCATTERV, "MPI_Scatterv_init", "one_to_all", 0,
        MPI_Scatterv_init(p_sca_src, ones, idx, MPI_LONG, &p_sca, 1, MPI_LONG, 0, W,
                          MPI_INFO_NULL, &P[P_SCATTERV].req));
  pinit(P_ALLGATHER, "MPI_Allgather_init", "all_to_all", -1,
        MPI_Allgather_init(&p_const, 1, MPI_LONG, p_ag, 1, MPI_LONG, W, MPI_INFO_NULL,
                           &P[P_ALLGATHER].req));
  pinit(P_ALLTOALL, "MPI_Alltoall_init", "all_to_all", -1,
        MPI_Alltoall_init(p_a2a_src, 1, MPI_LONG, p_a2a, 1, MPI_LONG, W, MPI_INFO_NULL,
                          &P[P_ALLTOALL].req));
  pinit(P_RSB, "MPI_Reduce_scatter_block_init", "all_to_all", -1,
        MPI_Reduce_scatter_block_init(p_rsb_src, &p_rsb, 1, MPI_LONG, MPI_SUM, W,
                                      MPI_INFO_NULL, &P[P_RSB].req));
  pinit(P_SCAN, "MPI_Scan_init", "prefix", -1,
        MPI_Scan_init(&p_in, &p_scan, 1, MPI_LONG, MPI_SUM, W, MPI_INFO_NULL, &P[P_SCAN].req));
  pinit(P_EXSCAN, "MPI_Exscan_init", "prefix", -1,
        MPI_Exscan_init(&p_in, &p_exscan, 1, MPI_LONG, MPI_SUM, W, MPI_INFO_NULL,
                        &P[P_EXSCAN].req));

  for (int round = 0; round < rounds; ++round) {
    p_in = 100L * round + me;
    p_bc = me == n - 1 ? 77L + round : -1;
    for (int i = 0; i < n; ++i) {
      p_sca_src[i] = 10L * round + i;
      p_a2a_src[i] = 1000L * me + 10L * round + i;
      p_rsb_src[i] = me + i + round;
    }
    gt_reqs s;
    gt_reqs_init(&s);
    if (round % 2 == 0) {
      /* One Startall of everything: instances in array order. */
      MPI_Request rq[P_COUNT];
      gt_begin("MPI_Startall");
      for (int k = 0; k < P_COUNT; ++k) {
        op_start(k);
        rq[k] = P[k].req;
      }
      check_rc(MPI_Startall(P_COUNT, rq), "MPI_Startall");
      gt_end();
      for (int k = 0; k < P_COUNT; ++k) gt_reqs_add(&s, P[k].req, &P[k].info, 0, 0);
    } else {
      /* Individual Starts in reverse order, with point-to-point and a
       * blocking collective (the next instance on world) among them. */
      for (int k = P_COUNT - 1; k >= 0; --k) {
        gt_begin("MPI_Start");
        op_start(k);
        check_rc(MPI_Start(&P[k].req), "MPI_Start");
        gt_end();
        gt_reqs_add(&s, P[k].req, &P[k].info, 0, 0);
        if (k == P_COUNT / 2) {
          ring(W, 50 + round);
          long x = me, y = 0;
          check_rc(MPI_Allreduce(&x, &y, 1, MPI_LONG, MPI_SUM, W), "MPI_Allreduce");
          gt_log_coll("MPI_Allreduce", "all_to_all", W, -1);
          fold(&y, 1);
        }
      }
    }
    gt_complete(&s, methods[round % 4]);
    if (p_bc != 77L + round) gt_fail("persistent Bcast got %ld", p_bc);
    if (me == 0) fold(&p_red, 1);
    fold(&p_allred, 1);
    for (int i = 0; i < n; ++i) {
      if (me == 1 % n && p_gat[i] != 7L * i + 3) gt_fail("persistent Gather slot %d", i);
      if (p_ag[i] != 7L * i + 3) gt_fail("persistent Allgather slot %d", i);
    }
    if (p_sca != 10L * round + me) gt_fail("persistent Scatterv got %ld", p_sca);
    fold(p_a2a, n);
    fold(&p_rsb, 1);
    fold(&p_scan, 1);
    if (me > 0) fold(&p_exscan, 1);
  }
  for (int k = 0; k < P_COUNT; ++k) {
    check_rc(MPI_Request_free(&P[k].req), "MPI_Request_free");
    gt_begin("MPI_Request_free");
    gt_op_free(P[k].info.name);
    gt_end();
  }
}

/* MPI orders the _init calls of persistent collectives, not their starts:
 * here every rank starts a barrier, a bcast and an allreduce in an order of
 * its own (rotated by its rank and the round), so at N>=2 members start
 * different instances first, as in one rank starting the bcast before the
 * barrier and the other the barrier first. Completed by Waitall. */
static long q_bc, q_in, q_out;

static void persistent_any_order(int rounds) {
  enum { Q_BARRIER, Q_BCAST, Q_ALLREDUCE, Q_COUNT };
  static pcoll Q[Q_COUNT];
  static const char *const calls[Q_COUNT] = {"MPI_Barrier_init", "MPI_Bcast_init",
                                             "MPI_Allreduce_init"};
  static const char *const kinds[Q_COUNT] = {"all_to_all", "one_to_all", "all_to_all"};
  check_rc(MPI_Barrier_init(W, MPI_INFO_NULL, &Q[Q_BARRIER].req), calls[Q_BARRIER]);
  check_rc(MPI_Bcast_init(&q_bc, 1, MPI_LONG, 0, W, MPI_INFO_NULL, &Q[Q_BCAST].req),
           calls[Q_BCAST]);
  check_rc(MPI_Allreduce_init(&q_in, &q_out, 1, MPI_LONG, MPI_SUM, W, MPI_INFO_NULL,
                              &Q[Q_ALLREDUCE].req),
           calls[Q_ALLREDUCE]);
  for (int k = 0; k < Q_COUNT; ++k) {
    Q[k].kind = kinds[k];
    Q[k].root = k == Q_BCAST ? 0 : -1;
    gt_req_send(&Q[k].info);
    gt_begin(calls[k]);
    gt_op_init_coll(Q[k].info.name, W);
    gt_end();
  }
  for (int round = 0; round < rounds; ++round) {
    q_bc = me == 0 ? 500L + round : -1;
    q_in = me + round;
    gt_reqs s;
    gt_reqs_init(&s);
    for (int i = 0; i < Q_COUNT; ++i) {
      const int k = (me + round + i) % Q_COUNT;
      gt_begin("MPI_Start");
      gt_op_coll_req(Q[k].kind, W, Q[k].root < 0 ? -1 : gt_world_of(W, Q[k].root),
                     Q[k].info.name);
      check_rc(MPI_Start(&Q[k].req), "MPI_Start");
      gt_end();
      gt_reqs_add(&s, Q[k].req, &Q[k].info, 0, 0);
    }
    gt_complete(&s, GT_WAITALL);
    if (q_bc != 500L + round) gt_fail("out-of-order persistent Bcast got %ld", q_bc);
    if (q_out != (long)n * (n - 1) / 2 + (long)n * round)
      gt_fail("out-of-order persistent Allreduce got %ld", q_out);
    fold(&q_out, 1);
  }
  for (int k = 0; k < Q_COUNT; ++k) {
    check_rc(MPI_Request_free(&Q[k].req), "MPI_Request_free");
    gt_begin("MPI_Request_free");
    gt_op_free(Q[k].info.name);
    gt_end();
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  gt_init();
  me = gt_rank();
  n = gt_size();
  if (n > MAXN) gt_fail("at most %d ranks", MAXN);
  int right = (me + 1) % n, left = (me - 1 + n) % n;

  /* A second communicator with reversed keys: the parity classes at N=4,
   * all of world in reverse order at N=2 and 3. Never a single member: what
   * a lone member's non-blocking root or prefix parts are is not settled
   * by the rules (see the oracle's tests). */
  MPI_Comm sp;
  const int colour = n == 4 ? me % 2 : 0;
  MPI_Comm_split(W, colour, n - me, &sp);
  char name[32];
  snprintf(name, sizeof name, "split.c%d", colour);
  gt_comm_add(sp, name);

  static const gt_method early[4] = {GT_WAITSOME, GT_TESTANY, GT_WAITANY, GT_TESTSOME};
  persistent_colls(4, early);
  persistent_any_order(3);

  /* Batch 1: world and split instances outstanding together, completed with
   * neighbour traffic by Waitany. */
  {
    gt_reqs s;
    gt_reqs_init(&s);
    int sb[2][MSG], rb[2][MSG];
    gt_irecv(&s, rb[0], MSG, left, 1, W);
    initiate_all(W, &B_world, &s, 1);
    initiate_all(sp, &B_split, &s, 2);
    gt_isend(&s, "sync", sb[0], MSG, right, 1, W);
    gt_irecv(&s, rb[1], MSG, MPI_ANY_SOURCE, 2, W);
    gt_isend(&s, "std", sb[1], MSG, left, 2, W);
    gt_complete(&s, GT_WAITANY);
    sum += s.digest;
    check_all(&B_world, 1);
    check_all(&B_split, 2);
  }

  /* Batch 2: completed by Testsome, then once more on world by last-first
   * Waits. */
  {
    gt_reqs s;
    gt_reqs_init(&s);
    initiate_all(W, &B_world2, &s, 3);
    ring(W, 40);
    gt_complete(&s, GT_TESTSOME);
    check_all(&B_world2, 3);

    gt_reqs_init(&s);
    initiate_all(sp, &B_split, &s, 4);
    initiate_all(W, &B_world, &s, 5);
    gt_complete(&s, GT_WAIT_EACH);
    check_all(&B_split, 4);
    check_all(&B_world, 5);
  }

  /* Persistent collectives once more, after the non-blocking ones: Wait and
   * Waitall only (see the top of the file). */
  static const gt_method late[4] = {GT_WAITALL, GT_WAIT_EACH, GT_WAITALL, GT_WAIT_EACH};
  persistent_colls(2, late);

  /* Non-blocking collectives that complete at once: on one-member
   * communicators MPICH returns one shared, predefined request for all of
   * them. Several pending together, completed last first, must still each
   * complete its own instance. */
  {
    MPI_Comm lone;
    MPI_Comm_split(W, me, 0, &lone);
    char lone_name[32];
    snprintf(lone_name, sizeof lone_name, "lone.r%d", me);
    gt_comm_add(lone, lone_name);
    gt_reqs s;
    gt_reqs_init(&s);
    long in = me + 1, out[2] = {0, 0};
    MPI_Request r;
    check_rc(MPI_Ibarrier(lone, &r), "MPI_Ibarrier");
    started(&s, "MPI_Ibarrier", "all_to_all", lone, -1, r);
    check_rc(MPI_Iallreduce(&in, &out[0], 1, MPI_LONG, MPI_SUM, lone, &r), "MPI_Iallreduce");
    started(&s, "MPI_Iallreduce", "all_to_all", lone, -1, r);
    ring(W, 41);
    check_rc(MPI_Iallreduce(&in, &out[1], 1, MPI_LONG, MPI_SUM, lone, &r), "MPI_Iallreduce");
    started(&s, "MPI_Iallreduce", "all_to_all", lone, -1, r);
    gt_complete(&s, GT_WAIT_EACH);
    if (out[0] != in || out[1] != in) gt_fail("lone Iallreduce got %ld, %ld", out[0], out[1]);
    gt_comm_remove(lone);
    MPI_Comm_free(&lone);
  }

  gt_comm_remove(sp);
  MPI_Comm_free(&sp);
  MPI_Barrier(W);
  gt_log_coll("MPI_Barrier", "all_to_all", W, -1);
  printf("nbc rank %d acc %ld sum %lu\n", me, acc, sum);
  gt_finalize();
  MPI_Finalize();
  return 0;
}
