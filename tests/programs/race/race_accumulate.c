/* Atomicity of MPI_Accumulate in one fence epoch: accumulates with the same
 * op and the same basic datatype do not race with each other; everything
 * else that overlaps and writes does.
 *
 *   a  MPI_SUM against MPI_MAX;
 *   b  accumulate against put;
 *   c  MPI_SUM on MPI_INT against MPI_SUM on MPI_UNSIGNED (other type);
 *   d  accumulate against get;
 *   e  MPI_REPLACE accumulate against put;
 *   f  a two-element accumulate against a put of its second element;
 *   g  one origin accumulates and then puts to the same bytes;
 *   h  MPI_Get_accumulate with MPI_NO_OP (an atomic read) against put.
 * Unmarked controls: MPI_SUM against MPI_SUM from two origins, MPI_REPLACE
 * against MPI_REPLACE, a two-element MPI_SUM against a one-element one on
 * its second element, one origin's two MPI_SUMs, MPI_NO_OP against
 * MPI_SUM, and one origin's accumulates with different operations on one
 * location (ordered: MPI 4.0, 12.7.2).
 *
 * race_free_accumulate.c has a fence between the first and the second
 * accesses. Ranks: A = 0 and B = 2 (1 with two ranks) access the window of
 * T = 1; other ranks only call the fences. */
#include <mpi.h>
#include <stdio.h>

#define SLOTS 24

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) {
    fprintf(stderr, "race_accumulate: needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  static int mem[SLOTS];
  MPI_Win win;
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);

  int one = 1, zero = 0, two[2] = {2, 2}, got[4], res[3];
  unsigned uone = 1;

  MPI_Win_fence(0, win);
  /* First accesses. */
  if (me == A) {
    MPI_Accumulate(&one, 1, MPI_INT, T, 0, 1, MPI_INT, MPI_SUM, win);
    MPI_Accumulate(&one, 1, MPI_INT, T, 1, 1, MPI_INT, MPI_SUM, win); /* race: a */
    MPI_Accumulate(&one, 1, MPI_INT, T, 2, 1, MPI_INT, MPI_SUM, win); /* race: b */
    MPI_Accumulate(&one, 1, MPI_INT, T, 3, 1, MPI_INT, MPI_SUM, win); /* race: c */
    MPI_Accumulate(&one, 1, MPI_INT, T, 4, 1, MPI_INT, MPI_SUM, win); /* race: d */
    MPI_Accumulate(&one, 1, MPI_INT, T, 5, 1, MPI_INT, MPI_REPLACE, win);
    MPI_Accumulate(&one, 1, MPI_INT, T, 6, 1, MPI_INT, MPI_REPLACE, win); /* race: e */
    MPI_Accumulate(two, 2, MPI_INT, T, 7, 2, MPI_INT, MPI_SUM, win);
    MPI_Accumulate(two, 2, MPI_INT, T, 9, 2, MPI_INT, MPI_SUM, win); /* race: f */
    MPI_Accumulate(&one, 1, MPI_INT, T, 11, 1, MPI_INT, MPI_SUM, win); /* race: g */
    MPI_Accumulate(&one, 1, MPI_INT, T, 12, 1, MPI_INT, MPI_SUM, win);
    MPI_Get_accumulate(&one, 1, MPI_INT, &got[0], 1, MPI_INT, T, 13, 1, MPI_INT, MPI_NO_OP, win);
    MPI_Get_accumulate(&one, 1, MPI_INT, &got[1], 1, MPI_INT, T, 14, 1, MPI_INT, MPI_NO_OP, win); /* race: h */
  }
  /* Second accesses (race_free_accumulate.c has a fence here). */
  if (me == B) {
    MPI_Accumulate(&one, 1, MPI_INT, T, 0, 1, MPI_INT, MPI_SUM, win);
    MPI_Accumulate(&one, 1, MPI_INT, T, 1, 1, MPI_INT, MPI_MAX, win); /* race: a */
    MPI_Put(&one, 1, MPI_INT, T, 2, 1, MPI_INT, win); /* race: b */
    MPI_Accumulate(&uone, 1, MPI_UNSIGNED, T, 3, 1, MPI_UNSIGNED, MPI_SUM, win); /* race: c */
    MPI_Get(&got[2], 1, MPI_INT, T, 4, 1, MPI_INT, win); /* race: d */
    MPI_Accumulate(&one, 1, MPI_INT, T, 5, 1, MPI_INT, MPI_REPLACE, win);
    MPI_Put(&one, 1, MPI_INT, T, 6, 1, MPI_INT, win); /* race: e */
    MPI_Accumulate(&one, 1, MPI_INT, T, 8, 1, MPI_INT, MPI_SUM, win);
    MPI_Put(&one, 1, MPI_INT, T, 10, 1, MPI_INT, win); /* race: f */
    MPI_Accumulate(&one, 1, MPI_INT, T, 13, 1, MPI_INT, MPI_SUM, win);
    MPI_Put(&one, 1, MPI_INT, T, 14, 1, MPI_INT, win); /* race: h */
  }
  if (me == A) {
    MPI_Put(&one, 1, MPI_INT, T, 11, 1, MPI_INT, win); /* race: g */
    MPI_Accumulate(&one, 1, MPI_INT, T, 12, 1, MPI_INT, MPI_SUM, win);
    /* One origin's accumulates to the same location are ordered in program
     * order (MPI 4.0, 12.7.2, the default accumulate_ordering): whatever
     * their operations, they do not race with each other. */
    MPI_Accumulate(&one, 1, MPI_INT, T, 15, 1, MPI_INT, MPI_SUM, win);
    MPI_Accumulate(&one, 1, MPI_INT, T, 15, 1, MPI_INT, MPI_MAX, win);
    MPI_Accumulate(&one, 1, MPI_INT, T, 16, 1, MPI_INT, MPI_REPLACE, win);
    MPI_Get_accumulate(&one, 1, MPI_INT, &res[0], 1, MPI_INT, T, 16, 1, MPI_INT, MPI_MIN, win);
    MPI_Fetch_and_op(&one, &res[1], MPI_INT, T, 17, MPI_PROD, win);
    MPI_Compare_and_swap(&one, &zero, &res[2], MPI_INT, T, 17, win);
  }
  MPI_Win_fence(0, win);

  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
