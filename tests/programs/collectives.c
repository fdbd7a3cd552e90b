/* Collectives (Barrier, Bcast, Reduce, Allreduce) on MPI_COMM_WORLD and on
 * derived communicators: MPI_Comm_dup, two MPI_Comm_split with reversed
 * keys (communicator rank order differs from world order), MPI_Comm_create
 * over a reversed subgroup, and a dup created after the others were freed
 * (a new instance that may reuse an old handle). Point-to-point on the
 * derived communicators is logged with world ranks. Every root is given as
 * a communicator rank and logged as a world rank. */
#include <stdio.h>
#include <stdlib.h>

#include "gt.h"

#define MSG 8

static const MPI_Comm W = MPI_COMM_WORLD;
static int me, n;
static long acc; /* deterministic results of the reductions and broadcasts */
static unsigned long sum; /* digests of point-to-point messages */

static void barrier(MPI_Comm c) {
  MPI_Barrier(c);
  gt_log_coll("MPI_Barrier", "all_to_all", c, -1);
}

static void bcast(MPI_Comm c, int root) {
  int cr;
  MPI_Comm_rank(c, &cr);
  long v = (cr == root) ? 1000 + 17L * me : -1;
  MPI_Bcast(&v, 1, MPI_LONG, root, c);
  gt_log_coll("MPI_Bcast", "one_to_all", c, root);
  acc += v;
}

static void reduce(MPI_Comm c, int root) {
  int cr;
  MPI_Comm_rank(c, &cr);
  long v = 3L * me + 1, out = 0;
  MPI_Reduce(&v, &out, 1, MPI_LONG, MPI_SUM, root, c);
  gt_log_coll("MPI_Reduce", "all_to_one", c, root);
  if (cr == root) acc += out;
}

static void allreduce(MPI_Comm c) {
  long v = 5L * me + 2, out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_LONG, MPI_MAX, c);
  gt_log_coll("MPI_Allreduce", "all_to_all", c, -1);
  acc += out;
}

/* Ring on communicator c: receive posted first, so it also works when the
 * communicator has a single member (the rank sends to itself). */
static void ring(MPI_Comm c, int tag) {
  int cr, cs;
  MPI_Comm_rank(c, &cr);
  MPI_Comm_size(c, &cs);
  int sb[MSG], rb[MSG];
  gt_reqs rq;
  gt_reqs_init(&rq);
  gt_irecv(&rq, rb, MSG, (cr - 1 + cs) % cs, tag, c);
  gt_send("std", sb, MSG, (cr + 1) % cs, tag, c);
  gt_complete(&rq, GT_WAIT_EACH);
  sum += rq.digest;
}

/* Every member sends to comm rank 0, which receives from any source; the
 * ids in the log are world ranks whatever the communicator. */
static void gather_p2p(MPI_Comm c, int tag) {
  int cr, cs;
  MPI_Comm_rank(c, &cr);
  MPI_Comm_size(c, &cs);
  int b[MSG];
  if (cr == 0) {
    for (int k = 1; k < cs; ++k) sum += gt_recv(b, MSG, MPI_ANY_SOURCE, tag, c, NULL);
  } else {
    gt_send("std", b, MSG, 0, tag, c);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  gt_init();
  me = gt_rank();
  n = gt_size();
  char name[48];

  barrier(W);
  bcast(W, 0);
  reduce(W, n - 1);
  allreduce(W);

  MPI_Comm dup;
  MPI_Comm_dup(W, &dup);
  gt_comm_add(dup, "dup1");
  bcast(dup, 1 % n);
  ring(dup, 1);
  barrier(dup);
  allreduce(W);
  reduce(dup, 0);
  gather_p2p(dup, 2);

  /* Colours by parity; keys reversed, so comm rank 0 is the highest world
   * rank of the colour. */
  MPI_Comm s1;
  MPI_Comm_split(W, me % 2, n - me, &s1);
  snprintf(name, sizeof name, "split1.c%d", me % 2);
  gt_comm_add(s1, name);
  int s1size;
  MPI_Comm_size(s1, &s1size);
  barrier(s1);
  bcast(s1, 0);
  ring(s1, 3);
  reduce(s1, s1size - 1);
  barrier(W);
  allreduce(s1);
  gather_p2p(s1, 4);

  /* Consecutive pairs, keys reversed; at N=3 the last colour has one member. */
  MPI_Comm s2;
  MPI_Comm_split(W, me / 2, -me, &s2);
  snprintf(name, sizeof name, "split2.c%d", me / 2);
  gt_comm_add(s2, name);
  bcast(s2, 0);
  allreduce(s2);
  bcast(dup, 0);
  ring(s2, 5);
  reduce(s2, 0);

  /* World ranks n-1 .. 1 in that order; rank 0 is not a member. */
  MPI_Group wg, sg;
  MPI_Comm_group(W, &wg);
  int members[16], nm = 0;
  for (int r = n - 1; r >= 1; --r) members[nm++] = r;
  MPI_Group_incl(wg, nm, members, &sg);
  MPI_Comm sub;
  MPI_Comm_create(W, sg, &sub);
  MPI_Group_free(&sg);
  MPI_Group_free(&wg);
  if (sub != MPI_COMM_NULL) {
    gt_comm_add(sub, "create1");
    barrier(sub);
    bcast(sub, 0);
    ring(sub, 6);
    reduce(sub, nm - 1);
    allreduce(sub);
    gather_p2p(sub, 7);
  } else if (me != 0) {
    gt_fail("MPI_Comm_create gave no communicator to a member");
  }
  allreduce(W);
  bcast(W, n / 2);

  if (sub != MPI_COMM_NULL) {
    gt_comm_remove(sub);
    MPI_Comm_free(&sub);
  }
  gt_comm_remove(s2);
  MPI_Comm_free(&s2);
  gt_comm_remove(s1);
  MPI_Comm_free(&s1);
  gt_comm_remove(dup);
  MPI_Comm_free(&dup);

  MPI_Comm dup2;
  MPI_Comm_dup(W, &dup2);
  gt_comm_add(dup2, "dup2");
  barrier(dup2);
  reduce(dup2, n - 1);
  ring(dup2, 8);
  allreduce(dup2);
  gt_comm_remove(dup2);
  MPI_Comm_free(&dup2);

  barrier(W);
  printf("collectives rank %d acc %ld sum %lu\n", me, acc, sum);
  gt_finalize();
  MPI_Finalize();
  return 0;
}
