/* Three rounds of a correct ring exchange, then every rank first receives
   from the next one: the deadlock comes after calls that completed, as in
   a real run (the trace view draws it after each rank's last call). */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, out = 0, in = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  for (int round = 0; round < 3; ++round) {
    out = rank + round;
    MPI_Sendrecv(&out, 1, MPI_INT, next, 0, &in, 1, MPI_INT, prev, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  }
  MPI_Recv(&in, 1, MPI_INT, next, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* deadlock: all */
  MPI_Send(&out, 1, MPI_INT, prev, 1, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
