/* Ranks 0 and 1 each start a send to the other and wait for it before they
   post their receive. The MPI_Wait returns only because MPICH buffered the
   message: without buffering each waits for a receive the other posts only
   after its own MPI_Wait. Rank 2, if there, computes on its own. */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, x = 1, y = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank < 2) {
    const int peer = 1 - rank;
    MPI_Request r;
    MPI_Isend(&x, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE); /* potential: 0 1 */
    MPI_Recv(&y, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
