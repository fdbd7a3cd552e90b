/* Deadlock detection latency: every rank computes for a while (rank r for
 * `--delay` seconds times r+1, so that the ranks block one after another),
 * writes the CLOCK_REALTIME at which it blocks to stdout, and then waits
 * in MPI_Recv from the next rank, which never sends. Under vcx-run the
 * deadlock analysis reports the ring and ends the run;
 * bench/deadlock_latency times its report against the last rank's line. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double realtime_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, x = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double delay = 0.2;
  for (int i = 1; i + 1 < argc; ++i)
    if (strcmp(argv[i], "--delay") == 0) delay = atof(argv[i + 1]);
  /* Compute (not sleep): the rank is running, as a real code would be. */
  const double until = realtime_s() + delay * (rank + 1);
  volatile double sink = 0;
  while (realtime_s() < until)
    for (int k = 0; k < 1000; ++k) sink += k * 0.5;
  printf("BLOCKING,%d,%.6f\n", rank, realtime_s());
  fflush(stdout);
  MPI_Recv(&x, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Finalize();
  return 0;
}
