/* Race-free twin of race_local_fence.c: the same local accesses of T and
 * RMA operations of A, with a fence between them, so that T's loads and
 * stores follow the completion of A's operations. The controls are those of
 * race_local_fence.c. No races.
 *
 * Ranks: A = 0, T = 1; other ranks only call the fences. Window slots are
 * ints. */
#include <mpi.h>
#include <stdio.h>

#define SLOTS 16

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) {
    fprintf(stderr, "race_free_local_fence: needs at least 2 ranks\n");
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
    MPI_Put(&one, 1, MPI_INT, T, 0, 1, MPI_INT, win);
    MPI_Put(&one, 1, MPI_INT, T, 1, 1, MPI_INT, win);
    MPI_Get(&got[0], 1, MPI_INT, T, 2, 1, MPI_INT, win);
    MPI_Accumulate(&one, 1, MPI_INT, T, 3, 1, MPI_INT, MPI_SUM, win);
    MPI_Accumulate(&one, 1, MPI_INT, T, 4, 1, MPI_INT, MPI_SUM, win);
    MPI_Get(&got[1], 1, MPI_INT, T, 5, 1, MPI_INT, win);
    MPI_Put(&one, 1, MPI_INT, T, 6, 1, MPI_INT, win);
    MPI_Put(two, 2, MPI_INT, T, 8, 2, MPI_INT, win);
    MPI_Put(&one, 1, MPI_INT, T, 10, 1, MPI_INT, win);
  }
  /* The fence race_local_fence.c lacks. */
  MPI_Win_fence(0, win);
  /* T's local accesses. */
  if (me == T) {
    mem[0] = 5;
    v = mem[1];
    mem[2] = 5;
    mem[3] = 5;
    v = mem[4];
    v = mem[5];
    mem[7] = 5;
    mem[9] = 5;
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
