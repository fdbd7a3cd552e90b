/* The twin of potential_isend_wait.c that needs no buffering: every rank
   posts its receive from the previous rank before it sends to the next one,
   and waits for both at once. Then a synchronous exchange in the same
   order, and a send to itself whose receive is posted first. */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, x = 1, y = 0, z = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  MPI_Request r[2];
  MPI_Irecv(&y, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(&x, 1, MPI_INT, next, 0, MPI_COMM_WORLD, &r[1]);
  MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  MPI_Irecv(&y, 1, MPI_INT, prev, 1, MPI_COMM_WORLD, &r[0]);
  MPI_Ssend(&x, 1, MPI_INT, next, 1, MPI_COMM_WORLD);
  MPI_Wait(&r[0], MPI_STATUS_IGNORE);
  MPI_Irecv(&z, 1, MPI_INT, rank, 2, MPI_COMM_WORLD, &r[0]);
  MPI_Send(&x, 1, MPI_INT, rank, 2, MPI_COMM_WORLD);
  MPI_Wait(&r[0], MPI_STATUS_IGNORE);
  MPI_Finalize();
  return y == 1 && z == 1 ? 0 : 1;
}
