/* Race-free twin of race_lock_exclusive.c: the same patterns with the
 * synchronisation that orders them: MPI_Win_flush between A's accesses in
 * one exclusive epoch (a, b), a barrier between A's epoch on T and B's epoch
 * on A (c), and B taking T's lock instead of asserting MPI_MODE_NOCHECK (d).
 * The controls are those of race_lock_exclusive.c. No races.
 *
 * Ranks: A = 0, T = 1, B = 2 (1 with two ranks); a barrier ends each
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
    fprintf(stderr, "race_free_lock_exclusive: needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  static int mem[SLOTS];
  MPI_Win win;
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  const MPI_Comm W = MPI_COMM_WORLD;

  int one = 1, two = 2, got[4];

  /* a */
  if (me == A) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win);
    MPI_Put(&one, 1, MPI_INT, T, 0, 1, MPI_INT, win);
    MPI_Win_flush(T, win);
    MPI_Put(&two, 1, MPI_INT, T, 0, 1, MPI_INT, win);
    MPI_Win_unlock(T, win);
  }
  MPI_Barrier(W);

  /* b */
  if (me == A) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win);
    MPI_Put(&one, 1, MPI_INT, T, 1, 1, MPI_INT, win);
    MPI_Win_flush(T, win);
    MPI_Get(&got[0], 1, MPI_INT, T, 1, 1, MPI_INT, win);
    MPI_Win_unlock(T, win);
  }
  MPI_Barrier(W);

  /* Control: exclusive epochs of two origins on T. */
  if (me == A || me == B) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win);
    MPI_Put(me == A ? &one : &two, 1, MPI_INT, T, 2, 1, MPI_INT, win);
    MPI_Win_unlock(T, win);
  }
  MPI_Barrier(W);

  /* Control: exclusive against shared. */
  if (me == A) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win);
    MPI_Put(&one, 1, MPI_INT, T, 3, 1, MPI_INT, win);
    MPI_Win_unlock(T, win);
  }
  if (me == B) {
    MPI_Win_lock(MPI_LOCK_SHARED, T, 0, win);
    MPI_Get(&got[1], 1, MPI_INT, T, 3, 1, MPI_INT, win);
    MPI_Win_unlock(T, win);
  }
  MPI_Barrier(W);

  /* c (ordered by a barrier): A's origin buffer is mem[4] of its own window. */
  if (me == A) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win);
    MPI_Put(&mem[4], 1, MPI_INT, T, 5, 1, MPI_INT, win);
    MPI_Win_unlock(T, win);
  }
  MPI_Barrier(W);
  if (me == B) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, A, 0, win);
    MPI_Put(&two, 1, MPI_INT, A, 4, 1, MPI_INT, win);
    MPI_Win_unlock(A, win);
  }
  MPI_Barrier(W);

  /* d (B takes the lock) */
  if (me == A) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win);
    MPI_Put(&one, 1, MPI_INT, T, 6, 1, MPI_INT, win);
    MPI_Win_unlock(T, win);
  }
  if (me == B) {
    MPI_Win_lock(MPI_LOCK_SHARED, T, 0, win);
    MPI_Put(&two, 1, MPI_INT, T, 6, 1, MPI_INT, win);
    MPI_Win_unlock(T, win);
  }
  MPI_Barrier(W);

  /* Control: a few exclusive epochs of A, one after the other. */
  for (int i = 0; i < 3; ++i) {
    if (me == A) {
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win);
      MPI_Put(&one, 1, MPI_INT, T, 7, 1, MPI_INT, win);
      MPI_Win_unlock(T, win);
    }
  }
  MPI_Barrier(W);

  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
