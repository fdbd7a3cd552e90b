/* Rank 0 puts to rank 1 and closes the epoch with a fence before it sends
   the others a message they wait for before their fence: the fence waits
   for them, they wait for rank 0 (MPI 4.0, 12.5.1: the fence is collective
   over the window's group). */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  static int buf = 0;
  int rank, size, one = 1, x = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Win win;
  MPI_Win_create(&buf, sizeof buf, sizeof buf, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_fence(0, win);
  if (rank == 0) {
    MPI_Put(&one, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
    MPI_Win_fence(0, win); /* deadlock: 0 */
    for (int r = 1; r < size; ++r) MPI_Send(&x, 1, MPI_INT, r, 0, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* deadlock: rest */
    MPI_Win_fence(0, win);
  }
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
