/* Origin buffers inside window memory, in one fence epoch. A's operations
 * target T, but their origin (or result) buffers are elements of A's own
 * window, which B accesses remotely at the same time.
 *
 *   a  A puts from mem[0]; B puts into A's mem[0];
 *   b  A gets into mem[1]; B gets from A's mem[1];
 *   c  A's MPI_Fetch_and_op returns into mem[3]; B gets from it;
 *   d  A accumulates from mem[4]; B accumulates MPI_SUM into it (reading an
 *      origin buffer is not atomic);
 *   e  A's MPI_Get_accumulate returns into mem[5]; B puts into it;
 *   f  A's MPI_Compare_and_swap returns into mem[6]; B gets from it;
 *   g  A puts from mem[7] and then gets into mem[7] (one origin).
 * Unmarked controls: A puts from mem[2] while B reads it; A puts from mem[8]
 * twice; B writes mem[9] while A puts from mem[10]; A gets into mem[11] and
 * B reads it in the next epoch.
 *
 * race_free_origin_buffer.c has a fence between the first and the second
 * accesses. Ranks: A = 0, T = 1, B = 2 (1 with two ranks); other ranks only
 * call the fences. */
#include <mpi.h>
#include <stdio.h>

#define SLOTS 32

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) {
    fprintf(stderr, "race_origin_buffer: needs at least 2 ranks\n");
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
    MPI_Put(&mem[0], 1, MPI_INT, T, 16, 1, MPI_INT, win); /* race: a */
    MPI_Get(&mem[1], 1, MPI_INT, T, 17, 1, MPI_INT, win); /* race: b */
    MPI_Put(&mem[2], 1, MPI_INT, T, 18, 1, MPI_INT, win);
    MPI_Fetch_and_op(&one, &mem[3], MPI_INT, T, 19, MPI_SUM, win); /* race: c */
    MPI_Accumulate(&mem[4], 1, MPI_INT, T, 20, 1, MPI_INT, MPI_SUM, win); /* race: d */
    MPI_Get_accumulate(&one, 1, MPI_INT, &mem[5], 1, MPI_INT, T, 21, 1, MPI_INT, MPI_SUM, win); /* race: e */
    MPI_Compare_and_swap(&one, &zero, &mem[6], MPI_INT, T, 22, win); /* race: f */
    MPI_Put(&mem[7], 1, MPI_INT, T, 23, 1, MPI_INT, win); /* race: g */
    MPI_Put(&mem[8], 1, MPI_INT, T, 25, 1, MPI_INT, win);
    MPI_Put(&mem[8], 1, MPI_INT, T, 26, 1, MPI_INT, win);
    MPI_Put(&mem[10], 1, MPI_INT, T, 27, 1, MPI_INT, win);
    MPI_Get(&mem[11], 1, MPI_INT, T, 28, 1, MPI_INT, win);
  }
  /* Second accesses (race_free_origin_buffer.c has a fence here). */
  if (me == B) {
    MPI_Put(&one, 1, MPI_INT, A, 0, 1, MPI_INT, win); /* race: a */
    MPI_Get(&got[0], 1, MPI_INT, A, 1, 1, MPI_INT, win); /* race: b */
    MPI_Get(&got[1], 1, MPI_INT, A, 2, 1, MPI_INT, win);
    MPI_Get(&got[2], 1, MPI_INT, A, 3, 1, MPI_INT, win); /* race: c */
    MPI_Accumulate(&one, 1, MPI_INT, A, 4, 1, MPI_INT, MPI_SUM, win); /* race: d */
    MPI_Put(&one, 1, MPI_INT, A, 5, 1, MPI_INT, win); /* race: e */
    MPI_Get(&got[3], 1, MPI_INT, A, 6, 1, MPI_INT, win); /* race: f */
    MPI_Put(&one, 1, MPI_INT, A, 9, 1, MPI_INT, win);
  }
  if (me == A) {
    MPI_Get(&mem[7], 1, MPI_INT, T, 24, 1, MPI_INT, win); /* race: g */
  }
  MPI_Win_fence(0, win);

  /* Control: the next epoch reads what A's get wrote into mem[11]. */
  if (me == B) MPI_Get(&got[0], 1, MPI_INT, A, 11, 1, MPI_INT, win);
  MPI_Win_fence(0, win);

  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
