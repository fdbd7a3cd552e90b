/* A wildcard receive that usually takes one message and could take
 * another: rank 0 sends before a barrier, rank 2 after it, and rank 1,
 * which posted MPI_Irecv(MPI_ANY_SOURCE) before the barrier, assumes it
 * gets rank 0's message first. MPI does not promise that: rank 2's message
 * may arrive before rank 0's does (the "crooked barrier" of DAMPI's paper,
 * "A Scalable and Distributed Dynamic Formal Verifier for MPI Programs").
 *
 *   vcx-run --analysis matches -n 3 ./wildcard
 *
 * reports that the receive at the MPI_Irecv line could also have matched
 * rank 2. Run with 3 ranks. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 3) {
    if (rank == 0) fprintf(stderr, "wildcard: run with 3 ranks\n");
    MPI_Finalize();
    return 1;
  }
  int value = rank, first = -1, second = -1;
  if (rank == 0) {
    MPI_Request r;
    MPI_Isend(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &r);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    MPI_Request r;
    MPI_Irecv(&first, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &r);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Recv(&second, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    /* The bug: the program relies on the order of the two messages. */
    printf("rank 1: %s (got %d, then %d)\n", first == 0 ? "ok" : "unexpected order", first,
           second);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Send(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return first == 2 ? 1 : 0;
}
