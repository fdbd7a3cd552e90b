/* Collectives for a given number of seconds (rank 0's clock decides), for
 * tests that need a run longer than vcx-run's first progress line.
 *
 *   timed_loop SECONDS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const double seconds = argc > 1 ? atof(argv[1]) : 5.0;
  const double start = MPI_Wtime();
  long rounds = 0;
  for (;;) {
    int value = rank, stop = MPI_Wtime() - start >= seconds;
    MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
    ++rounds;
    if (stop) break;
  }
  if (rank == 0) printf("done\n");
  MPI_Finalize();
  return 0;
}
