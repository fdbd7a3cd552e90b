/* The twin of deadlock_win_lock and deadlock_win_lock_all: rank 0 holds
   rank 1's lock through a long compute phase while the others wait for it
   in MPI_Win_lock, then in MPI_Win_lock_all, and unlocks; then every rank
   holds it shared across a barrier (shared locks do not exclude each
   other). */
#include <mpi.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  static int buf = 0;
  int rank, one = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_create(&buf, sizeof buf, sizeof buf, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  if (rank == 0) MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    sleep(2);
    MPI_Accumulate(&one, 1, MPI_INT, 1, 0, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_unlock(1, win);
  } else {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    MPI_Accumulate(&one, 1, MPI_INT, 1, 0, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_unlock(1, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    sleep(2);
    MPI_Win_unlock(1, win);
  } else {
    MPI_Win_lock_all(0, win);
    MPI_Win_unlock_all(win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank != 0) MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_unlock(1, win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
