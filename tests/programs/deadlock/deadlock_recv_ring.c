/* Every rank first receives from the next one, which does the same: no
   message is ever sent (MPI 4.0, 3.4: a blocking receive returns only once
   a matching message arrived). */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, x = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int next = (rank + 1) % size;
  MPI_Recv(&x, 1, MPI_INT, next, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* deadlock: all */
  MPI_Send(&x, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
