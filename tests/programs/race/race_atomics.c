/* Atomicity of MPI_Fetch_and_op, MPI_Compare_and_swap and
 * MPI_Get_accumulate inside MPI_Win_lock_all epochs. A makes its first
 * accesses, everybody meets in a barrier (which completes no RMA
 * operation), then B (and A again) make the second ones.
 *
 *   a  fetch_and_op MPI_SUM against compare_and_swap (its own op);
 *   b  fetch_and_op MPI_NO_OP against put;
 *   c  fetch_and_op MPI_SUM on MPI_INT against MPI_SUM on MPI_UNSIGNED;
 *   d  fetch_and_op MPI_SUM against get;
 *   e  compare_and_swap against put;
 *   f  get_accumulate MPI_NO_OP on MPI_INT against compare_and_swap on
 *      MPI_UNSIGNED (MPI_NO_OP is atomic only with the same type).
 * Unmarked controls: fetch_and_op MPI_SUM against MPI_SUM, compare_and_swap
 * against compare_and_swap, compare_and_swap against fetch_and_op MPI_NO_OP,
 * get_accumulate MPI_REPLACE against get_accumulate MPI_NO_OP and against
 * fetch_and_op MPI_REPLACE, two MPI_NO_OP reads, a two-element
 * get_accumulate MPI_SUM against a fetch_and_op MPI_SUM on its second
 * element, and one fetch_and_op line run twice in a loop.
 *
 * race_free_atomics.c has A flush all its operations before the barrier.
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
    fprintf(stderr, "race_atomics: needs at least 2 ranks\n");
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
    MPI_Fetch_and_op(&one, &r[1], MPI_INT, T, 1, MPI_SUM, win); /* race: a */
    MPI_Compare_and_swap(&one, &zero, &r[2], MPI_INT, T, 2, win);
    MPI_Compare_and_swap(&one, &zero, &r[3], MPI_INT, T, 3, win);
    MPI_Fetch_and_op(NULL, &r[4], MPI_INT, T, 4, MPI_NO_OP, win); /* race: b */
    MPI_Fetch_and_op(&one, &r[5], MPI_INT, T, 5, MPI_SUM, win); /* race: c */
    MPI_Get_accumulate(&one, 1, MPI_INT, &r[6], 1, MPI_INT, T, 6, 1, MPI_INT, MPI_REPLACE, win);
    MPI_Get_accumulate(&one, 1, MPI_INT, &r[7], 1, MPI_INT, T, 7, 1, MPI_INT, MPI_REPLACE, win);
    MPI_Fetch_and_op(&one, &r[8], MPI_INT, T, 8, MPI_SUM, win); /* race: d */
    for (int i = 0; i < 2; ++i) {
      MPI_Fetch_and_op(&one, &r[9 + i], MPI_INT, T, 9, MPI_SUM, win);
    }
    MPI_Fetch_and_op(NULL, &r[11], MPI_INT, T, 11, MPI_NO_OP, win);
    MPI_Get_accumulate(two, 2, MPI_INT, &r[12], 2, MPI_INT, T, 12, 2, MPI_INT, MPI_SUM, win);
    MPI_Compare_and_swap(&one, &zero, &r[14], MPI_INT, T, 14, win); /* race: e */
    MPI_Get_accumulate(&one, 1, MPI_INT, &r[15], 1, MPI_INT, T, 15, 1, MPI_INT, MPI_NO_OP, win); /* race: f */
  }
  /* A's operations are not complete: the barrier orders nothing of them
   * (race_free_atomics.c flushes them first). */
  MPI_Barrier(W);
  /* Second accesses. */
  if (me == B) {
    MPI_Fetch_and_op(&one, &r[16], MPI_INT, T, 0, MPI_SUM, win);
    MPI_Compare_and_swap(&one, &zero, &r[17], MPI_INT, T, 1, win); /* race: a */
    MPI_Compare_and_swap(&zero, &one, &r[18], MPI_INT, T, 2, win);
    MPI_Fetch_and_op(NULL, &r[19], MPI_INT, T, 3, MPI_NO_OP, win);
    MPI_Put(&one, 1, MPI_INT, T, 4, 1, MPI_INT, win); /* race: b */
    MPI_Fetch_and_op(&uone, &ur[0], MPI_UNSIGNED, T, 5, MPI_SUM, win); /* race: c */
    MPI_Get_accumulate(&one, 1, MPI_INT, &r[20], 1, MPI_INT, T, 6, 1, MPI_INT, MPI_NO_OP, win);
    MPI_Fetch_and_op(&one, &r[21], MPI_INT, T, 7, MPI_REPLACE, win);
    MPI_Get(&r[22], 1, MPI_INT, T, 8, 1, MPI_INT, win); /* race: d */
    MPI_Fetch_and_op(NULL, &r[23], MPI_INT, T, 11, MPI_NO_OP, win);
    MPI_Fetch_and_op(&one, &r[24], MPI_INT, T, 13, MPI_SUM, win);
    MPI_Put(&one, 1, MPI_INT, T, 14, 1, MPI_INT, win); /* race: e */
    MPI_Compare_and_swap(&uone, &uzero, &ur[1], MPI_UNSIGNED, T, 15, win); /* race: f */
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(W);

  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
