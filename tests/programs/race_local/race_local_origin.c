/* Local loads and stores of A's origin and result buffers while its RMA
 * operations are in flight. The buffers are ordinary local memory of A
 * (an array on its stack), exposed only while an operation uses them: a
 * put reads its origin buffer, a get (and a fetching atomic) writes its
 * result buffer, until the operation is complete at the origin.
 *
 *   a  A stores into the origin buffer of a put before MPI_Win_unlock;
 *   b  A loads the result buffer of a get before it is complete;
 *   c  A loads the result buffer of an MPI_Fetch_and_op before it is
 *      complete;
 *   d  A stores into the origin buffer of an MPI_Rput before MPI_Wait;
 *   e  A stores into the origin buffer of a put in a fence epoch;
 *   f  A stores into the result buffer of a get in a fence epoch.
 * Unmarked controls: A loads the origin buffer of a put in flight (two
 * reads); A stores and loads the buffers of a, b, c and of another put
 * after MPI_Win_flush_local; A stores into the origin buffer of d after
 * MPI_Wait, and loads the result buffer of an MPI_Rget after its MPI_Wait;
 * A stores into and loads the buffers of e and f after the closing fence.
 *
 * race_free_local_origin.c completes each operation before A accesses its
 * buffer (MPI_Win_flush_local, MPI_Win_flush, MPI_Win_flush_local_all,
 * MPI_Wait, MPI_Win_fence). Ranks: A = 0 is the origin, T = 1 the target;
 * T and other ranks only call the barriers and fences. */
#include <mpi.h>
#include <stdio.h>

#define SLOTS 16

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) {
    fprintf(stderr, "race_local_origin: needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int A = 0, T = 1;
  static int mem[SLOTS];
  MPI_Win win;
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  const MPI_Comm W = MPI_COMM_WORLD;

  int buf[SLOTS] = {0}, one = 1, v = 0;
  MPI_Request req;

  /* a, b, c: one shared lock epoch of A on T. */
  if (me == A) {
    MPI_Win_lock(MPI_LOCK_SHARED, T, 0, win);
    MPI_Put(&buf[0], 1, MPI_INT, T, 0, 1, MPI_INT, win); /* race: a */
    buf[0] = 7; /* race: a */
    MPI_Get(&buf[1], 1, MPI_INT, T, 1, 1, MPI_INT, win); /* race: b */
    v = buf[1]; /* race: b */
    MPI_Fetch_and_op(&one, &buf[2], MPI_INT, T, 2, MPI_SUM, win); /* race: c */
    v = buf[2]; /* race: c */
    /* Control: a put reads its origin buffer; so does A. */
    MPI_Put(&buf[3], 1, MPI_INT, T, 3, 1, MPI_INT, win);
    v = buf[3];
    MPI_Win_flush_local(T, win);
    /* Controls: every buffer above is complete at A. */
    buf[0] = 8;
    buf[1] = 8;
    v = buf[2];
    buf[3] = 8;
    MPI_Win_unlock(T, win);
  }
  MPI_Barrier(W);

  /* d: request-based operations in a lock_all epoch. */
  if (me == A) {
    MPI_Win_lock_all(0, win);
    MPI_Rput(&buf[4], 1, MPI_INT, T, 4, 1, MPI_INT, win, &req); /* race: d */
    buf[4] = 7; /* race: d */
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    /* Controls: after MPI_Wait. */
    buf[4] = 8;
    MPI_Rget(&buf[5], 1, MPI_INT, T, 5, 1, MPI_INT, win, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    v = buf[5];
    MPI_Win_unlock_all(win);
  }
  MPI_Barrier(W);

  /* e, f: a fence epoch. */
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  if (me == A) {
    MPI_Put(&buf[6], 1, MPI_INT, T, 6, 1, MPI_INT, win); /* race: e */
    buf[6] = 7; /* race: e */
    MPI_Get(&buf[7], 1, MPI_INT, T, 7, 1, MPI_INT, win); /* race: f */
    buf[7] = 7; /* race: f */
  }
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  /* Controls: after the fence. */
  if (me == A) {
    buf[6] = 8;
    v = buf[7];
  }
  MPI_Barrier(W);

  (void)v;
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
