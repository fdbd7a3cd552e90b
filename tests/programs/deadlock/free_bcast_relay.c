/* At 3 ranks: rank 1 waits in a broadcast from rank 0, which is still
   computing, and rank 2 waits for a message rank 1 sends after the
   broadcast. Rank 2 is not in the broadcast yet, but rank 1 needs only the
   root's data (MPI 4.0, 6.4: which ranks relay it is the library's
   choice): nobody is stuck while rank 0 computes. */
#include <mpi.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, x = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) sleep(2);
  if (rank == 2) MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 1 && size > 2) MPI_Send(&x, 1, MPI_INT, 2, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
