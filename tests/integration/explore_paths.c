/* Two crooked barriers in a row, for vcx-run --explore (3 ranks).
 *
 * Phase 1: rank 2 posts MPI_Irecv(MPI_ANY_SOURCE, tag 1) before a barrier;
 * rank 0 sends to it before the barrier, rank 1 after it, so rank 2's
 * wildcard receive #0 usually takes rank 0's message and could take rank
 * 1's; its #1 (a blocking MPI_Recv) takes the other one. Rank 2 then tells
 * rank 1 which came first (tag 2), so both receives happened before
 * everything rank 1 does next.
 *
 * Phase 2: the same between rank 1 (receiving, tag 3), rank 0 (before the
 * barrier) and rank 2 (after it). When rank 1's receive #0 takes rank 2's
 * message, rank 1 waits for a message nobody sends: the program hangs.
 *
 * Every rank prints what it saw; the output changes when rank 2's receive
 * #0 takes rank 1's message. */
#include <mpi.h>
#include <stdio.h>

static void crooked_barrier(int receiver, int early, int tag, int *first, int *second) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int value = rank;
  MPI_Request r;
  MPI_Status st;
  if (rank == receiver) {
    MPI_Irecv(first, 1, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &r);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Wait(&r, &st);
    MPI_Recv(second, 1, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st);
  } else if (rank == early) {
    MPI_Isend(&value, 1, MPI_INT, receiver, tag, MPI_COMM_WORLD, &r);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Send(&value, 1, MPI_INT, receiver, tag, MPI_COMM_WORLD);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 3) {
    if (rank == 0) fprintf(stderr, "explore_paths: run with 3 ranks\n");
    MPI_Finalize();
    return 2;
  }
  int first = -1, second = -1, told = -1;
  crooked_barrier(2, 0, 1, &first, &second);
  if (rank == 2) {
    printf("phase 1: rank 2 got rank %d first\n", first);
    MPI_Send(&first, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Recv(&told, 1, MPI_INT, 2, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  crooked_barrier(1, 0, 3, &first, &second);
  if (rank == 1) {
    if (first == 2) {
      /* The bug: a reply that only rank 0 would send. */
      int never;
      MPI_Recv(&never, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    printf("phase 2: rank 1 got rank %d first (rank 2 had rank %d first)\n", first, told);
  }
  MPI_Finalize();
  return 0;
}
