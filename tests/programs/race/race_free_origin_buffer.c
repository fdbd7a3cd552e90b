/* Race-free twin of race_origin_buffer.c: the same operations with origin
 * and result buffers in A's window, with a fence between A's first accesses
 * and the accesses of B (and A's get into the buffer it put from). No
 * races.
 *
 * Ranks: A = 0, T = 1, B = 2 (1 with two ranks); other ranks only call the
 * fences. */
#include <mpi.h>
#include <stdio.h>

#define SLOTS 32

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) {
    fprintf(stderr, "race_free_origin_buffer: needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  static int mem[SLOTS];
  MPI_Win win;
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);

  int one = 1, zero = 0, got[4];

  MPI_Win_fence(0, win);
  /* First accesses: A's, with buffers in its window, targets on T. */
  if (me == A) {
    MPI_Put(&mem[0], 1, MPI_INT, T, 16, 1, MPI_INT, win);
    MPI_Get(&mem[1], 1, MPI_INT, T, 17, 1, MPI_INT, win);
    MPI_Put(&mem[2], 1, MPI_INT, T, 18, 1, MPI_INT, win);
    MPI_Fetch_and_op(&one, &mem[3], MPI_INT, T, 19, MPI_SUM, win);
    MPI_Accumulate(&mem[4], 1, MPI_INT, T, 20, 1, MPI_INT, MPI_SUM, win);
    MPI_Get_accumulate(&one, 1, MPI_INT, &mem[5], 1, MPI_INT, T, 21, 1, MPI_INT, MPI_SUM, win);
    MPI_Compare_and_swap(&one, &zero, &mem[6], MPI_INT, T, 22, win);
    MPI_Put(&mem[7], 1, MPI_INT, T, 23, 1, MPI_INT, win);
    MPI_Put(&mem[8], 1, MPI_INT, T, 25, 1, MPI_INT, win);
    MPI_Put(&mem[8], 1, MPI_INT, T, 26, 1, MPI_INT, win);
    MPI_Put(&mem[10], 1, MPI_INT, T, 27, 1, MPI_INT, win);
    MPI_Get(&mem[11], 1, MPI_INT, T, 28, 1, MPI_INT, win);
  }
  /* The fence race_origin_buffer.c lacks. */
  MPI_Win_fence(0, win);
  /* Second accesses. */
  if (me == B) {
    MPI_Put(&one, 1, MPI_INT, A, 0, 1, MPI_INT, win);
    MPI_Get(&got[0], 1, MPI_INT, A, 1, 1, MPI_INT, win);
    MPI_Get(&got[1], 1, MPI_INT, A, 2, 1, MPI_INT, win);
    MPI_Get(&got[2], 1, MPI_INT, A, 3, 1, MPI_INT, win);
    MPI_Accumulate(&one, 1, MPI_INT, A, 4, 1, MPI_INT, MPI_SUM, win);
    MPI_Put(&one, 1, MPI_INT, A, 5, 1, MPI_INT, win);
    MPI_Get(&got[3], 1, MPI_INT, A, 6, 1, MPI_INT, win);
    MPI_Put(&one, 1, MPI_INT, A, 9, 1, MPI_INT, win);
  }
  if (me == A) {
    MPI_Get(&mem[7], 1, MPI_INT, T, 24, 1, MPI_INT, win);
  }
  MPI_Win_fence(0, win);

  /* Control: the next epoch reads what A's get wrote into mem[11]. */
  if (me == B) MPI_Get(&got[0], 1, MPI_INT, A, 11, 1, MPI_INT, win);
  MPI_Win_fence(0, win);

  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
