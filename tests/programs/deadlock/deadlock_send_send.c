/* Both ranks 0 and 1 send each other 4 MiB before they receive: MPI may not
   buffer a standard-mode send (MPI 4.0, 3.4), and MPICH does not buffer one
   of this size, so each send waits for a receive the other never posts. */
#include <mpi.h>
#include <stdlib.h>

enum { kCount = 1 << 20 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int* out = calloc(kCount, sizeof(int));
  int* in = calloc(kCount, sizeof(int));
  if (rank < 2) {
    const int peer = 1 - rank;
    MPI_Send(out, kCount, MPI_INT, peer, 0, MPI_COMM_WORLD); /* deadlock: 0 1 */
    MPI_Recv(in, kCount, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  free(out);
  free(in);
  MPI_Finalize();
  return 0;
}
