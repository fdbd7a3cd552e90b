/* Every rank sends its boundary row to the next rank with MPI_Send, then
 * receives the previous rank's row with MPI_Recv: a pattern that works
 * only while MPI buffers the sends.
 *
 *   vcx-run -n 3 ./halo_ring          rows of 16 doubles: MPICH buffers
 *                                     them, the run completes, and vcx
 *                                     reports a potential deadlock
 *   vcx-run -n 3 ./halo_ring 100000   rows of 800 kB: MPI_Send waits for
 *                                     the receive, every rank waits, and
 *                                     vcx reports the deadlock and ends
 *                                     the run (exit status 65)
 *
 * The fix is MPI_Sendrecv, or MPI_Irecv before the send. The mark below
 * says where each rank would wait (tests/integration/deadlock_case.py). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = argc > 1 ? atoi(argv[1]) : 16;
  double *mine = calloc((size_t)n, sizeof *mine), *theirs = calloc((size_t)n, sizeof *theirs);
  for (int i = 0; i < n; ++i) mine[i] = rank;
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  MPI_Send(mine, n, MPI_DOUBLE, next, 0, MPI_COMM_WORLD); /* potential: all */
  MPI_Recv(theirs, n, MPI_DOUBLE, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (rank == 0) printf("rank 0 got the row of rank %d\n", (int)theirs[0]);
  free(mine);
  free(theirs);
  MPI_Finalize();
  return 0;
}
