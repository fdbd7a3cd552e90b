/* Intercommunicators: MPI_Intercomm_create between the lower and the upper
 * half of world (group A = ranks below N/2, B = the rest; uneven at N=3),
 * each half ordered by reversed keys. On the intercommunicator:
 *   - rooted collectives in both directions (Bcast, Reduce, Gather(v),
 *     Scatter(v)): the root passes MPI_ROOT, the rest of its group
 *     MPI_PROC_NULL, the other group the root's rank in the remote group;
 *   - bipartite ones (Barrier, Allreduce, Allgather, Alltoall);
 *   - non-blocking ones (Ibcast, Ireduce, Ibarrier, Iallreduce) completed
 *     out of order with point-to-point requests;
 *   - point-to-point, where ranks name members of the remote group
 *     (standard sends one way, synchronous ones back, wildcard receives).
 * Then MPI_Intercomm_merge (A low) and collectives and point-to-point on
 * the merged intracommunicator, whose rank order is neither world order
 * nor either half's. */
#include <stdio.h>

#include "gt.h"

#define MSG 8
#define MAXN 4

static const MPI_Comm W = MPI_COMM_WORLD;
static int me, n;
static long acc;
static unsigned long sum;

static MPI_Comm ic;  /* the intercommunicator */
static int in_a;     /* this rank is in group A */
static int lrank;    /* rank in the local group */
static int lsize, rsize;

static void check_rc(int rc, const char *what) {
  if (rc != MPI_SUCCESS) gt_fail("%s returned %d", what, rc);
}

/* A root is named by its group and its rank there. What this rank passes
 * as the root argument, and the root's world rank for the log. */
static int root_arg(int root_in_a, int root_rank) {
  if (root_in_a == in_a) return lrank == root_rank ? MPI_ROOT : MPI_PROC_NULL;
  return root_rank;
}

static int root_world(int root_in_a, int root_rank) {
  return root_in_a == in_a ? gt_local_world_of(ic, root_rank) : gt_world_of(ic, root_rank);
}

static void log_inter(const char *call, const char *kind, int root_w, const char *req) {
  gt_begin(call);
  gt_op_coll_req(kind, ic, root_w, req);
  gt_end();
}

/* Role of this rank in a rooted call: 0 root, 1 other group, 2 idle. */
static int role(int root_in_a, int root_rank) {
  if (root_in_a != in_a) return 1;
  return lrank == root_rank ? 0 : 2;
}

static long value(int k) { return 100L * me + k + 1; }

static void rooted(int root_in_a, int root_rank) {
  const int arg = root_arg(root_in_a, root_rank), rw = root_world(root_in_a, root_rank);
  const int ro = role(root_in_a, root_rank);
  long v, buf[MAXN * 2], out;
  int counts[MAXN], displs[MAXN];
  for (int i = 0; i < MAXN; ++i) {
    counts[i] = 2;
    displs[i] = 2 * i;
  }

  v = ro == 0 ? value(0) : -1;
  check_rc(MPI_Bcast(&v, 1, MPI_LONG, arg, ic), "MPI_Bcast");
  log_inter("MPI_Bcast", "one_to_all", rw, NULL);
  if (ro == 1) {
    if (v != 100L * rw + 1) gt_fail("Bcast got %ld", v);
    acc += v;
  }

  v = value(1);
  out = -1;
  check_rc(MPI_Reduce(&v, &out, 1, MPI_LONG, MPI_SUM, arg, ic), "MPI_Reduce");
  log_inter("MPI_Reduce", "all_to_one", rw, NULL);
  if (ro == 0) acc += out * 3;

  check_rc(MPI_Gather(&v, 1, MPI_LONG, buf, 1, MPI_LONG, arg, ic), "MPI_Gather");
  log_inter("MPI_Gather", "all_to_one", rw, NULL);
  if (ro == 0)
    for (int i = 0; i < rsize; ++i) {
      if (buf[i] != 100L * gt_world_of(ic, i) + 2) gt_fail("Gather slot %d got %ld", i, buf[i]);
      acc += buf[i];
    }

  long two[2] = {value(2), value(3)};
  check_rc(MPI_Gatherv(two, 2, MPI_LONG, buf, counts, displs, MPI_LONG, arg, ic),
           "MPI_Gatherv");
  log_inter("MPI_Gatherv", "all_to_one", rw, NULL);
  if (ro == 0)
    for (int i = 0; i < 2 * rsize; ++i) acc += buf[i] * 5;

  for (int i = 0; i < 2 * MAXN; ++i) buf[i] = ro == 0 ? value(10 + i) : -1;
  check_rc(MPI_Scatter(buf, 1, MPI_LONG, &out, 1, MPI_LONG, arg, ic), "MPI_Scatter");
  log_inter("MPI_Scatter", "one_to_all", rw, NULL);
  if (ro == 1) {
    if (out != 100L * rw + 10 + lrank + 1) gt_fail("Scatter got %ld", out);
    acc += out;
  }

  check_rc(MPI_Scatterv(buf, counts, displs, MPI_LONG, two, 2, MPI_LONG, arg, ic),
           "MPI_Scatterv");
  log_inter("MPI_Scatterv", "one_to_all", rw, NULL);
  if (ro == 1) acc += two[0] * 7 + two[1];
}

