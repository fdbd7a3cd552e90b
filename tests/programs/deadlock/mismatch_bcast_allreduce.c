/* Rank 0 calls MPI_Bcast then MPI_Allreduce on MPI_COMM_WORLD, rank 1 the
   other way round. MPI 4.0, 6.14: every member calls the same collectives
   in the same order. At 2 ranks MPICH's blocking collectives complete this
   pair all the same, so the run ends; its first collective is a mismatch.
   (Blocking calls that yield, as on shared cores, make MPICH hang on it:
   the case keeps MPI's own blocking calls.) */
/* vcx-run-options: --app-yield off */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, x = 1, y = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD); /* mismatch: 0 */
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  } else {
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* mismatch: rest */
    MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
  }
  printf("rank %d: %d\n", rank, y);
  MPI_Finalize();
  return 0;
}
