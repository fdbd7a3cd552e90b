/* Generalized requests beside point-to-point ones: MPI-IO's non-blocking
 * calls (independent and collective, which MPICH implements as generalized
 * requests) and a user's MPI_Grequest_start, completed by the same
 * Waitall/Waitany calls as synchronous sends and receives.
 *
 * Each rank owns one block of a shared file. Per round it posts a receive
 * from its left neighbour, a synchronous send to its right one and a write
 * of its block (alternately independent and collective), and completes all
 * three with one MPI_Waitall; then it reads its right neighbour's block back
 * (collectively and independently, completed by MPI_Waitany or MPI_Waitall)
 * and checks it. The clocks of the point-to-point calls are checked against
 * the oracle; the file calls synchronise nothing the tool models. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gt.h"

#define MSG 8
#define BLOCK 64 /* ints per rank and round */
#define ROUNDS 4

static const MPI_Comm W = MPI_COMM_WORLD;

static void check(int rc, const char *what) {
  if (rc != MPI_SUCCESS) gt_fail("io_requests: %s failed (%d)", what, rc);
}

static int word(int rank, int round, int i) { return rank * 100000 + round * 1000 + i; }

static MPI_Offset offset_of(int rank, int round, int n) {
  return ((MPI_Offset)round * n + rank) * BLOCK * (MPI_Offset)sizeof(int);
}

/* A user's generalized request: its query function reports the bytes the
 * "operation" moved. */
static int query(void *extra, MPI_Status *st) {
  MPI_Status_set_elements(st, MPI_INT, *(int *)extra);
  MPI_Status_set_cancelled(st, 0);
  st->MPI_SOURCE = MPI_UNDEFINED;
  st->MPI_TAG = MPI_UNDEFINED;
  return MPI_SUCCESS;
}
static int release(void *extra) {
  (void)extra;
  return MPI_SUCCESS;
}
static int cancel(void *extra, int complete) {
  (void)extra;
  (void)complete;
  return MPI_SUCCESS;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  gt_init();
  const int me = gt_rank(), n = gt_size();
  const int right = (me + 1) % n, left = (me - 1 + n) % n;

  /* One file name for all ranks: rank 0's choice, broadcast. */
  char path[512] = {0};
  if (me == 0) {
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/vcx-io-requests-%ld", dir && *dir ? dir : "/tmp",
             (long)getpid());
  }
  check(MPI_Bcast(path, sizeof path, MPI_CHAR, 0, W), "MPI_Bcast");
  gt_log_coll("MPI_Bcast", "one_to_all", W, 0);
  MPI_File fh;
  check(MPI_File_open(W, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                      MPI_INFO_NULL, &fh),
        "MPI_File_open");

  unsigned long sum = 0;
  int out[BLOCK], in[BLOCK];
  for (int round = 0; round < ROUNDS; ++round) {
    int sbuf[MSG], rbuf[MSG];
    gt_reqs s;
    gt_reqs_init(&s);
    const int rk = gt_irecv(&s, rbuf, MSG, left, round, W);
    const int sk = gt_isend(&s, "sync", sbuf, MSG, right, round, W);
    for (int i = 0; i < BLOCK; ++i) out[i] = word(me, round, i);
    MPI_Request all[3] = {s.req[rk], s.req[sk], MPI_REQUEST_NULL};
    const MPI_Offset at = offset_of(me, round, n);
    if (round % 2 == 0)
      check(MPI_File_iwrite_at(fh, at, out, BLOCK, MPI_INT, &all[2]), "MPI_File_iwrite_at");
    else
      check(MPI_File_iwrite_at_all(fh, at, out, BLOCK, MPI_INT, &all[2]),
            "MPI_File_iwrite_at_all");
    MPI_Status st[3];
    check(MPI_Waitall(3, all, st), "MPI_Waitall");
    const int idx[2] = {rk, sk};
    gt_log_completed("MPI_Waitall", s.info, idx, 2);
    sum += gt_check(rbuf, MSG);
  }

  /* Every write is done before anyone reads. */
  check(MPI_File_sync(fh), "MPI_File_sync");
  check(MPI_Barrier(W), "MPI_Barrier");
  gt_log_coll("MPI_Barrier", "all_to_all", W, -1);
  check(MPI_File_sync(fh), "MPI_File_sync");

  for (int round = 0; round < ROUNDS; ++round) {
    const MPI_Offset at = offset_of(right, round, n);
    memset(in, 0, sizeof in);
    MPI_Request r[2];
    int half[BLOCK / 2];
    check(MPI_File_iread_at_all(fh, at, in, BLOCK / 2, MPI_INT, &r[0]), "MPI_File_iread_at_all");
    check(MPI_File_iread_at(fh, at + (BLOCK / 2) * (MPI_Offset)sizeof(int), half, BLOCK / 2,
                            MPI_INT, &r[1]),
          "MPI_File_iread_at");
    if (round % 2 == 0) {
      /* Both through Waitany, one at a time. */
      for (int k = 0; k < 2; ++k) {
        int which = MPI_UNDEFINED;
        check(MPI_Waitany(2, r, &which, MPI_STATUS_IGNORE), "MPI_Waitany");
        gt_begin("MPI_Waitany");
        gt_end();
      }
    } else {
      /* Together through Waitall (not Testall: MPICH 4.0's MPI_Testall over
       * several MPI-IO requests trips an assertion of its own). */
      MPI_Status st[2];
      check(MPI_Waitall(2, r, st), "MPI_Waitall");
      gt_begin("MPI_Waitall");
      gt_end();
    }
    memcpy(in + BLOCK / 2, half, sizeof half);
    for (int i = 0; i < BLOCK; ++i)
      if (in[i] != word(right, round, i))
        gt_fail("io_requests: rank %d read %d at word %d of rank %d's round %d, not %d", me,
                in[i], i, right, round, word(right, round, i));
    sum += (unsigned long)in[BLOCK - 1];
  }

  /* A user's generalized request, completed before the wait that ends it,
   * together with a receive. */
  int moved = MSG;
  MPI_Request g;
  check(MPI_Grequest_start(query, release, cancel, &moved, &g), "MPI_Grequest_start");
  int sbuf[MSG], rbuf[MSG];
  gt_reqs s;
  gt_reqs_init(&s);
  const int rk = gt_irecv(&s, rbuf, MSG, left, 99, W);
  const int sk = gt_isend(&s, "std", sbuf, MSG, right, 99, W);
  check(MPI_Grequest_complete(g), "MPI_Grequest_complete");
  MPI_Request all[3] = {g, s.req[rk], s.req[sk]};
  MPI_Status st[3];
  check(MPI_Waitall(3, all, st), "MPI_Waitall");
  int count = -1;
  MPI_Get_count(&st[0], MPI_INT, &count);
  if (count != MSG) gt_fail("io_requests: the generalized request reported %d ints", count);
  const int idx[2] = {rk, sk};
  gt_log_completed("MPI_Waitall", s.info, idx, 2);
  sum += gt_check(rbuf, MSG);

  check(MPI_File_close(&fh), "MPI_File_close");
  printf("io_requests rank %d sum %lu\n", me, sum);
  gt_finalize();
  MPI_Finalize();
  return 0;
}
