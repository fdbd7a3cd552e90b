/* Counts the sched_yield() calls made in this process: the program exports
 * its own sched_yield (linked with --export-dynamic), which the interceptor's
 * calls bind to ahead of libc's. Ranks exchange messages, wait on requests
 * and meet in collectives, then each prints "yields <rank> <count>".
 * Used by app_yield.py. */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static unsigned long g_yields;

int sched_yield(void) {
  ++g_yields;
  return (int)syscall(SYS_sched_yield);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int peer = rank ^ 1;
  long v = rank, w = 0;
  for (int i = 0; i < 50 && peer < size; ++i) {
    if (rank % 2 == 0) {
      MPI_Send(&v, 1, MPI_LONG, peer, 0, MPI_COMM_WORLD);
      MPI_Recv(&w, 1, MPI_LONG, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Request r;
      MPI_Irecv(&w, 1, MPI_LONG, peer, 0, MPI_COMM_WORLD, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      MPI_Send(&v, 1, MPI_LONG, peer, 0, MPI_COMM_WORLD);
    }
    MPI_Allreduce(&v, &w, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  }
  const unsigned long seen = g_yields;  /* before MPI_Finalize, which may wait */
  MPI_Finalize();
  printf("yields %d %lu\n", rank, seen);
  return 0;
}
