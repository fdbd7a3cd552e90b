/* The twins of deadlock_win_fence, deadlock_win_wait and
   deadlock_win_complete, in the right order, with slow ranks: the others
   wait in the fence, in MPI_Win_complete and in MPI_Win_wait while they
   compute. Three rounds, so that epochs and fences are counted on. */
#include <mpi.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  static int buf = 0;
  int rank, size, one = 1, x = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Win win;
  MPI_Win_create(&buf, sizeof buf, sizeof buf, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Group world, peer;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  const int other = rank == 0 ? 1 : 0;
  MPI_Group_incl(world, 1, &other, &peer);
  for (int round = 0; round < 3; ++round) {
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    if (rank == 0) {
      MPI_Put(&one, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
      for (int r = 1; r < size; ++r) MPI_Send(&x, 1, MPI_INT, r, 0, MPI_COMM_WORLD);
    } else {
      MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (round == 0) sleep(1);
    }
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    if (rank == 0) {
      MPI_Win_start(peer, 0, win);
      MPI_Put(&one, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
      MPI_Win_complete(win);
      MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    } else if (rank == 1) {
      if (round == 1) sleep(1);
      MPI_Win_post(peer, 0, win);
      MPI_Win_wait(win);
      MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  MPI_Group_free(&peer);
  MPI_Group_free(&world);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
