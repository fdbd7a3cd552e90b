/* An MPI+OpenSHMEM program: one Open MPI process per rank using both
 * models, so that clocks flow through MPI messages and OpenSHMEM
 * synchronisation alike. Each of ROUNDS rounds:
 *
 *   1. MPI token ring: rank 0 sends to the right and receives from the
 *      left, every other rank receives, then sends (MPI_Send/MPI_Recv);
 *   2. OpenSHMEM flag: each PE writes the round number into its right
 *      neighbour's flag with shmem_long_p and waits for its own with
 *      shmem_long_wait_until;
 *   3. MPI exchange with both neighbours: MPI_Irecv, MPI_Isend, MPI_Waitall;
 *   4. OpenSHMEM put of the round's data to the right, shmem_barrier_all;
 *   5. OpenSHMEM lock: shmem_set_lock, a get and put of a counter at PE 0,
 *      shmem_clear_lock (the lock order is whatever the run takes);
 *   6. MPI_Allreduce of what arrived;
 *   7. (3 ranks or more) wildcard receives at rank 0 ordered by OpenSHMEM:
 *      (a) rank 0 posts MPI_Irecv(MPI_ANY_SOURCE, tag 7) before a
 *      shmem_barrier_all; rank 2 sends before the barrier, rank 1 after
 *      it; rank 0 completes the Irecv after the barrier and takes the other
 *      message with MPI_Recv(MPI_ANY_SOURCE): whichever came first, the
 *      other could have matched the Irecv. (b) rank 0 takes rank 2's tag-8
 *      message with MPI_Recv(MPI_ANY_SOURCE), then writes rank 1's "go"
 *      flag; rank 1 waits for it and only then sends its tag-8 message,
 *      which rank 0's next MPI_Recv(MPI_ANY_SOURCE) takes: the flag orders
 *      that send after the first receive, so it is no alternative of it.
 * Then non-blocking collectives on a one-member communicator, pending
 * together and completed last first: Open MPI returns one shared,
 * predefined request for all of them, and each must still complete its
 * own instance.
 *
 * MPI ranks are PE numbers (checked). Built with oshcc, which links Open
 * MPI's libmpi beside liboshmem. Both models log into one ground-truth
 * file (gt.c and shmem_gt.c share its stream) in program order. Prints what
 * arrived and the counter's final value, the same with and without vcx. */
#include <mpi.h>
#include <shmem.h>
#include <stdio.h>

#include "gt.h"
#include "shmem_gt.h"

#define ROUNDS 3
#define MSG 4

