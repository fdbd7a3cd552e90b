/* Race-free twin of race_pscw.c: the same accesses under post / start /
 * complete / wait, each racy exposure split into two rounds.
 *
 * Phase 1: T exposes to A alone, who makes its first accesses; then T
 * exposes to A and B, and A's second accesses and B's write follow what T
 * waited for.
 * Phase 2: T exposes to A, who writes into T's memory; then A exposes to T,
 * who puts from that memory.
 * Phase 3: as in race_pscw.c.
 *
 * Ranks: A = 0, T = 1, B = 2 (1 with two ranks: then T accesses itself);
 * other ranks only call the barriers. No races. */
#include <mpi.h>
#include <stdio.h>

#define SLOTS 16
#define SPINS 100

static MPI_Group group_of(MPI_Win win, int a, int b) {
  MPI_Group wg, g;
  int ranks[2] = {a, b};
  MPI_Win_get_group(win, &wg);
  MPI_Group_incl(wg, a == b ? 1 : 2, ranks, &g);
  MPI_Group_free(&wg);
  return g;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) {
    fprintf(stderr, "race_free_pscw: needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  static int mem[SLOTS];
  MPI_Win win;
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Group gA = group_of(win, A, A), gT = group_of(win, T, T), gAB = group_of(win, A, B);

  int one = 1, got[4];

  /* Phase 1, round 1: T exposes to A alone. */
  if (me == T) MPI_Win_post(gA, 0, win);
  if (me == A) {
    MPI_Win_start(gT, 0, win);
    MPI_Put(&one, 1, MPI_INT, T, 0, 1, MPI_INT, win);
    MPI_Put(&one, 1, MPI_INT, T, 1, 1, MPI_INT, win);
    MPI_Accumulate(&one, 1, MPI_INT, T, 2, 1, MPI_INT, MPI_SUM, win);
    MPI_Accumulate(&one, 1, MPI_INT, T, 3, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_complete(win);
  }
  if (me == T) MPI_Win_wait(win);
  /* Round 2: T exposes to A and B. */
  if (me == T) MPI_Win_post(gAB, 0, win);
  if (me == A) {
    MPI_Win_start(gT, 0, win);
    MPI_Get(&got[0], 1, MPI_INT, T, 1, 1, MPI_INT, win);
    MPI_Accumulate(&one, 1, MPI_INT, T, 2, 1, MPI_INT, MPI_SUM, win);
    MPI_Put(&one, 1, MPI_INT, T, 3, 1, MPI_INT, win);
    MPI_Win_complete(win);
  }
  if (me == B) {
    MPI_Win_start(gT, 0, win);
    MPI_Put(&one, 1, MPI_INT, T, 0, 1, MPI_INT, win);
    MPI_Win_complete(win);
  }
  if (me == T) MPI_Win_wait(win);
  MPI_Barrier(MPI_COMM_WORLD);

  /* Phase 2, round 1: T exposes to A, who writes into T's mem[4]. */
  if (me == T) MPI_Win_post(gA, 0, win);
  if (me == A) {
    MPI_Win_start(gT, 0, win);
    MPI_Put(&one, 1, MPI_INT, T, 4, 1, MPI_INT, win);
    MPI_Win_complete(win);
  }
  if (me == T) MPI_Win_wait(win);
  /* Round 2: A exposes to T, who puts from its mem[4]. */
  if (me == A) MPI_Win_post(gT, 0, win);
  if (me == T) {
    MPI_Win_start(gA, 0, win);
    MPI_Put(&mem[4], 1, MPI_INT, A, 5, 1, MPI_INT, win);
    MPI_Win_complete(win);
  }
  if (me == A) MPI_Win_wait(win);
  MPI_Barrier(MPI_COMM_WORLD);

  /* Phase 3 (control): A's write and its later read are in consecutive
   * access epochs. */
  for (int round = 0; round < 2; ++round) {
    if (me == T) MPI_Win_post(gA, 0, win);
    if (me == A) {
      MPI_Win_start(gT, 0, win);
      if (round == 0) MPI_Put(&one, 1, MPI_INT, T, 6, 1, MPI_INT, win);
      if (round == 1) MPI_Get(&got[1], 1, MPI_INT, T, 6, 1, MPI_INT, win);
      MPI_Win_complete(win);
    }
    if (me == T) {
      int done = 0;
      for (int i = 0; i < SPINS && !done; ++i) MPI_Win_test(win, &done);
      if (!done) MPI_Win_wait(win);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);

  MPI_Group_free(&gA);
  MPI_Group_free(&gT);
  MPI_Group_free(&gAB);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