static void bipartite(void) {
  long v = value(20), out = 0, buf[MAXN], src[MAXN];

  check_rc(MPI_Barrier(ic), "MPI_Barrier");
  log_inter("MPI_Barrier", "all_to_all", -1, NULL);

  check_rc(MPI_Allreduce(&v, &out, 1, MPI_LONG, MPI_SUM, ic), "MPI_Allreduce");
  log_inter("MPI_Allreduce", "all_to_all", -1, NULL);
  {
    long want = 0; /* the sum over the remote group */
    for (int i = 0; i < rsize; ++i) want += 100L * gt_world_of(ic, i) + 21;
    if (out != want) gt_fail("Allreduce got %ld, want %ld", out, want);
    acc += out;
  }

  check_rc(MPI_Allgather(&v, 1, MPI_LONG, buf, 1, MPI_LONG, ic), "MPI_Allgather");
  log_inter("MPI_Allgather", "all_to_all", -1, NULL);
  for (int i = 0; i < rsize; ++i) {
    if (buf[i] != 100L * gt_world_of(ic, i) + 21) gt_fail("Allgather slot %d got %ld", i, buf[i]);
    acc += buf[i] * (i + 1);
  }

  for (int i = 0; i < rsize; ++i) src[i] = 1000L * me + i;
  check_rc(MPI_Alltoall(src, 1, MPI_LONG, buf, 1, MPI_LONG, ic), "MPI_Alltoall");
  log_inter("MPI_Alltoall", "all_to_all", -1, NULL);
  for (int i = 0; i < rsize; ++i) {
    if (buf[i] != 1000L * gt_world_of(ic, i) + lrank) gt_fail("Alltoall slot %d", i);
    acc += buf[i];
  }
}

/* Point-to-point over the intercommunicator: A's rank k sends to B's rank
 * k % |B|, which receives with MPI_ANY_SOURCE; then B's rank j answers A's
 * rank j % |A| with a synchronous send. */
static void p2p(int tag) {
  int b[MAXN][MSG];
  const int asize = in_a ? lsize : rsize, bsize = in_a ? rsize : lsize;
  if (in_a) {
    gt_send("std", b[0], MSG, lrank % bsize, tag, ic);
    int expect = 0;
    for (int j = 0; j < bsize; ++j) expect += j % asize == lrank;
    for (int k = 0; k < expect; ++k) sum += gt_recv(b[1], MSG, MPI_ANY_SOURCE, tag + 1, ic, NULL);
  } else {
    int expect = 0;
    for (int k = 0; k < asize; ++k) expect += k % bsize == lrank;
    for (int k = 0; k < expect; ++k) sum += gt_recv(b[1], MSG, MPI_ANY_SOURCE, tag, ic, NULL);
    gt_send("sync", b[0], MSG, lrank % asize, tag + 1, ic);
  }
}

