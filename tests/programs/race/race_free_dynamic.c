/* Race-free twin of race_dynamic.c: the same accesses to the attached
 * regions of a dynamic window, with A flushing all its operations and
 * everybody meeting in a barrier between the first and the second
 * accesses. No races.
 *
 * Ranks: A = 0, T = 1, B = 2 (1 with two ranks); other ranks only attach
 * their regions and take part in the epoch and the barriers. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define REGION 8

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) {
    fprintf(stderr, "race_free_dynamic: needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  const MPI_Comm W = MPI_COMM_WORLD;
  MPI_Win win;
  MPI_Win_create_dynamic(MPI_INFO_NULL, W, &win);
  int *r1 = calloc(REGION, sizeof(int)), *r2 = calloc(REGION, sizeof(int));
  if (!r1 || !r2) MPI_Abort(W, 3);
  MPI_Win_attach(win, r1, REGION * sizeof(int));
  MPI_Win_attach(win, r2, REGION * sizeof(int));

  /* T's region addresses, to A and B. */
  MPI_Aint at[2];
  MPI_Get_address(r1, &at[0]);
  MPI_Get_address(r2, &at[1]);
  if (me == T) {
    MPI_Send(at, 2, MPI_AINT, A, 0, W);
    if (B != T) MPI_Send(at, 2, MPI_AINT, B, 0, W);
  } else if (me == A || me == B) {
    MPI_Recv(at, 2, MPI_AINT, T, 0, W, MPI_STATUS_IGNORE);
  }
  /* Element i of T's region k. */
#define AT(k, i) MPI_Aint_add(at[k], (MPI_Aint)((i) * sizeof(int)))
  MPI_Barrier(W);

  int one = 1, two = 2, got[4];
  MPI_Win_lock_all(0, win);
  /* First accesses. */
  if (me == A) {
    MPI_Put(&one, 1, MPI_INT, T, AT(0, 0), 1, MPI_INT, win);
    MPI_Put(&one, 1, MPI_INT, T, AT(0, 1), 1, MPI_INT, win);
    MPI_Get(&got[0], 1, MPI_INT, T, AT(1, 2), 1, MPI_INT, win);
    MPI_Put(&one, 1, MPI_INT, T, AT(0, 3), 1, MPI_INT, win);
    MPI_Put(&one, 1, MPI_INT, T, AT(0, 4), 1, MPI_INT, win);
    MPI_Win_flush(T, win);
    MPI_Get(&got[1], 1, MPI_INT, T, AT(0, 4), 1, MPI_INT, win);
  }
  /* The synchronisation race_dynamic.c lacks. */
  if (me == A) MPI_Win_flush_all(win);
  MPI_Barrier(W);
  /* Second accesses. */
  if (me == B) {
    MPI_Put(&two, 1, MPI_INT, T, AT(0, 0), 1, MPI_INT, win);
    MPI_Put(&two, 1, MPI_INT, T, AT(1, 1), 1, MPI_INT, win);
    MPI_Accumulate(&two, 1, MPI_INT, T, AT(1, 2), 1, MPI_INT, MPI_SUM, win);
  }
  if (me == A) {
    MPI_Get(&got[2], 1, MPI_INT, T, AT(0, 3), 1, MPI_INT, win);
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(W);

  MPI_Win_detach(win, r1);
  MPI_Win_detach(win, r2);
  MPI_Win_free(&win);
  free(r1);
  free(r2);
  MPI_Finalize();
  return 0;
}
