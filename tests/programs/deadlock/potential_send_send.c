/* Ranks 0 and 1 send each other one int before they receive. MPICH buffers
   a message this small, so the run completes; without buffering (MPI does
   not promise it, MPI 4.0 3.5) each MPI_Send waits for a receive the other
   rank posts only after its own MPI_Send: a potential deadlock. */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, x = 1, y = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank < 2) {
    const int peer = 1 - rank;
    MPI_Send(&x, 1, MPI_INT, peer, 0, MPI_COMM_WORLD); /* potential: 0 1 */
    MPI_Recv(&y, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
