/* Neighbourhood collectives, blocking (Neighbor_allgather(v),
 * Neighbor_alltoall(v,w)), non-blocking (Ineighbor_*) and persistent
 * (Neighbor_*_init), on:
 *   - a 1-D periodic ring of all ranks (at N=2 the other rank is both
 *     neighbours);
 *   - a 2-D Cartesian grid with one periodic and one non-periodic dimension
 *     (N=2: 2x1, N=3: 3x1, the periodic dimension of size 1 making a rank
 *     its own neighbour twice; N=4: 2x2 with the periodic dimension of size
 *     2); MPI_PROC_NULL neighbours at the open ends;
 *   - a graph topology (a hub joined to everybody, the edge 0-1 doubled, a
 *     chain among the others);
 *   - a distributed graph from MPI_Dist_graph_create_adjacent with
 *     asymmetric edges (0->1 twice, i->i+1, 0->j): rank 0 only sends, the
 *     last rank only receives.
 * Point-to-point traffic between the calls makes the clocks of the ranks
 * differ. Each received block is checked to come from the neighbour MPI
 * names for it; the values are summed into a printed checksum. */
#include <stdio.h>
#include <string.h>

#include "gt.h"

#define MSG 8
#define MAXNB 16

static const MPI_Comm W = MPI_COMM_WORLD;
static int me, n;
static long acc;
static unsigned long sum;

static void check_rc(int rc, const char *what) {
  if (rc != MPI_SUCCESS) gt_fail("%s returned %d", what, rc);
}

/* The neighbour lists of the calling rank, as communicator ranks (the
 * topologies here keep world ranks), MPI_PROC_NULL included. */
typedef struct {
  int nin, nout;
  int in[MAXNB], out[MAXNB];
} nbrs;

static nbrs neighbours(MPI_Comm c) {
  nbrs b;
  int topo;
  MPI_Topo_test(c, &topo);
  if (topo == MPI_CART) {
    int nd;
    MPI_Cartdim_get(c, &nd);
    b.nin = 0;
    for (int d = 0; d < nd; ++d) {
      int lo, hi;
      MPI_Cart_shift(c, d, 1, &lo, &hi);
      b.in[b.nin++] = lo;
      b.in[b.nin++] = hi;
    }
    b.nout = b.nin;
    memcpy(b.out, b.in, sizeof b.in);
  } else if (topo == MPI_GRAPH) {
    MPI_Graph_neighbors_count(c, me, &b.nin);
    MPI_Graph_neighbors(c, me, b.nin, b.in);
    b.nout = b.nin;
    memcpy(b.out, b.in, sizeof b.in);
  } else {
    int w;
    MPI_Dist_graph_neighbors_count(c, &b.nin, &b.nout, &w);
    /* Exact degrees: MPICH copies as many entries as it is told. */
    MPI_Dist_graph_neighbors(c, b.nin, b.in, MPI_UNWEIGHTED, b.nout, b.out, MPI_UNWEIGHTED);
  }
  return b;
}

/* Values a rank sends: its world rank in the hundreds, so the receiver can
 * tell where a block came from. */
static long val(int sender, int k) { return 100L * sender + k + 1; }

/* Block j of a receive buffer must come from in-neighbour j (nothing
 * arrives from MPI_PROC_NULL: the slot keeps its fill value). */
static void check_blocks(const nbrs *b, const long *r, int per_block, const char *what) {
  for (int j = 0; j < b->nin; ++j)
    for (int e = 0; e < per_block; ++e) {
      long v = r[j * per_block + e];
      if (b->in[j] == MPI_PROC_NULL) {
        if (v != -7) gt_fail("%s: slot %d from MPI_PROC_NULL changed", what, j);
        continue;
      }
      if (v / 100 != b->in[j]) gt_fail("%s: slot %d has %ld, not from rank %d", what, j, v,
                                       b->in[j]);
      acc += v;
    }
}

static void fill(long *r, int k) {
  for (int i = 0; i < k; ++i) r[i] = -7;
}

static void ring_p2p(int tag) {
  int sb[MSG], rb[MSG];
  gt_reqs rq;
  gt_reqs_init(&rq);
  gt_irecv(&rq, rb, MSG, (me - 1 + n) % n, tag, W);
  gt_send("std", sb, MSG, (me + 1) % n, tag, W);
  gt_complete(&rq, GT_WAITALL);
  sum += rq.digest;
}

