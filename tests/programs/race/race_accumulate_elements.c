/* Atomicity of the accumulate family holds per element: two accumulates
 * with the same op and the same predefined datatype are atomic with each
 * other only on the elements they share, element for element (MPI 4.0,
 * section 12.7.1). Bytes they share at different element boundaries, or
 * under another predefined datatype, are not updated atomically: a race.
 * The window has displacement unit 1, so displacements are bytes. In one
 * fence epoch:
 *
 *   a  A's MPI_Accumulate of 4 MPI_INT at byte 0 against B's at byte 1;
 *   b  A's MPI_Get_accumulate (MPI_SUM, 1 MPI_INT) at byte 20 against B's
 *      MPI_Fetch_and_op (MPI_SUM, MPI_INT) at byte 22;
 *   c  A's MPI_Compare_and_swap of an MPI_INT at byte 28 against B's at
 *      byte 30;
 *   d  A's MPI_Accumulate of 2 MPI_SHORT at byte 36 against B's of 1
 *      MPI_INT at byte 36 (other predefined datatype, the same bytes);
 *   e  A's MPI_Fetch_and_op with MPI_NO_OP (an atomic read of an MPI_INT)
 *      at byte 41 against B's MPI_Accumulate (MPI_SUM, MPI_INT) at 40.
 * Unmarked controls: A's 4 MPI_INT at byte 48 against B's 2 MPI_INT at
 * byte 52 (overlapping, on the same elements); MPI_NO_OP against MPI_SUM
 * on the MPI_INT at byte 64; a vector of 2 MPI_INT with a gap of one
 * (bytes 72..75 and 80..83) against 3 MPI_INT at byte 76 (they share the
 * element at 80).
 *
 * race_free_accumulate_elements.c has a fence between A's and B's
 * accesses. Ranks: A = 0 and B = 2 (1 with two ranks) access the window of
 * T = 1; other ranks only call the fences. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) {
    fprintf(stderr, "race_accumulate_elements: needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  static int mem[32];
  MPI_Win win;
  MPI_Win_create(mem, sizeof mem, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Datatype gapped;
  MPI_Type_vector(2, 1, 2, MPI_INT, &gapped);
  MPI_Type_commit(&gapped);

  int four[4] = {1, 2, 3, 4}, one = 1, zero = 0, r[8];
  short shorts[2] = {1, 1};

  MPI_Win_fence(0, win);
  if (me == A) {
    MPI_Accumulate(four, 4, MPI_INT, T, 0, 4, MPI_INT, MPI_SUM, win); /* race: a */
    MPI_Get_accumulate(&one, 1, MPI_INT, &r[0], 1, MPI_INT, T, 20, 1, MPI_INT, MPI_SUM, win); /* race: b */
    MPI_Compare_and_swap(&one, &zero, &r[1], MPI_INT, T, 28, win); /* race: c */
    MPI_Accumulate(shorts, 2, MPI_SHORT, T, 36, 2, MPI_SHORT, MPI_SUM, win); /* race: d */
    MPI_Fetch_and_op(NULL, &r[2], MPI_INT, T, 41, MPI_NO_OP, win); /* race: e */
    MPI_Accumulate(four, 4, MPI_INT, T, 48, 4, MPI_INT, MPI_SUM, win);
    MPI_Fetch_and_op(NULL, &r[3], MPI_INT, T, 64, MPI_NO_OP, win);
    MPI_Accumulate(four, 2, MPI_INT, T, 72, 1, gapped, MPI_SUM, win);
  }
  /* Second accesses (race_free_accumulate_elements.c has a fence here). */
  if (me == B) {
    MPI_Accumulate(four, 4, MPI_INT, T, 1, 4, MPI_INT, MPI_SUM, win); /* race: a */
    MPI_Fetch_and_op(&one, &r[4], MPI_INT, T, 22, MPI_SUM, win); /* race: b */
    MPI_Compare_and_swap(&one, &zero, &r[5], MPI_INT, T, 30, win); /* race: c */
    MPI_Accumulate(&one, 1, MPI_INT, T, 36, 1, MPI_INT, MPI_SUM, win); /* race: d */
    MPI_Accumulate(&one, 1, MPI_INT, T, 40, 1, MPI_INT, MPI_SUM, win); /* race: e */
    MPI_Accumulate(four, 2, MPI_INT, T, 52, 2, MPI_INT, MPI_SUM, win);
    MPI_Fetch_and_op(&one, &r[6], MPI_INT, T, 64, MPI_SUM, win);
    MPI_Accumulate(four, 3, MPI_INT, T, 76, 3, MPI_INT, MPI_SUM, win);
  }
  MPI_Win_fence(0, win);

  MPI_Type_free(&gapped);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
