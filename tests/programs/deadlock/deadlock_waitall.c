/* Rank 0 waits for two messages of rank 1 (MPI_Waitall returns once all
   its requests completed); rank 1 first waits for a message of rank 0,
   which rank 0 sends only after its MPI_Waitall. Other ranks take no part. */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, a = 0, b = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Request r[2];
    MPI_Irecv(&a, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(&b, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE); /* deadlock: 0 */
    MPI_Send(&a, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Recv(&a, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* deadlock: 1 */
    MPI_Send(&a, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    MPI_Send(&b, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
