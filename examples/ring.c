/* A small MPI program for the vcx demo: a token travels around a ring, then a
 * master hands out work and collects results from whichever worker is first
 * (MPI_ANY_SOURCE), then everybody agrees on a checksum. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  /* Token ring: rank 0 starts, every rank adds its rank and passes it on. */
  int token = 0;
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  if (rank == 0) {
    MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
    MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    token += rank;
    MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
  }

  /* Master/worker: results come back in whatever order the workers finish. */
  int sum = 0;
  if (rank == 0) {
    for (int w = 1; w < size; ++w) {
      int item = 10 * w;
      MPI_Send(&item, 1, MPI_INT, w, 1, MPI_COMM_WORLD);
    }
    for (int w = 1; w < size; ++w) {
      int result;
      MPI_Recv(&result, 1, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      sum += result;
    }
  } else {
    int item;
    MPI_Recv(&item, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    item += 1;
    MPI_Send(&item, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
  }

  int checksum = 0, local = token + sum;
  MPI_Allreduce(&local, &checksum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("ring token %d, work sum %d, checksum %d\n", token, sum, checksum);
  MPI_Finalize();
  return 0;
}
