/* Request-based RMA (MPI_Rput, MPI_Rget, MPI_Raccumulate,
 * MPI_Rget_accumulate) and what MPI_Wait on their requests completes:
 * for MPI_Rput and MPI_Raccumulate only the origin side, for MPI_Rget and
 * MPI_Rget_accumulate both sides. Every rank holds MPI_Win_lock_all for the
 * whole program; the patterns:
 *
 *   a  A: MPI_Rput, wait, then MPI_Put to the same bytes;
 *   b  A: MPI_Rget, MPI_Put to the same bytes, then the wait;
 *   c  A: MPI_Raccumulate, wait, then MPI_Put to the same bytes;
 *   d  A: MPI_Rget_accumulate, MPI_Put to the same bytes, then the wait;
 *   e  A: MPI_Rput from its own window memory, tells B, then waits; B writes
 *      into that memory;
 *   f  A: MPI_Rget, tells B, then waits; B writes the bytes A reads;
 *   g  A: MPI_Rput, wait, tells B; B writes the same bytes.
 * Unmarked controls: A's MPI_Rget into its own window memory, waited for
 * before B reads that memory; two MPI_Rget completed by MPI_Waitall before
 * A writes their bytes.
 *
 * race_free_requests.c waits before the conflicting access in b, d, e and f
 * and flushes after the wait in a, c and g. Ranks: A = 0, T = 1, B = 2 (1
 * with two ranks); other ranks only take part in the lock_all epoch and the
 * barriers. */
#include <mpi.h>
#include <stdio.h>

#define SLOTS 16

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) {
    fprintf(stderr, "race_requests: needs at least 2 ranks\n");
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
    MPI_Rput(&one, 1, MPI_INT, T, 0, 1, MPI_INT, win, &r); /* race: a */
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Put(&two, 1, MPI_INT, T, 0, 1, MPI_INT, win); /* race: a */
  }
  MPI_Barrier(W);

  /* b */
  if (me == A) {
    MPI_Rget(&got[0], 1, MPI_INT, T, 1, 1, MPI_INT, win, &r); /* race: b */
    MPI_Put(&two, 1, MPI_INT, T, 1, 1, MPI_INT, win); /* race: b */
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(W);

  /* c */
  if (me == A) {
    MPI_Raccumulate(&one, 1, MPI_INT, T, 2, 1, MPI_INT, MPI_SUM, win, &r); /* race: c */
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Put(&two, 1, MPI_INT, T, 2, 1, MPI_INT, win); /* race: c */
  }
  MPI_Barrier(W);

  /* d */
  if (me == A) {
    MPI_Rget_accumulate(&one, 1, MPI_INT, &got[1], 1, MPI_INT, T, 3, 1, MPI_INT, MPI_SUM, win, &r); /* race: d */
    MPI_Put(&two, 1, MPI_INT, T, 3, 1, MPI_INT, win); /* race: d */
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(W);

  /* e: A's origin buffer is mem[8] of its own window. */
  if (me == A) {
    MPI_Rput(&mem[8], 1, MPI_INT, T, 4, 1, MPI_INT, win, &r); /* race: e */
    MPI_Send(&token, 1, MPI_INT, B, 0, W);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  }
  if (me == B) {
    MPI_Recv(&token, 1, MPI_INT, A, 0, W, MPI_STATUS_IGNORE);
    MPI_Put(&two, 1, MPI_INT, A, 8, 1, MPI_INT, win); /* race: e */
  }
  MPI_Barrier(W);

  /* f */
  if (me == A) {
    MPI_Rget(&got[2], 1, MPI_INT, T, 5, 1, MPI_INT, win, &r); /* race: f */
    MPI_Send(&token, 1, MPI_INT, B, 1, W);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  }
  if (me == B) {
    MPI_Recv(&token, 1, MPI_INT, A, 1, W, MPI_STATUS_IGNORE);
    MPI_Put(&two, 1, MPI_INT, T, 5, 1, MPI_INT, win); /* race: f */
  }
  MPI_Barrier(W);

  /* g */
  if (me == A) {
    MPI_Rput(&one, 1, MPI_INT, T, 6, 1, MPI_INT, win, &r); /* race: g */
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Send(&token, 1, MPI_INT, B, 2, W);
  }
  if (me == B) {
    MPI_Recv(&token, 1, MPI_INT, A, 2, W, MPI_STATUS_IGNORE);
    MPI_Put(&two, 1, MPI_INT, T, 6, 1, MPI_INT, win); /* race: g */
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
