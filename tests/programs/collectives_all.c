/* Every blocking collective of the exchange paper's Table II plus the prefix ones:
 * Barrier, Bcast, Reduce, Allreduce, Gather(v), Scatter(v), Allgather(v),
 * Alltoall(v,w), Reduce_scatter(_block), Scan and Exscan, on
 * MPI_COMM_WORLD, on a duplicate and on splits with reversed keys (so
 * communicator rank order, which the prefix follows, is not world order;
 * at N=3 one split has a single member). Point-to-point between the
 * collectives makes the clocks differ from rank to rank. Results are
 * checked where they are simple and all folded into a printed checksum. */
#include <stdio.h>
#include <string.h>

#include "gt.h"

#define MSG 8
#define MAXN 4
#define BIG 64

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

/* Ring on c: receive posted first, so a single member sends to itself. */
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

/* Member i contributes base + i (i: communicator rank). */
static long contrib(int seed, int cr) { return 1000L * seed + 10L * cr + 1; }

static void all_colls(MPI_Comm c, int seed) {
  int cr, cs;
  MPI_Comm_rank(c, &cr);
  MPI_Comm_size(c, &cs);
  const int root = seed % cs, other = (cs - 1 - root + cs) % cs;
  long v = contrib(seed, cr), out = 0, a[BIG], b[BIG];
  int counts[MAXN], displs[MAXN], total = 0;
  for (int i = 0; i < cs; ++i) {
    counts[i] = i + 1;
    displs[i] = total;
    total += counts[i];
  }

  check_rc(MPI_Barrier(c), "MPI_Barrier");
  gt_log_coll("MPI_Barrier", "all_to_all", c, -1);

  out = cr == root ? v : -1;
  check_rc(MPI_Bcast(&out, 1, MPI_LONG, root, c), "MPI_Bcast");
  gt_log_coll("MPI_Bcast", "one_to_all", c, root);
  if (out != contrib(seed, root)) gt_fail("Bcast got %ld", out);
  fold(&out, 1);

  check_rc(MPI_Reduce(&v, &out, 1, MPI_LONG, MPI_SUM, other, c), "MPI_Reduce");
  gt_log_coll("MPI_Reduce", "all_to_one", c, other);
  if (cr == other) fold(&out, 1);

  ring(c, 100 + seed);

  check_rc(MPI_Allreduce(&v, &out, 1, MPI_LONG, MPI_MAX, c), "MPI_Allreduce");
  gt_log_coll("MPI_Allreduce", "all_to_all", c, -1);
  if (out != contrib(seed, cs - 1)) gt_fail("Allreduce got %ld", out);

  check_rc(MPI_Gather(&v, 1, MPI_LONG, a, 1, MPI_LONG, root, c), "MPI_Gather");
  gt_log_coll("MPI_Gather", "all_to_one", c, root);
  if (cr == root) fold(a, cs);

  for (int i = 0; i <= cr; ++i) b[i] = v + i;
  check_rc(MPI_Gatherv(b, cr + 1, MPI_LONG, a, counts, displs, MPI_LONG, other, c),
           "MPI_Gatherv");
  gt_log_coll("MPI_Gatherv", "all_to_one", c, other);
  if (cr == other) fold(a, total);

  for (int i = 0; i < total; ++i) a[i] = 7L * seed + i;
  check_rc(MPI_Scatter(a, 1, MPI_LONG, &out, 1, MPI_LONG, other, c), "MPI_Scatter");
  gt_log_coll("MPI_Scatter", "one_to_all", c, other);
  if (out != 7L * seed + cr) gt_fail("Scatter got %ld", out);

  check_rc(MPI_Scatterv(a, counts, displs, MPI_LONG, b, cr + 1, MPI_LONG, root, c),
           "MPI_Scatterv");
  gt_log_coll("MPI_Scatterv", "one_to_all", c, root);
  fold(b, cr + 1);

  ring(c, 200 + seed);

  check_rc(MPI_Allgather(&v, 1, MPI_LONG, a, 1, MPI_LONG, c), "MPI_Allgather");
  gt_log_coll("MPI_Allgather", "all_to_all", c, -1);
  for (int i = 0; i < cs; ++i)
    if (a[i] != contrib(seed, i)) gt_fail("Allgather slot %d got %ld", i, a[i]);

  for (int i = 0; i <= cr; ++i) b[i] = v * 2 + i;
  check_rc(MPI_Allgatherv(b, cr + 1, MPI_LONG, a, counts, displs, MPI_LONG, c),
           "MPI_Allgatherv");
  gt_log_coll("MPI_Allgatherv", "all_to_all", c, -1);
  fold(a, total);

  for (int i = 0; i < cs; ++i) b[i] = v * 3 + i;
  check_rc(MPI_Alltoall(b, 1, MPI_LONG, a, 1, MPI_LONG, c), "MPI_Alltoall");
  gt_log_coll("MPI_Alltoall", "all_to_all", c, -1);
  fold(a, cs);

  /* Alltoallv: member i sends j+1 elements to member j. */
  {
    int sc[MAXN], sd[MAXN], rc[MAXN], rd[MAXN], st = 0, rt = 0;
    for (int j = 0; j < cs; ++j) {
      sc[j] = j + 1;
      sd[j] = st;
      st += sc[j];
      rc[j] = cr + 1;
      rd[j] = rt;
      rt += rc[j];
    }
    for (int i = 0; i < st; ++i) b[i] = v * 5 + i;
    check_rc(MPI_Alltoallv(b, sc, sd, MPI_LONG, a, rc, rd, MPI_LONG, c), "MPI_Alltoallv");
    gt_log_coll("MPI_Alltoallv", "all_to_all", c, -1);
    fold(a, rt);
  }

  /* Alltoallw: odd members send longs, even ones ints; the receive side
   * packs both kinds into one byte buffer (displacements in bytes). */
  {
    int sc[MAXN], sd[MAXN], rc[MAXN], rd[MAXN], rdisp = 0;
    MPI_Datatype stypes[MAXN], rtypes[MAXN];
    int ints_out[MAXN];
    long longs_out[MAXN];
    char rbytes[MAXN * sizeof(long)];
    memset(rbytes, 0, sizeof rbytes);
    const int use_long = cr % 2;
    for (int j = 0; j < cs; ++j) {
      ints_out[j] = (int)(v + j);
      longs_out[j] = v + j;
      sc[j] = 1;
      sd[j] = j * (int)(use_long ? sizeof(long) : sizeof(int));
      stypes[j] = use_long ? MPI_LONG : MPI_INT;
      rc[j] = 1;
      rd[j] = rdisp;
      rtypes[j] = (j % 2) ? MPI_LONG : MPI_INT;
      rdisp += (j % 2) ? (int)sizeof(long) : (int)sizeof(int);
    }
    check_rc(MPI_Alltoallw(use_long ? (void *)longs_out : (void *)ints_out, sc, sd, stypes,
                           rbytes, rc, rd, rtypes, c),
             "MPI_Alltoallw");
    gt_log_coll("MPI_Alltoallw", "all_to_all", c, -1);
    for (int j = 0; j < cs; ++j) {
      long got;
      if (j % 2) {
        memcpy(&got, rbytes + rd[j], sizeof got);
      } else {
        int i32;
        memcpy(&i32, rbytes + rd[j], sizeof i32);
        got = i32;
      }
      if (got != contrib(seed, j) + cr) gt_fail("Alltoallw from %d got %ld", j, got);
      fold(&got, 1);
    }
  }

  for (int i = 0; i < total; ++i) b[i] = v + i;
  check_rc(MPI_Reduce_scatter(b, a, counts, MPI_LONG, MPI_SUM, c), "MPI_Reduce_scatter");
  gt_log_coll("MPI_Reduce_scatter", "all_to_all", c, -1);
  fold(a, cr + 1);

  for (int i = 0; i < cs; ++i) b[i] = v * 11 + i;
  check_rc(MPI_Reduce_scatter_block(b, &out, 1, MPI_LONG, MPI_SUM, c),
           "MPI_Reduce_scatter_block");
  gt_log_coll("MPI_Reduce_scatter_block", "all_to_all", c, -1);
  fold(&out, 1);

  ring(c, 300 + seed);

  check_rc(MPI_Scan(&v, &out, 1, MPI_LONG, MPI_SUM, c), "MPI_Scan");
  gt_log_coll("MPI_Scan", "prefix", c, -1);
  {
    long want = 0;
    for (int i = 0; i <= cr; ++i) want += contrib(seed, i);
    if (out != want) gt_fail("Scan got %ld, want %ld", out, want);
  }

  out = 0;
  check_rc(MPI_Exscan(&v, &out, 1, MPI_LONG, MPI_SUM, c), "MPI_Exscan");
  gt_log_coll("MPI_Exscan", "prefix", c, -1);
  if (cr > 0) { /* undefined at communicator rank 0 */
    long want = 0;
    for (int i = 0; i < cr; ++i) want += contrib(seed, i);
    if (out != want) gt_fail("Exscan got %ld, want %ld", out, want);
  }
  fold(&out, cr > 0);
}

