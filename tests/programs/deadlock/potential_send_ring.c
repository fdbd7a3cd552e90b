/* Every rank sends to the next one, then receives from the previous one.
   Buffered, the ring completes; without buffering every MPI_Send waits for
   the next rank's MPI_Recv, which comes after that rank's own MPI_Send. */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, x = 1, y = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  MPI_Send(&x, 1, MPI_INT, next, 3, MPI_COMM_WORLD); /* potential: all */
  MPI_Recv(&y, 1, MPI_INT, prev, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Finalize();
  return y == 1 ? 0 : 1;
}
