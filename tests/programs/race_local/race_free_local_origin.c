/* Race-free twin of race_local_origin.c: A completes each operation at the
 * origin before it accesses the operation's buffer: MPI_Win_flush_local
 * (a), MPI_Win_flush (b), MPI_Win_flush_local_all (c), MPI_Wait (d) and the
 * closing MPI_Win_fence (e, f). The controls are those of
 * race_local_origin.c. No races.
 *
 * Ranks: A = 0 is the origin, T = 1 the target; T and other ranks only call
 * the barriers and fences. */
#include <mpi.h>
#include <stdio.h>

#define SLOTS 16

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) {
    fprintf(stderr, "race_free_local_origin: needs at least 2 ranks\n");
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
    MPI_Put(&buf[0], 1, MPI_INT, T, 0, 1, MPI_INT, win);
    MPI_Win_flush_local(T, win);
    buf[0] = 7;
    MPI_Get(&buf[1], 1, MPI_INT, T, 1, 1, MPI_INT, win);
    MPI_Win_flush(T, win);
    v = buf[1];
    MPI_Fetch_and_op(&one, &buf[2], MPI_INT, T, 2, MPI_SUM, win);
    MPI_Win_flush_local_all(win);
    v = buf[2];
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
    MPI_Rput(&buf[4], 1, MPI_INT, T, 4, 1, MPI_INT, win, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    buf[4] = 7;
    /* Controls: after MPI_Wait. */
    buf[4] = 8;
    MPI_Rget(&buf[5], 1, MPI_INT, T, 5, 1, MPI_INT, win, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    v = buf[5];
    MPI_Win_unlock_all(win);
  }
  MPI_Barrier(W);

  /* e, f: a fence epoch; A's accesses follow its closing fence. */
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  if (me == A) {
    MPI_Put(&buf[6], 1, MPI_INT, T, 6, 1, MPI_INT, win);
    MPI_Get(&buf[7], 1, MPI_INT, T, 7, 1, MPI_INT, win);
  }
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  if (me == A) {
    buf[6] = 7;
    buf[7] = 7;
  }
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
