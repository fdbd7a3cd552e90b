/* The twin of deadlock_recv_ring.c: each rank sends and receives in one
   MPI_Sendrecv, so every receive has its message. */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, x = 1, y = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  MPI_Sendrecv(&x, 1, MPI_INT, prev, 0, &y, 1, MPI_INT, next, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  MPI_Finalize();
  return y == 1 ? 0 : 1;
}