static void log_blocking(const char *call, MPI_Comm c) {
  gt_begin(call);
  gt_op_neighbor(c, NULL);
  gt_end();
}

static void blocking_all(MPI_Comm c) {
  nbrs b = neighbours(c);
  long s[MAXNB * 2], r[MAXNB * 2];
  int sc[MAXNB], sd[MAXNB], rc[MAXNB], rd[MAXNB];
  MPI_Aint sdw[MAXNB], rdw[MAXNB];
  MPI_Datatype types[MAXNB];
  for (int k = 0; k < MAXNB * 2; ++k) s[k] = val(me, k);

  fill(r, b.nin);
  check_rc(MPI_Neighbor_allgather(s, 1, MPI_LONG, r, 1, MPI_LONG, c), "MPI_Neighbor_allgather");
  log_blocking("MPI_Neighbor_allgather", c);
  check_blocks(&b, r, 1, "Neighbor_allgather");

  fill(r, MAXNB * 2);
  check_rc(MPI_Neighbor_alltoall(s, 1, MPI_LONG, r, 1, MPI_LONG, c), "MPI_Neighbor_alltoall");
  log_blocking("MPI_Neighbor_alltoall", c);
  check_blocks(&b, r, 1, "Neighbor_alltoall");

  ring_p2p(60);

  /* v-variants with two elements per block, laid out in order. */
  for (int j = 0; j < MAXNB; ++j) {
    sc[j] = rc[j] = 2;
    sd[j] = rd[j] = 2 * j;
    sdw[j] = rdw[j] = (MPI_Aint)(2 * j * sizeof(long));
    types[j] = MPI_LONG;
  }
  fill(r, 2 * b.nin);
  check_rc(MPI_Neighbor_allgatherv(s, 2, MPI_LONG, r, rc, rd, MPI_LONG, c),
           "MPI_Neighbor_allgatherv");
  log_blocking("MPI_Neighbor_allgatherv", c);
  check_blocks(&b, r, 2, "Neighbor_allgatherv");

  fill(r, 2 * b.nin);
  check_rc(MPI_Neighbor_alltoallv(s, sc, sd, MPI_LONG, r, rc, rd, MPI_LONG, c),
           "MPI_Neighbor_alltoallv");
  log_blocking("MPI_Neighbor_alltoallv", c);
  check_blocks(&b, r, 2, "Neighbor_alltoallv");

  fill(r, 2 * b.nin);
  check_rc(MPI_Neighbor_alltoallw(s, sc, sdw, types, r, rc, rdw, types, c),
           "MPI_Neighbor_alltoallw");
  log_blocking("MPI_Neighbor_alltoallw", c);
  check_blocks(&b, r, 2, "Neighbor_alltoallw");
}

/* Buffers of the non-blocking and persistent calls of one communicator. */
typedef struct {
  long s[MAXNB * 2], r1[MAXNB * 2], r2[MAXNB * 2], r3[MAXNB * 2];
  int cnt[MAXNB], dsp[MAXNB];
} nbufs;

static void add_req(gt_reqs *set, const char *call, MPI_Comm c, MPI_Request r) {
  gt_req info;
  gt_req_send(&info);
  gt_begin(call);
  gt_op_neighbor(c, info.name);
  gt_end();
  gt_reqs_add(set, r, &info, 0, 0);
}

static void start_nonblocking(MPI_Comm c, nbufs *u, gt_reqs *set) {
  MPI_Request r;
  for (int k = 0; k < MAXNB * 2; ++k) u->s[k] = val(me, k);
  for (int j = 0; j < MAXNB; ++j) {
    u->cnt[j] = 1;
    u->dsp[j] = j;
  }
  fill(u->r1, MAXNB * 2);
  fill(u->r2, MAXNB * 2);
  fill(u->r3, MAXNB * 2);
  check_rc(MPI_Ineighbor_allgather(u->s, 1, MPI_LONG, u->r1, 1, MPI_LONG, c, &r),
           "MPI_Ineighbor_allgather");
  add_req(set, "MPI_Ineighbor_allgather", c, r);
  check_rc(MPI_Ineighbor_alltoall(u->s, 1, MPI_LONG, u->r2, 1, MPI_LONG, c, &r),
           "MPI_Ineighbor_alltoall");
  add_req(set, "MPI_Ineighbor_alltoall", c, r);
  check_rc(MPI_Ineighbor_alltoallv(u->s, u->cnt, u->dsp, MPI_LONG, u->r3, u->cnt, u->dsp,
                                   MPI_LONG, c, &r),
           "MPI_Ineighbor_alltoallv");
  add_req(set, "MPI_Ineighbor_alltoallv", c, r);
}

