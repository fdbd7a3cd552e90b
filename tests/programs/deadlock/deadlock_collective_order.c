/* Rank 0 calls MPI_Barrier then MPI_Allreduce on MPI_COMM_WORLD, the other
   ranks the other way round. MPI 4.0, 6.14: all members of a communicator
   must call its collectives in the same order; MPICH never completes
   them at 3 ranks: the others stay in MPI_Allreduce, or MPICH completes it
   with rank 0's barrier messages and they wait in MPI_Barrier for rank 0,
   which waits in a barrier its peers never call. */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, x = 1, y = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Barrier(MPI_COMM_WORLD); /* deadlock: 0 */ /* mismatch: 0 */
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  } else {
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* deadlock: rest */ /* mismatch: rest */
    MPI_Barrier(MPI_COMM_WORLD); /* deadlock: rest */
  }
  MPI_Finalize();
  return 0;
}
