/* Local loads and stores under general active-target synchronisation: T
 * exposes its window to A (MPI_Win_post ... MPI_Win_wait) and accesses it
 * locally inside the exposure epoch, while A's operations of its access
 * epoch (MPI_Win_start ... MPI_Win_complete) are in flight. They are
 * ordered before T only by MPI_Win_wait, not by A's MPI_Win_complete.
 *
 *   a  T stores an element A puts into;
 *   b  T loads an element A puts into;
 *   c  T stores an element A gets from;
 *   d  T stores an element A accumulates into.
 * Unmarked controls: T stores an element before MPI_Win_post that A puts
 * into (A's epoch starts after the post); T loads an element A gets from;
 * T stores an element A does not access; after MPI_Win_wait, T stores and
 * loads the elements of a and b again and stores one A put into.
 *
 * race_free_local_pscw.c has T wait for the end of the exposure epoch
 * before its local accesses. Ranks: A = 0, T = 1; other ranks only call
 * the barrier. */
#include <mpi.h>
#include <stdio.h>

#define SLOTS 16

static MPI_Group group_of(MPI_Win win, int rank) {
  MPI_Group wg, g;
  MPI_Win_get_group(win, &wg);
  MPI_Group_incl(wg, 1, &rank, &g);
  MPI_Group_free(&wg);
  return g;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) {
    fprintf(stderr, "race_local_pscw: needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int A = 0, T = 1;
  static int mem[SLOTS];
  MPI_Win win;
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Group gA = group_of(win, A), gT = group_of(win, T);

  int one = 1, got[2], v = 0;

  if (me == T) {
    /* Control: before the exposure epoch. */
    mem[4] = 5;
    MPI_Win_post(gA, 0, win);
  }
  if (me == A) {
    MPI_Win_start(gT, 0, win);
    MPI_Put(&one, 1, MPI_INT, T, 0, 1, MPI_INT, win); /* race: a */
    MPI_Put(&one, 1, MPI_INT, T, 1, 1, MPI_INT, win); /* race: b */
    MPI_Get(&got[0], 1, MPI_INT, T, 2, 1, MPI_INT, win); /* race: c */
    MPI_Accumulate(&one, 1, MPI_INT, T, 3, 1, MPI_INT, MPI_SUM, win); /* race: d */
    MPI_Put(&one, 1, MPI_INT, T, 4, 1, MPI_INT, win);
    MPI_Get(&got[1], 1, MPI_INT, T, 5, 1, MPI_INT, win);
    MPI_Put(&one, 1, MPI_INT, T, 6, 1, MPI_INT, win);
    MPI_Win_complete(win);
  }
  if (me == T) {
    /* Inside the exposure epoch (race_free_local_pscw.c waits first). */
    mem[0] = 5; /* race: a */
    v = mem[1]; /* race: b */
    mem[2] = 5; /* race: c */
    mem[3] = 5; /* race: d */
    v = mem[5];
    mem[7] = 5;
    MPI_Win_wait(win);
    /* Controls: after the exposure epoch. */
    mem[0] = 6;
    v = mem[1];
    mem[6] = 6;
  }
  MPI_Barrier(MPI_COMM_WORLD);

  (void)v;
  MPI_Group_free(&gA);
  MPI_Group_free(&gT);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
