/* Collectives between sends and receives that need no buffering: rank 0
   sends after the barrier that rank 1 receives after; a broadcast from
   rank 0 whose value rank 1 then sends back to a receive rank 0 posted
   before the broadcast; an allreduce of what every rank received. */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, x = 1, y = 0, v = 0, sum = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  if (rank == 1) MPI_Recv(&y, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Request r = MPI_REQUEST_NULL;
  if (rank == 0) MPI_Irecv(&y, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &r);
  if (rank == 0) v = 5;
  MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 1) MPI_Send(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  MPI_Allreduce(&y, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return sum == 6 ? 0 : 1;
}
