/* Races under general active-target synchronisation (MPI_Win_post /
 * start / complete / wait).
 *
 * Phase 1: T = 1 exposes its window to A = 0 and B = 2 (1 with two ranks:
 * then T accesses itself) in one exposure epoch. Races: both origins write
 * the same bytes (a); A writes then reads (b), and accumulates then puts
 * (c), the same bytes in one access epoch. Unmarked: A's two accumulates
 * with the same op on the same bytes.
 * Phase 2: A and T expose to and access each other at once; T puts from
 * its own window memory while A writes into that memory (d): the origin
 * buffer of T's put.
 * Phase 3 (unmarked, the same in race_free_pscw.c): A writes and then, in
 * its next access epoch, reads the same bytes; T ends the second exposure
 * with MPI_Win_test.
 *
 * race_free_pscw.c splits phase 1 and phase 2 into two rounds each, so that
 * the second accesses start after the first ones were completed and waited
 * for. Other ranks only call the barriers. */
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
    fprintf(stderr, "race_pscw: needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  static int mem[SLOTS];
  MPI_Win win;
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Group gA = group_of(win, A, A), gT = group_of(win, T, T), gAB = group_of(win, A, B);

  int one = 1, got[4];

  /* Phase 1: one exposure epoch of T for A and B. */
  if (me == T) MPI_Win_post(gAB, 0, win);
  if (me == A) {
    MPI_Win_start(gT, 0, win);
    MPI_Put(&one, 1, MPI_INT, T, 0, 1, MPI_INT, win); /* race: a */
    MPI_Put(&one, 1, MPI_INT, T, 1, 1, MPI_INT, win); /* race: b */
    MPI_Accumulate(&one, 1, MPI_INT, T, 2, 1, MPI_INT, MPI_SUM, win);
    MPI_Accumulate(&one, 1, MPI_INT, T, 3, 1, MPI_INT, MPI_SUM, win); /* race: c */
    MPI_Get(&got[0], 1, MPI_INT, T, 1, 1, MPI_INT, win); /* race: b */
    MPI_Accumulate(&one, 1, MPI_INT, T, 2, 1, MPI_INT, MPI_SUM, win);
    MPI_Put(&one, 1, MPI_INT, T, 3, 1, MPI_INT, win); /* race: c */
    MPI_Win_complete(win);
  }
  if (me == B) {
    MPI_Win_start(gT, 0, win);
    MPI_Put(&one, 1, MPI_INT, T, 0, 1, MPI_INT, win); /* race: a */
    MPI_Win_complete(win);
  }
  if (me == T) MPI_Win_wait(win);
  MPI_Barrier(MPI_COMM_WORLD);

  /* Phase 2: A and T both origin and target at once. */
  if (me == A || me == T) {
    const int peer = me == A ? T : A;
    MPI_Group gp = me == A ? gT : gA;
    MPI_Win_post(gp, 0, win);
    MPI_Win_start(gp, 0, win);
    if (me == A) MPI_Put(&one, 1, MPI_INT, peer, 4, 1, MPI_INT, win); /* race: d */
    if (me == T) MPI_Put(&mem[4], 1, MPI_INT, peer, 5, 1, MPI_INT, win); /* race: d */
    MPI_Win_complete(win);
    MPI_Win_wait(win);
  }
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
