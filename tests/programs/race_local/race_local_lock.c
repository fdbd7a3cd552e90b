/* Local loads and stores against passive-target epochs. A's operations on
 * T are complete at A's MPI_Win_unlock (MPI_Win_flush), but that orders
 * them only before what T does after a later synchronisation with A; a
 * local access of T that no such synchronisation separates from A's epoch
 * races with its operations, whenever it happens.
 *
 *   a  A puts under an exclusive lock of T; T then stores that element;
 *   b  A puts under a shared lock; T loads that element;
 *   c  A gets under that shared lock; T stores that element;
 *   d  A puts in a lock_all epoch and sends T a message, and only then
 *      flushes: T receives and stores the element (the message left before
 *      the put was complete);
 *   e  T stores an element first; A then puts into it under an exclusive
 *      lock (nothing orders T's store before A's epoch);
 *   f  T stores an element inside a shared lock epoch of its own window
 *      while A puts into it under a shared lock (shared locks do not
 *      exclude each other).
 * Unmarked controls: T loads an element A gets from; T stores an element A
 * does not access; T stores the element of a after the barrier that ends
 * a; T stores an element inside an exclusive lock epoch of its own window
 * while A puts into it under an exclusive lock (ordered whichever epoch
 * comes first).
 *
 * race_free_local_lock.c has a barrier between A's epoch and T's accesses
 * in a, b, c and e, A flush before it sends in d, and A take the lock
 * exclusively in f. Ranks: A = 0, T = 1; a barrier ends each pattern; other
 * ranks only call the barriers. */
#include <mpi.h>
#include <stdio.h>

#define SLOTS 16

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) {
    fprintf(stderr, "race_local_lock: needs at least 2 ranks\n");
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
    MPI_Put(&one, 1, MPI_INT, T, 0, 1, MPI_INT, win); /* race: a */
    MPI_Win_unlock(T, win);
  }
  if (me == T) {
    mem[0] = 5; /* race: a */
  }
  MPI_Barrier(W);

  /* b, c */
  if (me == A) {
    MPI_Win_lock(MPI_LOCK_SHARED, T, 0, win);
    MPI_Put(&one, 1, MPI_INT, T, 1, 1, MPI_INT, win); /* race: b */
    MPI_Get(&got[0], 1, MPI_INT, T, 2, 1, MPI_INT, win); /* race: c */
    MPI_Get(&got[1], 1, MPI_INT, T, 3, 1, MPI_INT, win);
    MPI_Win_unlock(T, win);
  }
  if (me == T) {
    v = mem[1]; /* race: b */
    mem[2] = 5; /* race: c */
    v = mem[3];
    mem[4] = 5;
  }
  MPI_Barrier(W);

  /* Control: the element of a, after the barrier that ended a. */
  if (me == T) {
    mem[0] = 6;
  }
  MPI_Barrier(W);

  /* d */
  if (me == A) {
    MPI_Win_lock_all(0, win);
    MPI_Put(&one, 1, MPI_INT, T, 5, 1, MPI_INT, win); /* race: d */
    MPI_Send(&token, 1, MPI_INT, T, 0, W);
    MPI_Win_flush(T, win);
    MPI_Win_unlock_all(win);
  }
  if (me == T) {
    MPI_Recv(&token, 1, MPI_INT, A, 0, W, MPI_STATUS_IGNORE);
    mem[5] = 5; /* race: d */
  }
  MPI_Barrier(W);

  /* e */
  if (me == T) {
    mem[6] = 5; /* race: e */
  }
  if (me == A) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win);
    MPI_Put(&one, 1, MPI_INT, T, 6, 1, MPI_INT, win); /* race: e */
    MPI_Win_unlock(T, win);
  }
  MPI_Barrier(W);

  /* f */
  if (me == T) {
    MPI_Win_lock(MPI_LOCK_SHARED, T, 0, win);
    mem[7] = 5; /* race: f */
    MPI_Win_unlock(T, win);
  }
  if (me == A) {
    MPI_Win_lock(MPI_LOCK_SHARED, T, 0, win);
    MPI_Put(&one, 1, MPI_INT, T, 7, 1, MPI_INT, win); /* race: f */
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
