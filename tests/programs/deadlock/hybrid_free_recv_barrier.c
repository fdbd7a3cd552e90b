/* The twin of hybrid_deadlock_recv_barrier: the other ranks send before
   the barrier, after a compute phase long enough for rank 0 to be seen
   waiting in MPI_Recv. */
#include <mpi.h>
#include <shmem.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  shmem_init();
  int rank, size, x = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) {
    for (int r = 1; r < size; ++r)
      MPI_Recv(&x, 1, MPI_INT, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    shmem_barrier_all();
  } else {
    sleep(1);
    MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    shmem_barrier_all();
  }
  shmem_finalize(); /* Open MPI's ends MPI too */
  return 0;
}
