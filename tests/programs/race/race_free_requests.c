/* Race-free twin of race_requests.c: the same request-based operations,
 * each completed before the conflicting access: MPI_Wait before it for
 * MPI_Rget and MPI_Rget_accumulate (b, d, f) and for the origin buffer of
 * MPI_Rput (e); MPI_Win_flush of T after the wait of MPI_Rput and
 * MPI_Raccumulate (a, c, g). The controls are those of race_requests.c. No
 * races.
 *
 * Ranks: A = 0, T = 1, B = 2 (1 with two ranks); every rank holds
 * MPI_Win_lock_all for the whole program; other ranks only take part in the
 * lock_all epoch and the barriers. */
#include <mpi.h>
#include <stdio.h>

#define SLOTS 16

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) {
    fprintf(stderr, "race_free_requests: needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  static int mem[SLOTS];
  MPI_Win win;
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  const MPI_Comm W = MPI_COMM_WORLD;

  int one = 1, two = 2, got[8], token = 0;
  MPI_Request r, rs[2];
  MPI_Status sts[2];
  MPI_Win_lock_all(0, win);

  /* a */
  if (me == A) {
    MPI_Rput(&one, 1, MPI_INT, T, 0, 1, MPI_INT, win, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Win_flush(T, win);
    MPI_Put(&two, 1, MPI_INT, T, 0, 1, MPI_INT, win);
  }
  MPI_Barrier(W);

  /* b */
  if (me == A) {
    MPI_Rget(&got[0], 1, MPI_INT, T, 1, 1, MPI_INT, win, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Put(&two, 1, MPI_INT, T, 1, 1, MPI_INT, win);
  }
  MPI_Barrier(W);

  /* c */
  if (me == A) {
    MPI_Raccumulate(&one, 1, MPI_INT, T, 2, 1, MPI_INT, MPI_SUM, win, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Win_flush(T, win);
    MPI_Put(&two, 1, MPI_INT, T, 2, 1, MPI_INT, win);
  }
  MPI_Barrier(W);

  /* d */
  if (me == A) {
    MPI_Rget_accumulate(&one, 1, MPI_INT, &got[1], 1, MPI_INT, T, 3, 1, MPI_INT, MPI_SUM, win, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Put(&two, 1, MPI_INT, T, 3, 1, MPI_INT, win);
  }
  MPI_Barrier(W);

  /* e: A's origin buffer is mem[8] of its own window. */
  if (me == A) {
    MPI_Rput(&mem[8], 1, MPI_INT, T, 4, 1, MPI_INT, win, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Send(&token, 1, MPI_INT, B, 0, W);
  }
  if (me == B) {
    MPI_Recv(&token, 1, MPI_INT, A, 0, W, MPI_STATUS_IGNORE);
    MPI_Put(&two, 1, MPI_INT, A, 8, 1, MPI_INT, win);
  }
  MPI_Barrier(W);

  /* f */
  if (me == A) {
    MPI_Rget(&got[2], 1, MPI_INT, T, 5, 1, MPI_INT, win, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Send(&token, 1, MPI_INT, B, 1, W);
  }
  if (me == B) {
    MPI_Recv(&token, 1, MPI_INT, A, 1, W, MPI_STATUS_IGNORE);
    MPI_Put(&two, 1, MPI_INT, T, 5, 1, MPI_INT, win);
  }
  MPI_Barrier(W);

  /* g */
  if (me == A) {
    MPI_Rput(&one, 1, MPI_INT, T, 6, 1, MPI_INT, win, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Win_flush(T, win);
    MPI_Send(&token, 1, MPI_INT, B, 2, W);
  }
  if (me == B) {
    MPI_Recv(&token, 1, MPI_INT, A, 2, W, MPI_STATUS_IGNORE);
    MPI_Put(&two, 1, MPI_INT, T, 6, 1, MPI_INT, win);
  }
  MPI_Barrier(W);

  /* Control: an MPI_Rget into A's window memory, complete before B reads. */
  if (me == A) {
    MPI_Rget(&mem[9], 1, MPI_INT, T, 7, 1, MPI_INT, win, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Send(&token, 1, MPI_INT, B, 3, W);
  }
  if (me == B) {
    MPI_Recv(&token, 1, MPI_INT, A, 3, W, MPI_STATUS_IGNORE);
    MPI_Get(&got[3], 1, MPI_INT, A, 9, 1, MPI_INT, win);
  }
  MPI_Barrier(W);

  /* Control: MPI_Waitall completes two MPI_Rget before A writes. */
  if (me == A) {
    MPI_Rget(&got[4], 1, MPI_INT, T, 10, 1, MPI_INT, win, &rs[0]);
    MPI_Rget(&got[5], 1, MPI_INT, T, 11, 1, MPI_INT, win, &rs[1]);
    MPI_Waitall(2, rs, sts);
    MPI_Put(&two, 1, MPI_INT, T, 10, 1, MPI_INT, win);
    MPI_Put(&two, 1, MPI_INT, T, 11, 1, MPI_INT, win);
  }

  MPI_Win_unlock_all(win);
  MPI_Barrier(W);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
