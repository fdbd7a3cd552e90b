/* What MPI_Win_flush, MPI_Win_flush_all, MPI_Win_flush_local and
 * MPI_Win_flush_local_all complete, and what they do not. Every rank holds
 * MPI_Win_lock_all for the whole program; the patterns:
 *
 *   a  A writes the same bytes of T twice, nothing in between;
 *   b  ... with MPI_Win_flush_local(T) in between (completes the origin side
 *      only);
 *   c  A writes then reads the same bytes with MPI_Win_flush of another
 *      target (A itself) in between;
 *   d  A writes then reads with MPI_Win_flush_local_all in between;
 *   e  A puts from its own window memory, then tells B, who writes into that
 *      memory; A flushes locally only after telling;
 *   f  A writes the same bytes in a loop of two iterations without flushing:
 *      the line races with itself;
 *   g  A writes and tells B; B flushes T itself (a flush completes only the
 *      caller's operations) and writes the same bytes.
 * Unmarked controls: A writes, flushes T and reads; A puts from its window
 * memory, flushes locally and then gets into that memory.
 *
 * race_free_flush.c completes the first access in each pattern: MPI_Win_flush
 * in a, b, f and g, MPI_Win_flush_all in c and d, and the local flush before
 * the message in e. Ranks: A = 0, T = 1, B = 2 (1 with two ranks); other
 * ranks only take part in the lock_all epoch and the barriers. */
#include <mpi.h>
#include <stdio.h>

#define SLOTS 16

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) {
    fprintf(stderr, "race_flush: needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  static int mem[SLOTS];
  MPI_Win win;
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  const MPI_Comm W = MPI_COMM_WORLD;

  int one = 1, two = 2, got[4], token = 0;
  MPI_Win_lock_all(0, win);

  /* a */
  if (me == A) {
    MPI_Put(&one, 1, MPI_INT, T, 0, 1, MPI_INT, win); /* race: a */
    MPI_Put(&two, 1, MPI_INT, T, 0, 1, MPI_INT, win); /* race: a */
  }
  MPI_Barrier(W);

  /* b */
  if (me == A) {
    MPI_Put(&one, 1, MPI_INT, T, 1, 1, MPI_INT, win); /* race: b */
    MPI_Win_flush_local(T, win);
    MPI_Put(&two, 1, MPI_INT, T, 1, 1, MPI_INT, win); /* race: b */
  }
  MPI_Barrier(W);

  /* c */
  if (me == A) {
    MPI_Put(&one, 1, MPI_INT, T, 2, 1, MPI_INT, win); /* race: c */
    MPI_Win_flush(A, win);
    MPI_Get(&got[0], 1, MPI_INT, T, 2, 1, MPI_INT, win); /* race: c */
  }
  MPI_Barrier(W);

  /* d */
  if (me == A) {
    MPI_Put(&one, 1, MPI_INT, T, 3, 1, MPI_INT, win); /* race: d */
    MPI_Win_flush_local_all(win);
    MPI_Get(&got[1], 1, MPI_INT, T, 3, 1, MPI_INT, win); /* race: d */
  }
  MPI_Barrier(W);

  /* e: A's origin buffer is mem[8] of its own window. */
  if (me == A) {
    MPI_Put(&mem[8], 1, MPI_INT, T, 4, 1, MPI_INT, win); /* race: e */
    MPI_Send(&token, 1, MPI_INT, B, 0, W);
    MPI_Win_flush_local(T, win);
  }
  if (me == B) {
    MPI_Recv(&token, 1, MPI_INT, A, 0, W, MPI_STATUS_IGNORE);
    MPI_Put(&two, 1, MPI_INT, A, 8, 1, MPI_INT, win); /* race: e */
  }
  MPI_Barrier(W);

  /* f */
  if (me == A) {
    for (int i = 0; i < 2; ++i) {
      MPI_Put(&one, 1, MPI_INT, T, 5, 1, MPI_INT, win); /* race: f f */
    }
  }
  MPI_Barrier(W);

  /* g */
  if (me == A) {
    MPI_Put(&one, 1, MPI_INT, T, 6, 1, MPI_INT, win); /* race: g */
    MPI_Send(&token, 1, MPI_INT, B, 1, W);
  }
  if (me == B) {
    MPI_Recv(&token, 1, MPI_INT, A, 1, W, MPI_STATUS_IGNORE);
    MPI_Win_flush(T, win);
    MPI_Put(&two, 1, MPI_INT, T, 6, 1, MPI_INT, win); /* race: g */
  }
  MPI_Barrier(W);

  /* Controls. */
  if (me == A) {
    MPI_Put(&one, 1, MPI_INT, T, 7, 1, MPI_INT, win);
    MPI_Win_flush(T, win);
    MPI_Get(&got[2], 1, MPI_INT, T, 7, 1, MPI_INT, win);
    MPI_Put(&mem[9], 1, MPI_INT, T, 9, 1, MPI_INT, win);
    MPI_Win_flush_local(T, win);
    MPI_Get(&mem[9], 1, MPI_INT, T, 10, 1, MPI_INT, win);
  }

  MPI_Win_unlock_all(win);
  MPI_Barrier(W);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
