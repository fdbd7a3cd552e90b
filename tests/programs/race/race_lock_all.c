/* Races between MPI_Win_lock_all epochs, which take every target's lock
 * shared and so do not exclude each other:
 *
 *   a  A and B write the same bytes of T;
 *   b  A reads them while B accumulates into them;
 *   c  A writes into its own window (a lock_all epoch covers every rank)
 *      while B reads those bytes.
 * Unmarked controls: A's lock_all epoch against B's exclusive lock of T
 * (exclusive excludes the shared locks lock_all holds), and a loop in which
 * A writes the same bytes again after flushing them each time.
 *
 * race_free_lock_all.c has a barrier between A's and B's epochs in a, b and
 * c. Ranks: A = 0, T = 1, B = 2 (1 with two ranks); a barrier ends each
 * pattern; other ranks only call the barriers. */
#include <mpi.h>
#include <stdio.h>

#define SLOTS 16

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) {
    fprintf(stderr, "race_lock_all: needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  static int mem[SLOTS];
  MPI_Win win;
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  const MPI_Comm W = MPI_COMM_WORLD;

  int one = 1, two = 2, ga[4], gb[4];

  /* a */
  if (me == A) {
    MPI_Win_lock_all(0, win);
    MPI_Put(&one, 1, MPI_INT, T, 0, 1, MPI_INT, win); /* race: a */
    MPI_Win_unlock_all(win);
  }
  if (me == B) {
    MPI_Win_lock_all(0, win);
    MPI_Put(&two, 1, MPI_INT, T, 0, 1, MPI_INT, win); /* race: a */
    MPI_Win_unlock_all(win);
  }
  MPI_Barrier(W);

  /* b */
  if (me == A) {
    MPI_Win_lock_all(0, win);
    MPI_Get(&ga[0], 1, MPI_INT, T, 1, 1, MPI_INT, win); /* race: b */
    MPI_Win_unlock_all(win);
  }
  if (me == B) {
    MPI_Win_lock_all(0, win);
    MPI_Accumulate(&two, 1, MPI_INT, T, 1, 1, MPI_INT, MPI_SUM, win); /* race: b */
    MPI_Win_unlock_all(win);
  }
  MPI_Barrier(W);

  /* Control: lock_all against an exclusive lock of T. */
  if (me == A) {
    MPI_Win_lock_all(0, win);
    MPI_Put(&one, 1, MPI_INT, T, 2, 1, MPI_INT, win);
    MPI_Win_unlock_all(win);
  }
  if (me == B) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win);
    MPI_Put(&two, 1, MPI_INT, T, 2, 1, MPI_INT, win);
    MPI_Win_unlock(T, win);
  }
  MPI_Barrier(W);

  /* c: A writes to T and to itself in one lock_all epoch. */
  if (me == A) {
    MPI_Win_lock_all(0, win);
    MPI_Put(&one, 1, MPI_INT, T, 3, 1, MPI_INT, win);
    MPI_Put(&one, 1, MPI_INT, A, 3, 1, MPI_INT, win); /* race: c */
    MPI_Win_unlock_all(win);
  }
  if (me == B) {
    MPI_Win_lock_all(0, win);
    MPI_Get(&gb[0], 1, MPI_INT, A, 3, 1, MPI_INT, win); /* race: c */
    MPI_Win_unlock_all(win);
  }
  MPI_Barrier(W);

  /* Control: the same bytes again after each flush. */
  if (me == A) {
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < 3; ++i) {
      MPI_Put(&one, 1, MPI_INT, T, 4, 1, MPI_INT, win);
      MPI_Win_flush(T, win);
    }
    MPI_Win_unlock_all(win);
  }
  MPI_Barrier(W);

  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