static void check_nonblocking(MPI_Comm c, const nbufs *u) {
  nbrs b = neighbours(c);
  check_blocks(&b, u->r1, 1, "Ineighbor_allgather");
  check_blocks(&b, u->r2, 1, "Ineighbor_alltoall");
  check_blocks(&b, u->r3, 1, "Ineighbor_alltoallv");
}

static MPI_Comm make_ring(void) {
  int dims[1] = {n}, periods[1] = {1};
  MPI_Comm c;
  check_rc(MPI_Cart_create(W, 1, dims, periods, 0, &c), "MPI_Cart_create");
  gt_comm_add(c, "ring");
  return c;
}

static MPI_Comm make_grid(void) {
  int dims[2], periods[2];
  if (n == 4) {
    dims[0] = 2, dims[1] = 2, periods[0] = 1, periods[1] = 0;
  } else {
    dims[0] = n, dims[1] = 1, periods[0] = 0, periods[1] = 1;
  }
  MPI_Comm c;
  check_rc(MPI_Cart_create(W, 2, dims, periods, 0, &c), "MPI_Cart_create");
  gt_comm_add(c, "grid");
  return c;
}

static MPI_Comm make_graph(void) {
  /* Adjacency (symmetric, with multiplicity): 0: 1,1,2..n-1; 1: 0,0,[2];
   * i>=2: 0, i-1, [i+1]. */
  int index[8], edges[64], e = 0;
  for (int v = 0; v < n; ++v) {
    if (v == 0) {
      edges[e++] = 1;
      for (int j = 1; j < n; ++j) edges[e++] = j;
    } else {
      edges[e++] = 0;
      if (v == 1) edges[e++] = 0;
      if (v >= 2) edges[e++] = v - 1;
      if (v >= 1 && v + 1 < n) edges[e++] = v + 1;
    }
    index[v] = e;
  }
  MPI_Comm c;
  check_rc(MPI_Graph_create(W, n, index, edges, 0, &c), "MPI_Graph_create");
  gt_comm_add(c, "graph");
  return c;
}