static void nonblocking(void) {
  gt_reqs set;
  gt_reqs_init(&set);
  gt_req info;
  MPI_Request r;
  long bc, red_in = value(30), red_out = -1, ar_in = value(31), ar_out = 0;
  int rb[MAXN][MSG], sb[MSG];

  /* Every member sends one message to remote rank (its rank % remote
   * size); the receives for those are posted first, with MPI_ANY_SOURCE. */
  for (int k = 0, j = 0; k < rsize; ++k)
    if (k % lsize == lrank) gt_irecv(&set, rb[j++], MSG, MPI_ANY_SOURCE, 41, ic);

  /* Ibcast from B's last rank. */
  const int broot = (in_a ? rsize : lsize) - 1;
  bc = role(0, broot) == 0 ? value(32) : -1;
  check_rc(MPI_Ibcast(&bc, 1, MPI_LONG, root_arg(0, broot), ic, &r), "MPI_Ibcast");
  gt_req_send(&info);
  log_inter("MPI_Ibcast", "one_to_all", root_world(0, broot), info.name);
  gt_reqs_add(&set, r, &info, 0, 0);

  check_rc(MPI_Ibarrier(ic, &r), "MPI_Ibarrier");
  gt_req_send(&info);
  log_inter("MPI_Ibarrier", "all_to_all", -1, info.name);
  gt_reqs_add(&set, r, &info, 0, 0);

  /* Ireduce to A's rank 0. */
  check_rc(MPI_Ireduce(&red_in, &red_out, 1, MPI_LONG, MPI_SUM, root_arg(1, 0), ic, &r),
           "MPI_Ireduce");
  gt_req_send(&info);
  log_inter("MPI_Ireduce", "all_to_one", root_world(1, 0), info.name);
  gt_reqs_add(&set, r, &info, 0, 0);

  check_rc(MPI_Iallreduce(&ar_in, &ar_out, 1, MPI_LONG, MPI_MAX, ic, &r), "MPI_Iallreduce");
  gt_req_send(&info);
  log_inter("MPI_Iallreduce", "all_to_all", -1, info.name);
  gt_reqs_add(&set, r, &info, 0, 0);

  gt_isend(&set, "std", sb, MSG, lrank % rsize, 41, ic);
  gt_complete(&set, GT_WAITANY);
  sum += set.digest;
  if (role(0, broot) == 1) acc += bc;
  if (role(1, 0) == 0) acc += red_out;
  acc += ar_out;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  gt_init();
  me = gt_rank();
  n = gt_size();
  if (n < 2 || n > MAXN) gt_fail("needs 2 to %d ranks", MAXN);

  const int half = n / 2;
  in_a = me < half;
  MPI_Comm local;
  MPI_Comm_split(W, in_a ? 0 : 1, -me, &local);
  gt_comm_add(local, in_a ? "half.a" : "half.b");
  MPI_Comm_rank(local, &lrank);
  MPI_Comm_size(local, &lsize);
  /* Leaders: local rank 0, i.e. the highest world rank of each half. */
  const int remote_leader = in_a ? n - 1 : half - 1;
  check_rc(MPI_Intercomm_create(local, 0, W, remote_leader, 77, &ic), "MPI_Intercomm_create");
  gt_comm_add(ic, "inter");
  MPI_Comm_remote_size(ic, &rsize);

  /* A collective on the halves first: local clocks differ before the
   * intercommunicator is used. */
  check_rc(MPI_Barrier(local), "MPI_Barrier");
  gt_log_coll("MPI_Barrier", "all_to_all", local, -1);

  p2p(10);
  rooted(1, 0);        /* A's rank 0 (its highest world rank) to B */
  bipartite();
  rooted(0, (in_a ? rsize : lsize) - 1); /* B's last rank to A */
  p2p(20);
  nonblocking();
  rooted(0, 0);        /* B's rank 0 */
  bipartite();

  /* Merge with A low: merged order is A in its local order, then B. */
  MPI_Comm merged;
  check_rc(MPI_Intercomm_merge(ic, in_a ? 0 : 1, &merged), "MPI_Intercomm_merge");
  gt_comm_add(merged, "merged");
  {
    int mr, ms;
    MPI_Comm_rank(merged, &mr);
    MPI_Comm_size(merged, &ms);
    long v = 10L * me + 1, out = 0;
    check_rc(MPI_Barrier(merged), "MPI_Barrier");
    gt_log_coll("MPI_Barrier", "all_to_all", merged, -1);
    check_rc(MPI_Bcast(&v, 1, MPI_LONG, ms - 1, merged), "MPI_Bcast");
    gt_log_coll("MPI_Bcast", "one_to_all", merged, ms - 1);
    acc += v;
    v = 10L * me + 1;
    check_rc(MPI_Scan(&v, &out, 1, MPI_LONG, MPI_SUM, merged), "MPI_Scan");
    gt_log_coll("MPI_Scan", "prefix", merged, -1);
    acc += out;

    /* Ring in merged order. */
    int sb[MSG], rb[MSG];
    gt_reqs rq;
    gt_reqs_init(&rq);
    gt_irecv(&rq, rb, MSG, (mr - 1 + ms) % ms, 50, merged);
    gt_send("sync", sb, MSG, (mr + 1) % ms, 50, merged);
    gt_complete(&rq, GT_WAITALL);
    sum += rq.digest;

    check_rc(MPI_Allreduce(&v, &out, 1, MPI_LONG, MPI_SUM, merged), "MPI_Allreduce");
    gt_log_coll("MPI_Allreduce", "all_to_all", merged, -1);
    acc += out;
    check_rc(MPI_Reduce(&v, &out, 1, MPI_LONG, MPI_SUM, 0, merged), "MPI_Reduce");
    gt_log_coll("MPI_Reduce", "all_to_one", merged, 0);
    if (mr == 0) acc += out;
  }

  /* The intercommunicator still works after the merge. */
  bipartite();

  gt_comm_remove(merged);
  MPI_Comm_free(&merged);
  gt_comm_remove(ic);
  MPI_Comm_free(&ic);
  gt_comm_remove(local);
  MPI_Comm_free(&local);

  MPI_Barrier(W);
  gt_log_coll("MPI_Barrier", "all_to_all", W, -1);
  printf("intercomm rank %d acc %ld sum %lu\n", me, acc, sum);
  gt_finalize();
  MPI_Finalize();
  return 0;
}
