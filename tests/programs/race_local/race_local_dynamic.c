/* Local loads and stores of memory attached to a dynamic window
 * (MPI_Win_create_dynamic + MPI_Win_attach). T attaches one region and
 * broadcasts its address (MPI_Get_address, MPI_Bcast of an MPI_Aint), the
 * target displacement of A's operations. A's operations are in a lock_all
 * epoch; A sends T a message before its MPI_Win_unlock_all, which orders
 * nothing of the epoch's operations before what T does after the receive.
 *
 *   a  T stores an element A puts into;
 *   b  T loads an element A puts into;
 *   c  T stores an element A accumulates into;
 *   d  T stores an element before A's epoch, which gets from it (nothing
 *      orders T's store before A's epoch).
 * Unmarked controls: T loads an element A gets from; T stores an element
 * next to one A puts into; after a barrier, T stores and loads the elements
 * of a and b; after MPI_Win_detach, T stores into the region (no longer
 * exposed) and frees it.
 *
 * race_free_local_dynamic.c has a barrier between T's store of d and A's
 * epoch, and A sends its message after MPI_Win_unlock_all. Ranks: A = 0,
 * T = 1; other ranks only take part in the broadcast and the barriers. */
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
    fprintf(stderr, "race_local_dynamic: needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int A = 0, T = 1;
  const MPI_Comm W = MPI_COMM_WORLD;
  MPI_Win win;
  MPI_Win_create_dynamic(MPI_INFO_NULL, W, &win);

  /* T's region and its address, to every rank. */
  int *r = NULL;
  MPI_Aint at = 0;
  if (me == T) {
    r = calloc(REGION, sizeof(int));
    if (!r) MPI_Abort(W, 3);
    MPI_Win_attach(win, r, REGION * sizeof(int));
    MPI_Get_address(r, &at);
  }
  MPI_Bcast(&at, 1, MPI_AINT, T, W);
  /* Element i of T's region. */
#define AT(i) MPI_Aint_add(at, (MPI_Aint)((i) * sizeof(int)))

  int one = 1, got[2], token = 0, v = 0;

  /* d: T's store before A's epoch (race_free_local_dynamic.c has a barrier
   * after it). */
  if (me == T) {
    r[6] = 5; /* race: d */
  }
  if (me == A) {
    MPI_Win_lock_all(0, win);
    MPI_Put(&one, 1, MPI_INT, T, AT(0), 1, MPI_INT, win); /* race: a */
    MPI_Put(&one, 1, MPI_INT, T, AT(1), 1, MPI_INT, win); /* race: b */
    MPI_Accumulate(&one, 1, MPI_INT, T, AT(2), 1, MPI_INT, MPI_SUM, win); /* race: c */
    MPI_Get(&got[0], 1, MPI_INT, T, AT(3), 1, MPI_INT, win);
    MPI_Put(&one, 1, MPI_INT, T, AT(4), 1, MPI_INT, win);
    MPI_Get(&got[1], 1, MPI_INT, T, AT(6), 1, MPI_INT, win); /* race: d */
    /* Before the unlock (race_free_local_dynamic.c sends after it). */
    MPI_Send(&token, 1, MPI_INT, T, 0, W);
    MPI_Win_unlock_all(win);
  }
  if (me == T) {
    MPI_Recv(&token, 1, MPI_INT, A, 0, W, MPI_STATUS_IGNORE);
    r[0] = 5; /* race: a */
    v = r[1]; /* race: b */
    r[2] = 5; /* race: c */
    v = r[3];
    r[5] = 5;
  }
  MPI_Barrier(W);

  /* Controls: after the barrier. */
  if (me == T) {
    r[0] = 6;
    v = r[1];
  }
  MPI_Barrier(W);

  if (me == T) {
    MPI_Win_detach(win, r);
    /* Control: no longer exposed. */
    r[0] = 7;
  }
  (void)v;
  MPI_Win_free(&win);
  free(r);
  MPI_Finalize();
  return 0;
}
