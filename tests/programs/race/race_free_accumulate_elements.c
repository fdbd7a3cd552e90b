/* Race-free twin of race_accumulate_elements.c: the same accesses, with a
 * fence between A's and B's. No races. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) {
    fprintf(stderr, "race_free_accumulate_elements: needs at least 2 ranks\n");
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
    MPI_Accumulate(four, 4, MPI_INT, T, 0, 4, MPI_INT, MPI_SUM, win);
    MPI_Get_accumulate(&one, 1, MPI_INT, &r[0], 1, MPI_INT, T, 20, 1, MPI_INT, MPI_SUM, win);
    MPI_Compare_and_swap(&one, &zero, &r[1], MPI_INT, T, 28, win);
    MPI_Accumulate(shorts, 2, MPI_SHORT, T, 36, 2, MPI_SHORT, MPI_SUM, win);
    MPI_Fetch_and_op(NULL, &r[2], MPI_INT, T, 41, MPI_NO_OP, win);
    MPI_Accumulate(four, 4, MPI_INT, T, 48, 4, MPI_INT, MPI_SUM, win);
    MPI_Fetch_and_op(NULL, &r[3], MPI_INT, T, 64, MPI_NO_OP, win);
    MPI_Accumulate(four, 2, MPI_INT, T, 72, 1, gapped, MPI_SUM, win);
  }
  MPI_Win_fence(0, win);
  if (me == B) {
    MPI_Accumulate(four, 4, MPI_INT, T, 1, 4, MPI_INT, MPI_SUM, win);
    MPI_Fetch_and_op(&one, &r[4], MPI_INT, T, 22, MPI_SUM, win);
    MPI_Compare_and_swap(&one, &zero, &r[5], MPI_INT, T, 30, win);
    MPI_Accumulate(&one, 1, MPI_INT, T, 36, 1, MPI_INT, MPI_SUM, win);
    MPI_Accumulate(&one, 1, MPI_INT, T, 40, 1, MPI_INT, MPI_SUM, win);
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
