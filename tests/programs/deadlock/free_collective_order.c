/* The twin of deadlock_collective_order.c: every rank calls MPI_Barrier,
   then MPI_Allreduce; rank 0 first computes for a second. */
#include <mpi.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, x = 1, y = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) sleep(1);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return y == size ? 0 : 1;
}
