/* RMA fence transpose: an N x N matrix of doubles, distributed by blocks of
 * rows (b = N / size rows per rank), is transposed into a second matrix
 * with MPI_Put between two MPI_Win_fence calls: rank r puts the transpose
 * of its (r, c) block into block (c, r) of rank c. Repeated; reports the
 * time of the repetitions and checks the result. */
#include "../micro/bench_util.h"

enum { kBlock = 48 }; /* rows (and columns) of one block */

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  bench_init(argc, argv);
  const int rank = bench_rank(), size = bench_size();
  const int n = kBlock * size;
  const size_t local = (size_t)kBlock * (size_t)n;
  double* a = bench_alloc(local * sizeof(double));
  double* tb = bench_alloc((size_t)kBlock * kBlock * sizeof(double));
  for (int i = 0; i < kBlock; ++i)
    for (int j = 0; j < n; ++j) a[(size_t)i * n + j] = (double)(rank * kBlock + i) * n + j;
  double* t;
  MPI_Win win;
  MPI_Win_allocate((MPI_Aint)(local * sizeof(double)), sizeof(double), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &t, &win);
  /* Block (r, c) transposed lands at rows of rank c, columns r*b..r*b+b-1:
   * one vector type per target row block. */
  MPI_Datatype target_block;
  MPI_Type_vector(kBlock, kBlock, n, MPI_DOUBLE, &target_block);
  MPI_Type_commit(&target_block);

  const long reps = bench_iters(200, 3);
  double t0 = 0.0;
  MPI_Win_fence(0, win);
  for (long r = -(reps / 10 + 1); r < reps; ++r) {
    if (r == 0) t0 = MPI_Wtime();
    for (int c = 0; c < size; ++c) {
      /* tb = transpose of block (rank, c) */
      for (int i = 0; i < kBlock; ++i)
        for (int j = 0; j < kBlock; ++j)
          tb[(size_t)j * kBlock + i] = a[(size_t)i * n + (size_t)c * kBlock + j];
      MPI_Put(tb, kBlock * kBlock, MPI_DOUBLE, c, (MPI_Aint)rank * kBlock, 1, target_block, win);
    }
    MPI_Win_fence(0, win);
  }
  const double elapsed = bench_max_time(MPI_Wtime() - t0);
  /* t[i][j] on rank r is the global element (j, r*b + i). */
  for (int i = 0; i < kBlock; ++i)
    for (int j = 0; j < n; ++j) {
      const double expect = (double)j * n + (rank * kBlock + i);
      if (t[(size_t)i * n + j] != expect) bench_fail("the transposed matrix is wrong");
    }
  bench_result("rma_transpose", "0", "time", elapsed, "s");
  MPI_Type_free(&target_block);
  MPI_Win_free(&win);
  free(a);
  free(tb);
  MPI_Finalize();
  return 0;
}
