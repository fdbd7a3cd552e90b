/* Race-free twin of race_atomics.c: the same atomic operations, puts and
 * gets in MPI_Win_lock_all epochs, but A flushes all its operations before
 * the barrier that separates its first accesses from the second ones. No
 * races.
 *
 * Ranks: A = 0, T = 1, B = 2 (1 with two ranks); other ranks only take part
 * in the lock_all epoch and the barriers. */
#include <mpi.h>
#include <stdio.h>

#define SLOTS 24

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) {
    fprintf(stderr, "race_free_atomics: needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  static int mem[SLOTS];
  MPI_Win win;
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  const MPI_Comm W = MPI_COMM_WORLD;

  int one = 1, zero = 0, two[2] = {2, 2}, r[32];
  unsigned uone = 1, uzero = 0, ur[2];

  MPI_Win_lock_all(0, win);
  /* First accesses. */
  if (me == A) {
    MPI_Fetch_and_op(&one, &r[0], MPI_INT, T, 0, MPI_SUM, win);
    MPI_Fetch_and_op(&one, &r[1], MPI_INT, T, 1, MPI_SUM, win);
    MPI_Compare_and_swap(&one, &zero, &r[2], MPI_INT, T, 2, win);
    MPI_Compare_and_swap(&one, &zero, &r[3], MPI_INT, T, 3, win);
    MPI_Fetch_and_op(NULL, &r[4], MPI_INT, T, 4, MPI_NO_OP, win);
    MPI_Fetch_and_op(&one, &r[5], MPI_INT, T, 5, MPI_SUM, win);
    MPI_Get_accumulate(&one, 1, MPI_INT, &r[6], 1, MPI_INT, T, 6, 1, MPI_INT, MPI_REPLACE, win);
    MPI_Get_accumulate(&one, 1, MPI_INT, &r[7], 1, MPI_INT, T, 7, 1, MPI_INT, MPI_REPLACE, win);
    MPI_Fetch_and_op(&one, &r[8], MPI_INT, T, 8, MPI_SUM, win);
    for (int i = 0; i < 2; ++i) {
      MPI_Fetch_and_op(&one, &r[9 + i], MPI_INT, T, 9, MPI_SUM, win);
    }
    MPI_Fetch_and_op(NULL, &r[11], MPI_INT, T, 11, MPI_NO_OP, win);
    MPI_Get_accumulate(two, 2, MPI_INT, &r[12], 2, MPI_INT, T, 12, 2, MPI_INT, MPI_SUM, win);
    MPI_Compare_and_swap(&one, &zero, &r[14], MPI_INT, T, 14, win);
    MPI_Get_accumulate(&one, 1, MPI_INT, &r[15], 1, MPI_INT, T, 15, 1, MPI_INT, MPI_NO_OP, win);
  }
  /* The flush race_atomics.c lacks completes A's operations before the
   * barrier. */
  if (me == A) MPI_Win_flush_all(win);
  MPI_Barrier(W);
  /* Second accesses. */
  if (me == B) {
    MPI_Fetch_and_op(&one, &r[16], MPI_INT, T, 0, MPI_SUM, win);
    MPI_Compare_and_swap(&one, &zero, &r[17], MPI_INT, T, 1, win);
    MPI_Compare_and_swap(&zero, &one, &r[18], MPI_INT, T, 2, win);
    MPI_Fetch_and_op(NULL, &r[19], MPI_INT, T, 3, MPI_NO_OP, win);
    MPI_Put(&one, 1, MPI_INT, T, 4, 1, MPI_INT, win);
    MPI_Fetch_and_op(&uone, &ur[0], MPI_UNSIGNED, T, 5, MPI_SUM, win);
    MPI_Get_accumulate(&one, 1, MPI_INT, &r[20], 1, MPI_INT, T, 6, 1, MPI_INT, MPI_NO_OP, win);
    MPI_Fetch_and_op(&one, &r[21], MPI_INT, T, 7, MPI_REPLACE, win);
    MPI_Get(&r[22], 1, MPI_INT, T, 8, 1, MPI_INT, win);
    MPI_Fetch_and_op(NULL, &r[23], MPI_INT, T, 11, MPI_NO_OP, win);
    MPI_Fetch_and_op(&one, &r[24], MPI_INT, T, 13, MPI_SUM, win);
    MPI_Put(&one, 1, MPI_INT, T, 14, 1, MPI_INT, win);
    MPI_Compare_and_swap(&uone, &uzero, &ur[1], MPI_UNSIGNED, T, 15, win);
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(W);

  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
