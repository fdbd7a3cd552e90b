/* A one-sided program with two data races, for the demo of vcx-run's race
 * analysis. Built with vcx-mpicc, so that its own loads and stores are
 * checked too:
 *
 *   vcx-mpicc -g -o rma_race rma_race.c
 *   vcx-run --analysis race -n 3 ./rma_race
 *
 * Every rank adds its rank number into a counter on rank 0 and writes its
 * slot of a table there, in one fence epoch. The additions are
 * MPI_Accumulate calls (atomic with each other); the table slots are
 * separate. But ranks 1 and 2 also both store a "last writer" word with
 * MPI_Put in the same epoch: nothing orders those two puts, so which value
 * rank 0 reads after the fence depends on timing. And rank 0 peeks at the
 * counter before the fence, while the additions may still be arriving. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me = 0, n = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);

  /* Rank 0's memory: counter, last writer, then one slot per rank. */
  int *mem = NULL;
  MPI_Win win;
  MPI_Win_allocate((MPI_Aint)(2 + n) * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &mem, &win);
  for (int i = 0; i < 2 + n; ++i) mem[i] = 0;

  MPI_Win_fence(0, win);
  MPI_Accumulate(&me, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win);
  MPI_Put(&me, 1, MPI_INT, 0, 2 + me, 1, MPI_INT, win);
  if (me > 0) MPI_Put(&me, 1, MPI_INT, 0, 1, 1, MPI_INT, win); /* a race */
  int early = me == 0 ? mem[0] : 0; /* another: the counter is not complete yet */
  MPI_Win_fence(0, win);

  if (me == 0)
    printf("sum of ranks %d (%d before the fence), last writer %d\n", mem[0], early, mem[1]);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
