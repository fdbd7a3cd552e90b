/* Loops of local loads and stores over window memory, in one fence epoch
 * with A's operations on single elements in the middle of the range. A
 * loop on one line is one source line: however many of its iterations
 * race with an operation, that is one race (a pair of lines). Two windows:
 * "mem", a row of ints, and "grid", a ROWS x COLS array of ints.
 *
 *   a  T's sweep storing mem[0..7] while A puts into mem[4];
 *   b  that sweep while A accumulates into mem[6];
 *   c  T's loop loading mem[8..15] while A puts into mem[12];
 *   d  T's nested loop storing every element of grid while A puts into
 *      grid[2][3];
 *   e  that nested loop while A gets from grid[1][5].
 * Unmarked controls: the loading loop of c while A gets from mem[10] (two
 * reads); a strided loop storing the even elements mem[16..30] while A
 * puts into mem[17] and mem[31] (elements the loop skips);
 * the sweep of a again after the closing fence.
 *
 * race_free_local_loop.c has a fence between A's operations and T's loops.
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
    fprintf(stderr, "race_local_loop: needs at least 2 ranks\n");
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
    MPI_Put(&one, 1, MPI_INT, T, 4, 1, MPI_INT, win); /* race: a */
    MPI_Accumulate(&one, 1, MPI_INT, T, 6, 1, MPI_INT, MPI_SUM, win); /* race: b */
    MPI_Put(&one, 1, MPI_INT, T, 12, 1, MPI_INT, win); /* race: c */
    MPI_Get(&got[0], 1, MPI_INT, T, 10, 1, MPI_INT, win);
    MPI_Put(&one, 1, MPI_INT, T, 31, 1, MPI_INT, win);
    MPI_Put(&one, 1, MPI_INT, T, 17, 1, MPI_INT, win);
    MPI_Put(&one, 1, MPI_INT, T, 2 * COLS + 3, 1, MPI_INT, gwin); /* race: d */
    MPI_Get(&got[1], 1, MPI_INT, T, 1 * COLS + 5, 1, MPI_INT, gwin); /* race: e */
  }
  /* T's loops (race_free_local_loop.c has the fences here). */
  if (me == T) {
    for (int i = 0; i < 8; ++i) mem[i] = i; /* race: a b */
    for (int i = 8; i < 16; ++i) v += mem[i]; /* race: c */
    for (int i = 16; i < SLOTS; i += 2) mem[i] = i;
    for (int row = 0; row < ROWS; ++row) {
      for (int col = 0; col < COLS; ++col) {
        grid[row][col] = row * COLS + col; /* race: d e */
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
