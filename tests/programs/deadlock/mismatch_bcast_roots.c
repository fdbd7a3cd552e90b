/* Every rank calls MPI_Bcast on MPI_COMM_WORLD with itself as the root.
   MPI 4.0, 6.4: the root must be the same on every member. MPICH
   completes it (each root's message stays unreceived); the members' calls
   differ, which is a collective mismatch, and no deadlock. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, x;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  x = rank;
  MPI_Bcast(&x, 1, MPI_INT, rank, MPI_COMM_WORLD); /* mismatch: all */
  printf("rank %d has %d\n", rank, x);
  MPI_Finalize();
  return 0;
}
