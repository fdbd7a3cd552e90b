/* Race-free twin of race_lock_shared.c: in the patterns that race there
 * (a, b, c), B takes T's lock exclusively, which orders its epoch with A's
 * shared one whichever comes first. The controls are those of
 * race_lock_shared.c. No races.
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
    fprintf(stderr, "race_free_lock_shared: needs at least 2 ranks\n");
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
    MPI_Win_lock(MPI_LOCK_SHARED, T, 0, win);
    MPI_Put(&one, 1, MPI_INT, T, 0, 1, MPI_INT, win);
    MPI_Win_unlock(T, win);
  }
  if (me == B) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win);
    MPI_Put(&two, 1, MPI_INT, T, 0, 1, MPI_INT, win);
    MPI_Win_unlock(T, win);
  }
  MPI_Barrier(W);

  /* b */
  if (me == A) {
    MPI_Win_lock(MPI_LOCK_SHARED, T, 0, win);
    MPI_Put(&one, 1, MPI_INT, T, 1, 1, MPI_INT, win);
    MPI_Win_unlock(T, win);
  }
  if (me == B) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win);
    MPI_Get(&gb[0], 1, MPI_INT, T, 1, 1, MPI_INT, win);
    MPI_Win_unlock(T, win);
  }
  MPI_Barrier(W);

  /* Control: two reads. */
  if (me == A || me == B) {
    MPI_Win_lock(MPI_LOCK_SHARED, T, 0, win);
    MPI_Get(me == A ? &ga[0] : &gb[1], 1, MPI_INT, T, 2, 1, MPI_INT, win);
    MPI_Win_unlock(T, win);
  }
  MPI_Barrier(W);

  /* Control: two accumulates with the same op and type. */
  if (me == A || me == B) {
    MPI_Win_lock(MPI_LOCK_SHARED, T, 0, win);
    MPI_Accumulate(&one, 1, MPI_INT, T, 3, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_unlock(T, win);
  }
  MPI_Barrier(W);

  /* c */
  if (me == A) {
    MPI_Win_lock(MPI_LOCK_SHARED, T, 0, win);
    MPI_Accumulate(&one, 1, MPI_INT, T, 4, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_unlock(T, win);
  }
  if (me == B) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win);
    MPI_Put(&two, 1, MPI_INT, T, 4, 1, MPI_INT, win);
    MPI_Win_unlock(T, win);
  }
  MPI_Barrier(W);

  /* Control: adjacent elements. */
  if (me == A || me == B) {
    MPI_Win_lock(MPI_LOCK_SHARED, T, 0, win);
    MPI_Put(&one, 1, MPI_INT, T, me == A ? 5 : 6, 1, MPI_INT, win);
    MPI_Win_unlock(T, win);
  }
  MPI_Barrier(W);

  /* Control: A's exclusive epoch against B's shared one. */
  if (me == A) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win);
    MPI_Put(&one, 1, MPI_INT, T, 7, 1, MPI_INT, win);
    MPI_Win_unlock(T, win);
  }
  if (me == B) {
    MPI_Win_lock(MPI_LOCK_SHARED, T, 0, win);
    MPI_Put(&two, 1, MPI_INT, T, 7, 1, MPI_INT, win);
    MPI_Win_unlock(T, win);
  }
  MPI_Barrier(W);

  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
