/* Races on windows whose memory MPI allocates: "wa" from MPI_Win_allocate
 * (fence epochs) and "ws" from MPI_Win_allocate_shared (a lock_all epoch of
 * every rank, open at the same time as wa's fence epoch). Only RMA calls
 * touch the memory: no rank loads or stores through the pointers.
 *
 *   a  wa: A and B write the same element of T;
 *   b  wa: A reads and then writes one element of T;
 *   c  ws: A writes an element of T while B reads it.
 * Unmarked controls: A writes wa's element 2 of T while B writes ws's
 * element 2 of T (the same displacement in different windows, different
 * memory); two MPI_SUM accumulates on ws.
 *
 * race_free_allocate.c has A flush ws and a fence on wa between the first
 * and the second accesses. MPI_Win_allocate_shared needs all ranks on one
 * node (the program says so and fails otherwise). Ranks: A = 0, T = 1, B = 2
 * (1 with two ranks); other ranks only take part in the epochs. */
#include <mpi.h>
#include <stdio.h>

#define SLOTS 8

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) {
    fprintf(stderr, "race_allocate: needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  const MPI_Comm W = MPI_COMM_WORLD;

  /* The shared window's communicator must be world itself, so that its
   * ranks are world's. */
  MPI_Comm node;
  int nn;
  MPI_Comm_split_type(W, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &nn);
  if (nn != n) {
    if (me == 0) fprintf(stderr, "race_allocate: all ranks must share one node\n");
    MPI_Abort(W, 2);
  }

  int *pa, *ps;
  MPI_Win wa, ws;
  MPI_Win_allocate(SLOTS * sizeof(int), sizeof(int), MPI_INFO_NULL, W, &pa, &wa);
  MPI_Win_allocate_shared(SLOTS * sizeof(int), sizeof(int), MPI_INFO_NULL, node, &ps, &ws);

  int one = 1, two = 2, got[4];
  MPI_Win_fence(0, wa);
  MPI_Win_lock_all(0, ws);
  /* First accesses. */
  if (me == A) {
    MPI_Put(&one, 1, MPI_INT, T, 0, 1, MPI_INT, wa); /* race: a */
    MPI_Get(&got[0], 1, MPI_INT, T, 1, 1, MPI_INT, wa); /* race: b */
    MPI_Put(&one, 1, MPI_INT, T, 2, 1, MPI_INT, wa);
    MPI_Put(&one, 1, MPI_INT, T, 0, 1, MPI_INT, ws); /* race: c */
    MPI_Accumulate(&one, 1, MPI_INT, T, 1, 1, MPI_INT, MPI_SUM, ws);
  }
  /* Second accesses (race_free_allocate.c flushes ws and fences wa here). */
  if (me == B) {
    MPI_Put(&two, 1, MPI_INT, T, 0, 1, MPI_INT, wa); /* race: a */
    MPI_Put(&two, 1, MPI_INT, T, 2, 1, MPI_INT, ws);
    MPI_Get(&got[1], 1, MPI_INT, T, 0, 1, MPI_INT, ws); /* race: c */
    MPI_Accumulate(&two, 1, MPI_INT, T, 1, 1, MPI_INT, MPI_SUM, ws);
  }
  if (me == A) {
    MPI_Put(&two, 1, MPI_INT, T, 1, 1, MPI_INT, wa); /* race: b */
  }
  MPI_Win_unlock_all(ws);
  MPI_Win_fence(0, wa);

  MPI_Win_free(&ws);
  MPI_Win_free(&wa);
  MPI_Comm_free(&node);
  MPI_Finalize();
  return 0;
}
