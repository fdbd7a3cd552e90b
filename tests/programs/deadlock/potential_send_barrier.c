/* Rank 0 sends to rank 1 before a barrier that rank 1 enters before it
   receives. Buffered, the send returns and the run completes; without
   buffering rank 0's MPI_Send waits for the receive rank 1 posts only
   after the barrier, and the barrier waits for rank 0. Every other rank
   waits in the barrier for rank 0 too. */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, x = 1, y = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD); /* potential: 0 */
  MPI_Barrier(MPI_COMM_WORLD);                                   /* potential: rest */
  if (rank == 1) MPI_Recv(&y, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Finalize();
  return rank == 1 && y != 1 ? 1 : 0;
}
