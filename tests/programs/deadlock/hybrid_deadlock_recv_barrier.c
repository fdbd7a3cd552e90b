/* MPI+OpenSHMEM: rank 0 waits in MPI_Recv for rank 1, which first enters a
   shmem_barrier_all that rank 0 reaches only after its receive: a rank
   blocked in one model waits for a rank blocked in the other. */
#include <mpi.h>
#include <shmem.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  shmem_init();
  int rank, size, x = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) {
    for (int r = 1; r < size; ++r)
      MPI_Recv(&x, 1, MPI_INT, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* deadlock: 0 */
    shmem_barrier_all();
  } else {
    shmem_barrier_all(); /* deadlock: rest */
    MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  shmem_finalize(); /* Open MPI's ends MPI too */
  return 0;
}
