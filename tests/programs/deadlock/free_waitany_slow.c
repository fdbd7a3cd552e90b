/* No deadlock, only slow ranks: rank 0 waits in MPI_Waitany for either of
   two messages of rank 1, which computes (sleeps) for two seconds before it
   sends the second; then rank 0 waits in MPI_Recv for rank 1, which sleeps
   again before it sends. The first request is cancelled (MPI 4.0, 3.8.4). */
#include <mpi.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, a = 0, b = 0, c = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Request r[2];
    int index = -1;
    MPI_Irecv(&a, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(&b, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, &r[1]);
    MPI_Waitany(2, r, &index, MPI_STATUS_IGNORE);
    MPI_Cancel(&r[0]);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    MPI_Recv(&c, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (index != 1 || b != 2 || c != 3) return 1;
  } else if (rank == 1) {
    b = 2;
    c = 3;
    sleep(2);
    MPI_Send(&b, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
    sleep(2);
    MPI_Send(&c, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
