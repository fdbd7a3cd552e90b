/* Race-free twin of race_local_lock.c: the same patterns with the
 * synchronisation that orders them: a barrier after A's unlock and before
 * T's local accesses (a, b, c), MPI_Win_flush before A sends T the message
 * (d), a barrier after T's store and before A's lock (e), and A taking the
 * lock exclusively while T holds its own lock shared (f: ordered whichever
 * epoch comes first). The controls are those of race_local_lock.c. No
 * races.
 *
 * Ranks: A = 0, T = 1; a barrier ends each pattern; other ranks only call
 * the barriers. */
#include <mpi.h>
#include <stdio.h>

#define SLOTS 16

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) {
    fprintf(stderr, "race_free_local_lock: needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int A = 0, T = 1;
  static int mem[SLOTS];
  MPI_Win win;
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  const MPI_Comm W = MPI_COMM_WORLD;

  int one = 1, got[2], token = 0, v = 0;

  /* a */
  if (me == A) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win);
    MPI_Put(&one, 1, MPI_INT, T, 0, 1, MPI_INT, win);
    MPI_Win_unlock(T, win);
  }
  MPI_Barrier(W);
  if (me == T) {
    mem[0] = 5;
  }
  MPI_Barrier(W);

  /* b, c */
  if (me == A) {
    MPI_Win_lock(MPI_LOCK_SHARED, T, 0, win);
    MPI_Put(&one, 1, MPI_INT, T, 1, 1, MPI_INT, win);
    MPI_Get(&got[0], 1, MPI_INT, T, 2, 1, MPI_INT, win);
    MPI_Get(&got[1], 1, MPI_INT, T, 3, 1, MPI_INT, win);
    MPI_Win_unlock(T, win);
  }
  MPI_Barrier(W);
  if (me == T) {
    v = mem[1];
    mem[2] = 5;
    v = mem[3];
    mem[4] = 5;
  }
  MPI_Barrier(W);

  /* Control: the element of a, after the barrier that ended a. */
  if (me == T) {
    mem[0] = 6;
  }
  MPI_Barrier(W);

  /* d (flush, then send) */
  if (me == A) {
    MPI_Win_lock_all(0, win);
    MPI_Put(&one, 1, MPI_INT, T, 5, 1, MPI_INT, win);
    MPI_Win_flush(T, win);
    MPI_Send(&token, 1, MPI_INT, T, 0, W);
    MPI_Win_unlock_all(win);
  }
  if (me == T) {
    MPI_Recv(&token, 1, MPI_INT, A, 0, W, MPI_STATUS_IGNORE);
    mem[5] = 5;
  }
  MPI_Barrier(W);

  /* e */
  if (me == T) {
    mem[6] = 5;
  }
  MPI_Barrier(W);
  if (me == A) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win);
    MPI_Put(&one, 1, MPI_INT, T, 6, 1, MPI_INT, win);
    MPI_Win_unlock(T, win);
  }
  MPI_Barrier(W);

  /* f (A's lock exclusive) */
  if (me == T) {
    MPI_Win_lock(MPI_LOCK_SHARED, T, 0, win);
    mem[7] = 5;
    MPI_Win_unlock(T, win);
  }
  if (me == A) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win);
    MPI_Put(&one, 1, MPI_INT, T, 7, 1, MPI_INT, win);
    MPI_Win_unlock(T, win);
  }
  MPI_Barrier(W);

  /* Control: T's and A's exclusive epochs on T's window. */
  if (me == T) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win);
    mem[8] = 5;
    MPI_Win_unlock(T, win);
  }
  if (me == A) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win);
    MPI_Put(&one, 1, MPI_INT, T, 8, 1, MPI_INT, win);
    MPI_Win_unlock(T, win);
  }
  MPI_Barrier(W);

  (void)v;
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
