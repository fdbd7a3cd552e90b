/* Races in one MPI_Win_fence epoch: two origins writing the same target
 * bytes (a), a write and a read of them by two origins (b), one origin
 * writing then reading (c) or writing twice (d) the same bytes, and a
 * two-element put that overlaps one element of another origin's put (e).
 * Unmarked controls: two reads of the same bytes, adjacent elements, and
 * the same bytes written in consecutive epochs. race_free_fence.c is this
 * program with a fence between the first and the second accesses.
 *
 * Ranks: A = 0 and B = 2 (1 with two ranks) access the window of T = 1;
 * other ranks only call the fences. Window slots are ints. */
#include <mpi.h>
#include <stdio.h>

#define SLOTS 16

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) {
    fprintf(stderr, "race_fence: needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  static int mem[SLOTS];
  MPI_Win win;
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);

  int one = 1, two[2] = {2, 3}, ga[2], gb[2];

  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  /* First accesses. */
  if (me == A) {
    MPI_Put(&one, 1, MPI_INT, T, 0, 1, MPI_INT, win); /* race: a */
    MPI_Put(&one, 1, MPI_INT, T, 1, 1, MPI_INT, win); /* race: b */
    MPI_Get(&ga[0], 1, MPI_INT, T, 2, 1, MPI_INT, win);
    MPI_Put(&one, 1, MPI_INT, T, 3, 1, MPI_INT, win); /* race: c */
    MPI_Put(&one, 1, MPI_INT, T, 4, 1, MPI_INT, win); /* race: d */
    MPI_Put(two, 2, MPI_INT, T, 5, 2, MPI_INT, win);
    MPI_Put(two, 2, MPI_INT, T, 8, 2, MPI_INT, win); /* race: e */
  }
  /* Second accesses (race_free_fence.c has a fence here). */
  if (me == B) {
    MPI_Put(&one, 1, MPI_INT, T, 0, 1, MPI_INT, win); /* race: a */
    MPI_Get(&gb[0], 1, MPI_INT, T, 1, 1, MPI_INT, win); /* race: b */
    MPI_Get(&gb[1], 1, MPI_INT, T, 2, 1, MPI_INT, win);
    MPI_Put(&one, 1, MPI_INT, T, 7, 1, MPI_INT, win);
    MPI_Put(&one, 1, MPI_INT, T, 9, 1, MPI_INT, win); /* race: e */
  }
  if (me == A) {
    MPI_Get(&ga[1], 1, MPI_INT, T, 3, 1, MPI_INT, win); /* race: c */
    MPI_Put(&two[1], 1, MPI_INT, T, 4, 1, MPI_INT, win); /* race: d */
  }
  MPI_Win_fence(0, win);

  /* Control: the same bytes in consecutive epochs. */
  if (me == A) MPI_Put(&one, 1, MPI_INT, T, 10, 1, MPI_INT, win);
  MPI_Win_fence(0, win);
  if (me == B) MPI_Put(&two[0], 1, MPI_INT, T, 10, 1, MPI_INT, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);

  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