static MPI_Comm make_dist_graph(void) {
  /* Edges: 0->1 twice, i->i+1 for i>=1, 0->j for j>=2. */
  int src[MAXNB], dst[MAXNB], ns = 0, nd = 0;
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      int mult = 0;
      if (a == 0 && b == 1) mult = 2;
      if (a >= 1 && b == a + 1) mult += 1;
      if (a == 0 && b >= 2) mult += 1;
      for (int k = 0; k < mult; ++k) {
        if (a == me) dst[nd++] = b;
        if (b == me) src[ns++] = a;
      }
    }
  MPI_Comm c;
  check_rc(MPI_Dist_graph_create_adjacent(W, ns, src, MPI_UNWEIGHTED, nd, dst, MPI_UNWEIGHTED,
                                          MPI_INFO_NULL, 0, &c),
           "MPI_Dist_graph_create_adjacent");
  gt_comm_add(c, "dgraph");
  return c;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  gt_init();
  me = gt_rank();
  n = gt_size();
  if (n > 4) gt_fail("at most 4 ranks");

  MPI_Comm comms[4] = {make_ring(), make_grid(), make_graph(), make_dist_graph()};

  /* Blocking, with unrelated traffic in between. */
  for (int t = 0; t < 4; ++t) {
    blocking_all(comms[t]);
    ring_p2p(70 + t);
  }

  /* Non-blocking on all four at once, completed out of order with
   * point-to-point requests. */
  {
    static nbufs u[4];
    gt_reqs set;
    gt_reqs_init(&set);
    int sb[MSG], rb[MSG];
    gt_irecv(&set, rb, MSG, MPI_ANY_SOURCE, 80, W);
    for (int t = 0; t < 4; ++t) {
      start_nonblocking(comms[t], &u[t], &set);
      if (t == 1) ring_p2p(81);
    }
    gt_isend(&set, "sync", sb, MSG, (me + 1) % n, 80, W);
    gt_complete(&set, GT_TESTSOME);
    sum += set.digest;
    for (int t = 0; t < 4; ++t) check_nonblocking(comms[t], &u[t]);
  }

  /* Persistent on the grid and the distributed graph, started three times
   * each; blocking calls on the same communicators in between. */
  {
    static nbufs u[2];
    MPI_Comm pc[2] = {comms[1], comms[3]};
    MPI_Request preq[2][2];
    gt_req pinfo[2][2];
    for (int t = 0; t < 2; ++t) {
      for (int k = 0; k < MAXNB * 2; ++k) u[t].s[k] = val(me, k);
      for (int j = 0; j < MAXNB; ++j) {
        u[t].cnt[j] = 1;
        u[t].dsp[j] = j;
      }
      check_rc(MPI_Neighbor_allgather_init(u[t].s, 1, MPI_LONG, u[t].r1, 1, MPI_LONG, pc[t],
                                           MPI_INFO_NULL, &preq[t][0]),
               "MPI_Neighbor_allgather_init");
      gt_req_send(&pinfo[t][0]);
      gt_begin("MPI_Neighbor_allgather_init");
      gt_op_init_coll(pinfo[t][0].name, pc[t]);
      gt_end();
      check_rc(MPI_Neighbor_alltoallv_init(u[t].s, u[t].cnt, u[t].dsp, MPI_LONG, u[t].r3,
                                           u[t].cnt, u[t].dsp, MPI_LONG, pc[t], MPI_INFO_NULL,
                                           &preq[t][1]),
               "MPI_Neighbor_alltoallv_init");
      gt_req_send(&pinfo[t][1]);
      gt_begin("MPI_Neighbor_alltoallv_init");
      gt_op_init_coll(pinfo[t][1].name, pc[t]);
      gt_end();
    }
    for (int round = 0; round < 3; ++round) {
      gt_reqs set;
      gt_reqs_init(&set);
      for (int t = 0; t < 2; ++t) {
        fill(u[t].r1, MAXNB * 2);
        fill(u[t].r3, MAXNB * 2);
        gt_begin("MPI_Startall");
        gt_op_neighbor(pc[t], pinfo[t][0].name);
        gt_op_neighbor(pc[t], pinfo[t][1].name);
        check_rc(MPI_Startall(2, preq[t]), "MPI_Startall");
        gt_end();
        gt_reqs_add(&set, preq[t][0], &pinfo[t][0], 0, 0);
        gt_reqs_add(&set, preq[t][1], &pinfo[t][1], 0, 0);
      }
      ring_p2p(90 + round);
      gt_complete(&set, round == 1 ? GT_WAIT_EACH : GT_WAITALL);
      for (int t = 0; t < 2; ++t) {
        nbrs b = neighbours(pc[t]);
        check_blocks(&b, u[t].r1, 1, "persistent Neighbor_allgather");
        check_blocks(&b, u[t].r3, 1, "persistent Neighbor_alltoallv");
        long s1 = val(me, 0), r1[MAXNB];
        fill(r1, MAXNB);
        check_rc(MPI_Neighbor_allgather(&s1, 1, MPI_LONG, r1, 1, MPI_LONG, pc[t]),
                 "MPI_Neighbor_allgather");
        log_blocking("MPI_Neighbor_allgather", pc[t]);
        check_blocks(&b, r1, 1, "Neighbor_allgather");
      }
    }
    for (int t = 0; t < 2; ++t)
      for (int k = 0; k < 2; ++k) {
        check_rc(MPI_Request_free(&preq[t][k]), "MPI_Request_free");
        gt_begin("MPI_Request_free");
        gt_op_free(pinfo[t][k].name);
        gt_end();
      }
  }

  for (int t = 3; t >= 0; --t) {
    gt_comm_remove(comms[t]);
    MPI_Comm_free(&comms[t]);
  }
  MPI_Barrier(W);
  gt_log_coll("MPI_Barrier", "all_to_all", W, -1);
  printf("neighbor rank %d acc %ld sum %lu\n", me, acc, sum);
  gt_finalize();
  MPI_Finalize();
  return 0;
}
