/* Race-free twin of race_local_loop.c: the same loops of T over window
 * memory and operations of A, with a fence on both windows between them,
 * so that T's loops follow the completion of A's operations. The controls
 * are those of race_local_loop.c. No races.
 *
 * Ranks: A = 0, T = 1; other ranks only call the fences. */
#include <mpi.h>
#include <stdio.h>

#define SLOTS 32
#define ROWS 4
#define COLS 8

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) {
    fprintf(stderr, "race_free_local_loop: needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int A = 0, T = 1;
  static int mem[SLOTS];
  static int grid[ROWS][COLS];
  MPI_Win win, gwin;
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_create(grid, sizeof grid, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &gwin);

  int one = 1, got[2], v = 0;

  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  MPI_Win_fence(MPI_MODE_NOPRECEDE, gwin);
  /* A's operations, one element each. */
  if (me == A) {
    MPI_Put(&one, 1, MPI_INT, T, 4, 1, MPI_INT, win);
    MPI_Accumulate(&one, 1, MPI_INT, T, 6, 1, MPI_INT, MPI_SUM, win);
    MPI_Put(&one, 1, MPI_INT, T, 12, 1, MPI_INT, win);
    MPI_Get(&got[0], 1, MPI_INT, T, 10, 1, MPI_INT, win);
    MPI_Put(&one, 1, MPI_INT, T, 31, 1, MPI_INT, win);
    MPI_Put(&one, 1, MPI_INT, T, 17, 1, MPI_INT, win);
    MPI_Put(&one, 1, MPI_INT, T, 2 * COLS + 3, 1, MPI_INT, gwin);
    MPI_Get(&got[1], 1, MPI_INT, T, 1 * COLS + 5, 1, MPI_INT, gwin);
  }
  /* The fences race_local_loop.c lacks. */
  MPI_Win_fence(0, win);
  MPI_Win_fence(0, gwin);
  /* T's loops. */
  if (me == T) {
    for (int i = 0; i < 8; ++i) mem[i] = i;
    for (int i = 8; i < 16; ++i) v += mem[i];
    for (int i = 16; i < SLOTS; i += 2) mem[i] = i;
    for (int row = 0; row < ROWS; ++row) {
      for (int col = 0; col < COLS; ++col) {
        grid[row][col] = row * COLS + col;
      }
    }
  }
  MPI_Win_fence(0, win);
  MPI_Win_fence(0, gwin);

  /* Control: the sweep of a after the fence. */
  if (me == T) {
    for (int i = 0; i < 8; ++i) mem[i] = -i;
  }
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, gwin);

  (void)v;
  MPI_Win_free(&gwin);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
