/* Rank 0 locks rank 1's window exclusively and enters a barrier the
   others reach only once they have the same lock: they wait for rank 0 to
   unlock, rank 0 waits for them (MPI 4.0, 12.5.3: MPI_Win_lock may wait
   until the lock is granted; vcx grants it in the order the tools decide,
   as an implementation that acquires at once would). */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  static int buf = 0;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_create(&buf, sizeof buf, sizeof buf, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  if (rank == 0) MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank != 0) MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win); /* deadlock: rest */
  MPI_Barrier(MPI_COMM_WORLD); /* deadlock: 0 */
  MPI_Win_unlock(1, win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
