/* MPI_Barrier: time per barrier, the slowest rank's. */
#include "bench_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  bench_init(argc, argv);
  const long iters = bench_iters(1000, 5);
  for (long i = 0; i < iters / 10 + 1; ++i) MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (long i = 0; i < iters; ++i) MPI_Barrier(MPI_COMM_WORLD);
  const double t = bench_max_time(MPI_Wtime() - t0);
  bench_result("barrier", "0", "time", t / iters * 1e6, "us");
  MPI_Finalize();
  return 0;
}
