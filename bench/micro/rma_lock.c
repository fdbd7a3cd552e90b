/* Passive-target RMA: every rank locks its right neighbour's window
 * exclusively, puts 8 bytes and unlocks, over and over; reports the slowest
 * rank's time per lock-put-unlock. With one rank the window is its own.
 * Under vcx an exclusive lock waits for its grant by the target's tool. */
#include "bench_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  bench_init(argc, argv);
  const int rank = bench_rank(), size = bench_size();
  const int target = (rank + 1) % size;
  double* base;
  MPI_Win win;
  MPI_Win_allocate(8 * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  for (int i = 0; i < 8; ++i) base[i] = 0.0;
  MPI_Barrier(MPI_COMM_WORLD);
  const long iters = bench_iters(500, 5);
  double value = rank;
  double t0 = 0.0;
  for (long i = -(iters / 10 + 1); i < iters; ++i) {
    if (i == 0) t0 = MPI_Wtime();
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
    MPI_Put(&value, 1, MPI_DOUBLE, target, rank % 8, 1, MPI_DOUBLE, win);
    MPI_Win_unlock(target, win);
  }
  const double t = bench_max_time(MPI_Wtime() - t0);
  MPI_Barrier(MPI_COMM_WORLD);
  bench_result("rma_lock", "8", "time", t / iters * 1e6, "us");
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
