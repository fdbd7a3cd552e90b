/* The twin of deadlock_probe.c: every rank sends to the previous rank
   first, then probes for the next rank's message (MPI_ANY_TAG) and
   receives it. Rank 0 sleeps first, so the others wait in MPI_Probe for a
   while: a slow rank is no deadlock. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, x = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  if (rank == 0) sleep(1);
  MPI_Request r;
  MPI_Isend(&rank, 1, MPI_INT, prev, 3, MPI_COMM_WORLD, &r);
  MPI_Status st;
  MPI_Probe(next, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
  MPI_Recv(&x, 1, MPI_INT, next, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  printf("rank %d got %d\n", rank, x);
  MPI_Finalize();
  return x == next ? 0 : 1;
}
