/* Rank 0 waits for a message of rank 1, which finishes without sending it:
   nothing can send it any more. */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, x = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* deadlock: 0 */
  MPI_Finalize();
  return 0;
}
