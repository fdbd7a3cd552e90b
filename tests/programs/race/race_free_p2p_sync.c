/* Race-free twin of race_p2p_sync.c: in each pattern A's epoch is over and
 * ordered before B's: A sends (a) and enters the barrier (b) after its
 * MPI_Win_unlock_all, the MPI_Bcast is rooted at A (c) and the MPI_Reduce
 * at B (d), and B waits for its MPI_Irecv before its epoch (e). The
 * controls are those of race_p2p_sync.c. No races.
 *
 * Ranks: A = 0, T = 1, B = 2 (1 with two ranks); other ranks only take part
 * in the collectives. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define SLOTS 16

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) {
    fprintf(stderr, "race_free_p2p_sync: needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  static int mem[SLOTS];
  MPI_Win win;
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  const MPI_Comm W = MPI_COMM_WORLD;

  int one = 1, two = 2, got[4], token = 0, sum = 0;
  int *all = malloc((size_t)n * sizeof(int));
  MPI_Request req;

  /* a */
  if (me == A) {
    MPI_Win_lock_all(0, win);
    MPI_Put(&one, 1, MPI_INT, T, 0, 1, MPI_INT, win);
    MPI_Win_unlock_all(win);
    MPI_Send(&token, 1, MPI_INT, B, 0, W);
  }
  if (me == B) {
    MPI_Recv(&token, 1, MPI_INT, A, 0, W, MPI_STATUS_IGNORE);
    MPI_Win_lock_all(0, win);
    MPI_Put(&two, 1, MPI_INT, T, 0, 1, MPI_INT, win);
    MPI_Win_unlock_all(win);
  }
  MPI_Barrier(W);

  /* b */
  if (me == A) {
    MPI_Win_lock_all(0, win);
    MPI_Put(&one, 1, MPI_INT, T, 1, 1, MPI_INT, win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(W);
  } else {
    MPI_Barrier(W);
  }
  if (me == B) {
    MPI_Win_lock_all(0, win);
    MPI_Put(&two, 1, MPI_INT, T, 1, 1, MPI_INT, win);
    MPI_Win_unlock_all(win);
  }
  MPI_Barrier(W);

  /* c */
  if (me == A) {
    MPI_Win_lock_all(0, win);
    MPI_Put(&one, 1, MPI_INT, T, 2, 1, MPI_INT, win);
    MPI_Win_unlock_all(win);
  }
  MPI_Bcast(&token, 1, MPI_INT, A, W);
  if (me == B) {
    MPI_Win_lock_all(0, win);
    MPI_Get(&got[0], 1, MPI_INT, T, 2, 1, MPI_INT, win);
    MPI_Win_unlock_all(win);
  }
  MPI_Barrier(W);

  /* d */
  if (me == A) {
    MPI_Win_lock_all(0, win);
    MPI_Put(&one, 1, MPI_INT, T, 3, 1, MPI_INT, win);
    MPI_Win_unlock_all(win);
  }
  MPI_Reduce(&one, &sum, 1, MPI_INT, MPI_SUM, B, W);
  if (me == B) {
    MPI_Win_lock_all(0, win);
    MPI_Put(&two, 1, MPI_INT, T, 3, 1, MPI_INT, win);
    MPI_Win_unlock_all(win);
  }
  MPI_Barrier(W);

  /* e */
  if (me == A) {
    MPI_Win_lock_all(0, win);
    MPI_Put(&one, 1, MPI_INT, T, 4, 1, MPI_INT, win);
    MPI_Win_unlock_all(win);
    MPI_Isend(&token, 1, MPI_INT, B, 1, W, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  }
  if (me == B) {
    MPI_Irecv(&token, 1, MPI_INT, A, 1, W, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Win_lock_all(0, win);
    MPI_Put(&two, 1, MPI_INT, T, 4, 1, MPI_INT, win);
    MPI_Win_unlock_all(win);
  }
  MPI_Barrier(W);

  /* Control: MPI_Allreduce. */
  if (me == A) {
    MPI_Win_lock_all(0, win);
    MPI_Put(&one, 1, MPI_INT, T, 5, 1, MPI_INT, win);
    MPI_Win_unlock_all(win);
  }
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, W);
  if (me == B) {
    MPI_Win_lock_all(0, win);
    MPI_Get(&got[1], 1, MPI_INT, T, 5, 1, MPI_INT, win);
    MPI_Win_unlock_all(win);
  }
  MPI_Barrier(W);

  /* Control: MPI_Gather rooted at B. */
  if (me == A) {
    MPI_Win_lock_all(0, win);
    MPI_Put(&one, 1, MPI_INT, T, 6, 1, MPI_INT, win);
    MPI_Win_unlock_all(win);
  }
  MPI_Gather(&one, 1, MPI_INT, all, 1, MPI_INT, B, W);
  if (me == B) {
    MPI_Win_lock_all(0, win);
    MPI_Put(&two, 1, MPI_INT, T, 6, 1, MPI_INT, win);
    MPI_Win_unlock_all(win);
  }
  MPI_Barrier(W);

  /* Control: MPI_Sendrecv between A and B. */
  if (me == A) {
    MPI_Win_lock_all(0, win);
    MPI_Put(&one, 1, MPI_INT, T, 7, 1, MPI_INT, win);
    MPI_Win_unlock_all(win);
  }
  if (me == A || me == B) {
    const int peer = me == A ? B : A;
    int in = 0;
    MPI_Sendrecv(&token, 1, MPI_INT, peer, 2, &in, 1, MPI_INT, peer, 2, W, MPI_STATUS_IGNORE);
  }
  if (me == B) {
    MPI_Win_lock_all(0, win);
    MPI_Put(&two, 1, MPI_INT, T, 7, 1, MPI_INT, win);
    MPI_Win_unlock_all(win);
  }
  MPI_Barrier(W);

  MPI_Win_free(&win);
  free(all);
  MPI_Finalize();
  return 0;
}
