/* The twin of potential_send_send.c that needs no buffering: even ranks
   send first and then receive, odd ranks receive first, so every MPI_Send
   finds its receive posted. Ranks pair up (0-1, 2-3); a last unpaired rank
   only joins the barrier. */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, x = 1, y = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int peer = rank ^ 1;
  if (peer < size) {
    for (int round = 0; round < 3; ++round) {
      if (rank % 2 == 0) {
        MPI_Send(&x, 1, MPI_INT, peer, round, MPI_COMM_WORLD);
        MPI_Recv(&y, 1, MPI_INT, peer, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(&y, 1, MPI_INT, peer, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&x, 1, MPI_INT, peer, round, MPI_COMM_WORLD);
      }
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
