/* Ranks 0 and 1 send each other one int before they receive. MPICH buffers
   a message this small, so the run completes: no deadlock happens (MPI does
   not promise the buffering; that is a potential deadlock, not a real one). */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, x = 1, y = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank < 2) {
    const int peer = 1 - rank;
    MPI_Send(&x, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
    MPI_Recv(&y, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