static long flag;       /* symmetric: written by the left neighbour */
static int box[MSG];    /* symmetric: the left neighbour's put */
static long lock;       /* symmetric */
static long counter;    /* symmetric; used at PE 0 under the lock */
static long go;         /* symmetric: PE 1's, written by PE 0 in step 7 */

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  shmem_init();
  gt_init();
  sgt_init_stream(gt_log_stream());
  const int me = gt_rank(), n = gt_size();
  if (shmem_my_pe() != me || shmem_n_pes() != n)
    gt_fail("PE %d of %d is MPI rank %d of %d", shmem_my_pe(), shmem_n_pes(), me, n);
  const MPI_Comm W = MPI_COMM_WORLD;
  const int right = (me + 1) % n, left = (me - 1 + n) % n;
  unsigned long sum = 0;
  long arrived = 0;
  int buf[MSG], lbuf[MSG], rbuf[MSG];

  for (int round = 1; round <= ROUNDS; ++round) {
    /* 1 */
    if (me == 0) {
      gt_send("std", buf, MSG, right, 1, W);
      sum += gt_recv(buf, MSG, left, 1, W, NULL);
    } else {
      sum += gt_recv(buf, MSG, left, 1, W, NULL);
      gt_send("std", buf, MSG, right, 1, W);
    }

    /* 2: the round-th write to each PE's flag */
    shmem_long_p(&flag, round, right);
    sgt_flag_write("shmem_long_p", "flag", right, "store", round, round);
    shmem_long_wait_until(&flag, SHMEM_CMP_EQ, round);
    sgt_flag_wait("shmem_long_wait_until", "flag", *(volatile long *)&flag, round);

    /* 3 */
    gt_reqs reqs;
    gt_reqs_init(&reqs);
    gt_irecv(&reqs, lbuf, MSG, left, 2, W);
    gt_irecv(&reqs, rbuf, MSG, right, 3, W);
    int sbuf1[MSG], sbuf2[MSG];
    gt_isend(&reqs, "std", sbuf1, MSG, right, 2, W);
    gt_isend(&reqs, "std", sbuf2, MSG, left, 3, W);
    gt_complete(&reqs, GT_WAITALL);
    sum += reqs.digest;

    /* 4 */
    int data[MSG];
    for (int i = 0; i < MSG; ++i) data[i] = 100 * round + 10 * me + i;
    shmem_int_put(box, data, MSG, right);
    shmem_barrier_all();
    sgt_world("shmem_barrier_all");
    for (int i = 0; i < MSG; ++i)
      if (box[i] != 100 * round + 10 * left + i) gt_fail("round %d: wrong data from the left", round);
    arrived += box[MSG - 1];

    /* 5 */
    sgt_set_lock(&lock, 0);
    const long c = shmem_long_g(&counter, 0);
    shmem_long_p(&counter, c + me + 1, 0);
    shmem_quiet();
    sgt_clear_lock(&lock, 0);

    /* 6 */
    long total = 0;
    MPI_Allreduce(&arrived, &total, 1, MPI_LONG, MPI_SUM, W);
    gt_log_coll("MPI_Allreduce", "all_to_all", W, -1);
    if (me == 0) printf("round %d: %ld arrived in all\n", round, total);

    /* 7 */
    if (n >= 3) {
      int a[MSG], b[MSG];
      if (me == 0) {
        gt_reqs w;
        gt_reqs_init(&w);
        gt_irecv(&w, a, MSG, MPI_ANY_SOURCE, 7, W);
        shmem_barrier_all();
        sgt_world("shmem_barrier_all");
        gt_complete(&w, GT_WAITALL);
        sum += w.digest;
        sum += gt_recv(b, MSG, MPI_ANY_SOURCE, 7, W, NULL);
        sum += gt_recv(a, MSG, MPI_ANY_SOURCE, 8, W, NULL);
        shmem_long_p(&go, round, 1);
        sgt_flag_write("shmem_long_p", "go", 1, "store", round, round);
        sum += gt_recv(b, MSG, MPI_ANY_SOURCE, 8, W, NULL);
      } else if (me == 1) {
        shmem_barrier_all();
        sgt_world("shmem_barrier_all");
        gt_send("std", a, MSG, 0, 7, W);
        shmem_long_wait_until(&go, SHMEM_CMP_EQ, round);
        sgt_flag_wait("shmem_long_wait_until", "go", *(volatile long *)&go, round);
        gt_send("std", b, MSG, 0, 8, W);
      } else if (me == 2) {
        gt_send("std", a, MSG, 0, 7, W);
        shmem_barrier_all();
        sgt_world("shmem_barrier_all");
        gt_send("std", b, MSG, 0, 8, W);
      } else {
        shmem_barrier_all();
        sgt_world("shmem_barrier_all");
      }
    }
  }

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
    gt_req info;
    MPI_Ibarrier(lone, &r);
    gt_req_send(&info);
    gt_log_icoll("MPI_Ibarrier", "all_to_all", lone, -1, &info);
    gt_reqs_add(&s, r, &info, 0, 0);
    for (int k = 0; k < 2; ++k) {
      MPI_Iallreduce(&in, &out[k], 1, MPI_LONG, MPI_SUM, lone, &r);
      gt_req_send(&info);
      gt_log_icoll("MPI_Iallreduce", "all_to_all", lone, -1, &info);
      gt_reqs_add(&s, r, &info, 0, 0);
    }
    gt_complete(&s, GT_WAIT_EACH);
    if (out[0] != in || out[1] != in) gt_fail("lone Iallreduce got %ld, %ld", out[0], out[1]);
    gt_comm_remove(lone);
    MPI_Comm_free(&lone);
  }

  shmem_barrier_all();
  sgt_world("shmem_barrier_all");
  if (me == 0) printf("counter %ld\n", shmem_long_g(&counter, 0));
  printf("rank %d: %ld arrived, checksum %lu\n", me, arrived, sum);
  sgt_finalize();
  gt_finalize();
  /* Open MPI's shmem_finalize finalises MPI too (and MPI_Finalize before
   * it would leave OpenSHMEM nothing to finalise with): MPI_Finalize only
   * where the library has not. */
  shmem_finalize();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
  return 0;
}
