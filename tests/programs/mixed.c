/* A small application-like mix. Phase 1: a periodic 1-D stencil, each
 * iteration a halo exchange (Irecv/Isend both ways + Waitall), an update,
 * and an Allreduce of the local sums. Phase 2: master/worker with rank 0
 * handing out tasks to whichever worker asks first (MPI_ANY_SOURCE,
 * MPI_ANY_TAG); only the master's total is printed, since which worker does
 * which task depends on timing. */
#include <stdio.h>

#include "gt.h"

#define CELLS 16
#define ITERS 6
#define MOD 1000003
#define TAG_TO_RIGHT 100
#define TAG_TO_LEFT 101
#define TAG_READY 200
#define TAG_RESULT 201
#define TAG_TASK 202
#define TAG_STOP 203

static const MPI_Comm W = MPI_COMM_WORLD;

/* Message layout: id header, then one value. */
enum { VAL = GT_HDR, LEN = GT_HDR + 1 };

static long task_result(long task) { return (task * task * 31 + 7) % MOD; }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  gt_init();
  int me = gt_rank(), n = gt_size();
  int right = (me + 1) % n, left = (me - 1 + n) % n;

  long u[CELLS + 2]; /* u[0] and u[CELLS+1] are the halo cells */
  for (int i = 1; i <= CELLS; ++i) u[i] = (me * CELLS + i) % 97;
  long global = 0;

  for (int it = 0; it < ITERS; ++it) {
    int sl[LEN], sr[LEN], rl[LEN], rr[LEN];
    gt_reqs rq;
    gt_reqs_init(&rq);
    gt_irecv_raw(&rq, rl, LEN, left, TAG_TO_RIGHT, W);
    gt_irecv_raw(&rq, rr, LEN, right, TAG_TO_LEFT, W);
    sr[VAL] = (int)u[CELLS];
    sl[VAL] = (int)u[1];
    gt_isend_raw(&rq, "std", sr, LEN, right, TAG_TO_RIGHT, W);
    gt_isend_raw(&rq, "std", sl, LEN, left, TAG_TO_LEFT, W);
    gt_complete(&rq, GT_WAITALL);
    u[0] = rl[VAL];
    u[CELLS + 1] = rr[VAL];

    long next[CELLS + 2], local = 0;
    for (int i = 1; i <= CELLS; ++i) {
      next[i] = (u[i - 1] + 2 * u[i] + u[i + 1] + it) % MOD;
      local += next[i];
    }
    for (int i = 1; i <= CELLS; ++i) u[i] = next[i];

    MPI_Allreduce(&local, &global, 1, MPI_LONG, MPI_SUM, W);
    gt_log_coll("MPI_Allreduce", "all_to_all", W, -1);
  }
  long mine = 0;
  for (int i = 1; i <= CELLS; ++i) mine += u[i];
  printf("mixed rank %d stencil %ld global %ld\n", me, mine, global);

  /* Master/worker. A worker's first message says it is ready; every later
   * one carries a result and asks for more. Each worker has at most one
   * message in flight and waits for the answer, so blocking sends are safe. */
  const int tasks = 2 * (n - 1) + 1;
  if (me == 0) {
    int next_task = 0, active = n - 1;
    long total = 0;
    while (active > 0) {
      int in[LEN], out[LEN];
      MPI_Status st;
      gt_recv_raw(in, LEN, MPI_ANY_SOURCE, MPI_ANY_TAG, W, &st);
      if (st.MPI_TAG == TAG_RESULT)
        total += in[VAL];
      else if (st.MPI_TAG != TAG_READY)
        gt_fail("master got tag %d", st.MPI_TAG);
      if (next_task < tasks) {
        out[VAL] = next_task++;
        gt_send_raw("std", out, LEN, st.MPI_SOURCE, TAG_TASK, W);
      } else {
        out[VAL] = -1;
        gt_send_raw("std", out, LEN, st.MPI_SOURCE, TAG_STOP, W);
        --active;
      }
    }
    long expect = 0;
    for (int t = 0; t < tasks; ++t) expect += task_result(t);
    if (total != expect) gt_fail("master total %ld, expected %ld", total, expect);
    printf("mixed master tasks %d total %ld\n", tasks, total);
  } else {
    int out[LEN], in[LEN];
    out[VAL] = 0;
    gt_send_raw("std", out, LEN, 0, TAG_READY, W);
    for (;;) {
      MPI_Status st;
      gt_recv_raw(in, LEN, 0, MPI_ANY_TAG, W, &st);
      if (st.MPI_TAG == TAG_STOP) break;
      if (st.MPI_TAG != TAG_TASK) gt_fail("worker got tag %d", st.MPI_TAG);
      out[VAL] = (int)task_result(in[VAL]);
      gt_send_raw("std", out, LEN, 0, TAG_RESULT, W);
    }
  }

  long check = 0, one = 1;
  MPI_Allreduce(&one, &check, 1, MPI_LONG, MPI_SUM, W);
  gt_log_coll("MPI_Allreduce", "all_to_all", W, -1);
  if (check != n) gt_fail("final allreduce gave %ld", check);

  gt_finalize();
  MPI_Finalize();
  return 0;
}
