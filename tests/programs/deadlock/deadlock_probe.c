/* Every rank probes for a message from the next rank before sending its
   own: MPI_Probe waits until a matching message can be received (MPI 4.0,
   3.8.1), and none is ever sent. */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, x = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  MPI_Status st;
  MPI_Probe(next, 0, MPI_COMM_WORLD, &st); /* deadlock: all */
  MPI_Recv(&x, 1, MPI_INT, next, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Send(&rank, 1, MPI_INT, prev, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
