/* Local loads and stores of window memory in one MPI_Win_fence epoch: T
 * accesses its own window (plain C, instrumented by vcx-mpicc) while A's
 * RMA operations on the same elements are in flight; they end only at the
 * closing fence.
 *
 *   a  T stores an element A puts into;
 *   b  T loads an element A puts into;
 *   c  T stores an element A gets from (the get reads it);
 *   d  T stores an element A accumulates into (a local store is not atomic);
 *   e  T loads an element A accumulates into;
 *   f  T stores the second element of A's two-element put.
 * Unmarked controls: T loads an element A gets from (two reads); T stores
 * the element between A's put and A's two-element put (different bytes);
 * T stores an element after the closing fence of the epoch of A's put into
 * it; T stores an element in the epoch before the one of A's put into it;
 * T stores, loads and stores again an element no other rank accesses (local
 * accesses of one rank are in program order).
 *
 * race_free_local_fence.c has a fence between A's operations and T's local
 * accesses. Ranks: A = 0, T = 1; other ranks only call the fences. Window
 * slots are ints. */
#include <mpi.h>
#include <stdio.h>

#define SLOTS 16

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) {
    fprintf(stderr, "race_local_fence: needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int A = 0, T = 1;
  static int mem[SLOTS];
  MPI_Win win;
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);

  int one = 1, two[2] = {2, 3}, got[2], v = 0;

  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  /* A's operations on T's window. */
  if (me == A) {
    MPI_Put(&one, 1, MPI_INT, T, 0, 1, MPI_INT, win); /* race: a */
    MPI_Put(&one, 1, MPI_INT, T, 1, 1, MPI_INT, win); /* race: b */
    MPI_Get(&got[0], 1, MPI_INT, T, 2, 1, MPI_INT, win); /* race: c */
    MPI_Accumulate(&one, 1, MPI_INT, T, 3, 1, MPI_INT, MPI_SUM, win); /* race: d */
    MPI_Accumulate(&one, 1, MPI_INT, T, 4, 1, MPI_INT, MPI_SUM, win); /* race: e */
    MPI_Get(&got[1], 1, MPI_INT, T, 5, 1, MPI_INT, win);
    MPI_Put(&one, 1, MPI_INT, T, 6, 1, MPI_INT, win);
    MPI_Put(two, 2, MPI_INT, T, 8, 2, MPI_INT, win); /* race: f */
    MPI_Put(&one, 1, MPI_INT, T, 10, 1, MPI_INT, win);
  }
  /* T's local accesses (race_free_local_fence.c has a fence here). */
  if (me == T) {
    mem[0] = 5; /* race: a */
    v = mem[1]; /* race: b */
    mem[2] = 5; /* race: c */
    mem[3] = 5; /* race: d */
    v = mem[4]; /* race: e */
    v = mem[5];
    mem[7] = 5;
    mem[9] = 5; /* race: f */
    mem[11] = 5;
    mem[12] = 5;
    v = mem[12];
    mem[12] = 6;
  }
  MPI_Win_fence(0, win);

  /* Controls: T's store after the fence that completed A's put into
   * mem[10]; A's put into mem[11], which T stored in the epoch before. */
  if (me == T) {
    mem[10] = 6;
  }
  if (me == A) {
    MPI_Put(&one, 1, MPI_INT, T, 11, 1, MPI_INT, win);
  }
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);

  (void)v;
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
