/* Start-up: a program that only initialises and finalises MPI. What counts
 * is the whole run's wall time under vcx-run against mpiexec (bench/run's
 * wall ratio, the start-up target of docs/performance.md); the program
 * itself reports how long MPI_Init took on the slowest rank, which under
 * vcx includes waiting for its tool to listen. */
#include <time.h>

#include "bench_util.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  const double t0 = now_s();
  MPI_Init(&argc, &argv);
  const double init = bench_max_time(now_s() - t0);
  bench_result("startup", "0", "mpi_init", init * 1e3, "ms");
  MPI_Finalize();
  return 0;
}
