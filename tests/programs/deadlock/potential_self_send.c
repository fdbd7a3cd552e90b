/* Rank 0 sends a message to itself before it posts the receive for it. A
   buffered send returns; without buffering the MPI_Send waits for a receive
   only rank 0 itself could post, after the send, and the other ranks wait
   for it in the barrier. */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, x = 7, y = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Send(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD); /* potential: 0 */
    MPI_Recv(&y, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD); /* potential: rest */
  MPI_Finalize();
  return 0;
}
