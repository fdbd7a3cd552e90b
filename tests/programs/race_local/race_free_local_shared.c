/* Race-free twin of race_local_shared.c: the same direct loads and stores
 * of T's segment of a shared-memory window, and A's MPI_Put and MPI_Get
 * (flushed), with MPI_Win_sync, a barrier and MPI_Win_sync again between
 * A's accesses and T's. The controls are those of race_local_shared.c. No
 * races.
 *
 * All ranks must share one node (the program says so and fails otherwise).
 * Ranks: A = 0, T = 1; other ranks only take part in the epoch and the
 * barriers. */
#include <mpi.h>
#include <stdio.h>

#define SLOTS 8

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) {
    fprintf(stderr, "race_free_local_shared: needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int A = 0, T = 1;
  const MPI_Comm W = MPI_COMM_WORLD;

  /* MPI_Win_allocate_shared over world needs every rank on one node. */
  MPI_Comm node;
  int nn;
  MPI_Comm_split_type(W, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &nn);
  MPI_Comm_free(&node);
  if (nn != n) {
    if (me == 0) fprintf(stderr, "race_free_local_shared: all ranks must share one node\n");
    MPI_Abort(W, 2);
  }

  int *mem, *tm;
  MPI_Win win;
  MPI_Win_allocate_shared(SLOTS * sizeof(int), sizeof(int), MPI_INFO_NULL, W, &mem, &win);
  /* T's segment, as every rank sees it. */
  MPI_Aint tbytes;
  int tunit;
  MPI_Win_shared_query(win, T, &tbytes, &tunit, &tm);

  int one = 1, got = 0, v = 0;
  MPI_Win_lock_all(0, win);
  /* A's accesses to T's segment. */
  if (me == A) {
    tm[0] = 5;
    tm[1] = 5;
    v = tm[2];
    v = tm[3];
    tm[4] = 5;
    mem[0] = 5;
    MPI_Put(&one, 1, MPI_INT, T, 6, 1, MPI_INT, win);
    MPI_Get(&got, 1, MPI_INT, T, 7, 1, MPI_INT, win);
    MPI_Win_flush(T, win);
  }
  /* The synchronisation race_local_shared.c lacks. */
  MPI_Win_sync(win);
  MPI_Barrier(W);
  MPI_Win_sync(win);
  /* T's accesses. */
  if (me == T) {
    mem[0] = 6;
    v = mem[1];
    mem[2] = 6;
    v = mem[3];
    mem[5] = 6;
    mem[6] = 6;
    mem[7] = 6;
  }
  MPI_Win_sync(win);
  MPI_Barrier(W);
  MPI_Win_sync(win);

  /* Controls: ordered by the barrier. */
  if (me == T) {
    v = mem[0];
    mem[1] = 7;
  }
  if (me == A) {
    v = tm[2];
    v = tm[6];
  }
  MPI_Win_unlock_all(win);

  (void)v;
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