static void dup_rooted(MPI_Comm c) {
  long v = 5L * me + 3, out = -1, a[BIG];
  check_rc(MPI_Bcast(&v, 1, MPI_LONG, n - 1, c), "MPI_Bcast");
  gt_log_coll("MPI_Bcast", "one_to_all", c, n - 1);
  fold(&v, 1);
  check_rc(MPI_Gather(&v, 1, MPI_LONG, a, 1, MPI_LONG, 0, c), "MPI_Gather");
  gt_log_coll("MPI_Gather", "all_to_one", c, 0);
  if (me == 0) fold(a, n);
  ring(c, 400);
  check_rc(MPI_Scan(&v, &out, 1, MPI_LONG, MPI_SUM, c), "MPI_Scan");
  gt_log_coll("MPI_Scan", "prefix", c, -1);
  fold(&out, 1);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  gt_init();
  me = gt_rank();
  n = gt_size();
  if (n > MAXN) gt_fail("at most %d ranks", MAXN);
  char name[48];

  all_colls(W, 1);

  /* Unbalanced traffic between collectives: rank 0 hears from everybody. */
  {
    int b[MSG];
    if (me == 0)
      for (int k = 1; k < n; ++k) sum += gt_recv(b, MSG, MPI_ANY_SOURCE, 9, W, NULL);
    else
      gt_send("std", b, MSG, 0, 9, W);
  }

  MPI_Comm dup;
  MPI_Comm_dup(W, &dup);
  gt_comm_add(dup, "dup");
  /* Only the rooted ones on dup: the world's order, another instance count. */
  dup_rooted(dup);

  /* Parity classes, keys reversed: comm rank 0 is the highest world rank. */
  MPI_Comm s1;
  MPI_Comm_split(W, me % 2, n - me, &s1);
  snprintf(name, sizeof name, "parity.c%d", me % 2);
  gt_comm_add(s1, name);
  all_colls(s1, 3);

  /* Consecutive pairs, keys reversed; at N=3 rank 2 is alone. */
  MPI_Comm s2;
  MPI_Comm_split(W, me / 2, -me, &s2);
  snprintf(name, sizeof name, "pairs.c%d", me / 2);
  gt_comm_add(s2, name);
  all_colls(s2, 5);

  gt_comm_remove(s2);
  MPI_Comm_free(&s2);
  gt_comm_remove(s1);
  MPI_Comm_free(&s1);
  gt_comm_remove(dup);
  MPI_Comm_free(&dup);

  MPI_Barrier(W);
  gt_log_coll("MPI_Barrier", "all_to_all", W, -1);
  printf("collectives_all rank %d acc %ld sum %lu\n", me, acc, sum);
  gt_finalize();
  MPI_Finalize();
  return 0;
}
