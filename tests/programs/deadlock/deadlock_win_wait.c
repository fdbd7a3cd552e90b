/* Rank 1 exposes its window to rank 0 and waits for rank 0 to complete the
   access epoch; rank 0 first waits for a message rank 1 sends only after
   its MPI_Win_wait (MPI 4.0, 12.5.2). Other ranks take no part. */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  static int buf = 0;
  int rank, one = 1, x = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_create(&buf, sizeof buf, sizeof buf, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Group world, peer;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  const int other = rank == 0 ? 1 : 0;
  MPI_Group_incl(world, 1, &other, &peer);
  if (rank == 1) {
    MPI_Win_post(peer, 0, win);
    MPI_Win_wait(win); /* deadlock: 1 */
    MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  } else if (rank == 0) {
    MPI_Win_start(peer, 0, win);
    MPI_Put(&one, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
    MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* deadlock: 0 */
    MPI_Win_complete(win);
  }
  MPI_Group_free(&peer);
  MPI_Group_free(&world);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
