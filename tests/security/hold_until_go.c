/* A program that stays in MPI until its test says go: rank 0 waits for a
 * file to appear, then the ranks exchange messages. Meanwhile the security
 * test attacks the tool processes; the run must end as if nothing happened.
 *
 *   hold_until_go GOFILE */
#include <mpi.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 2) {
    if (rank == 0) fprintf(stderr, "usage: hold_until_go GOFILE\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    struct stat st;
    /* Bounded: a test that never says go must not hang CI. */
    for (int i = 0; i < 6000 && stat(argv[1], &st) != 0; ++i) {
      struct timespec nap = {0, 10 * 1000 * 1000};
      nanosleep(&nap, NULL);
    }
  }
  int token = rank == 0 ? 41 : 0;
  MPI_Bcast(&token, 1, MPI_INT, 0, MPI_COMM_WORLD);
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int sum = 0;
  for (int round = 0; round < 20; ++round) {
    int in = 0, out = token + round + rank;
    MPI_Sendrecv(&out, 1, MPI_INT, next, round, &in, 1, MPI_INT, prev, round, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    sum += in;
  }
  int total = 0;
  MPI_Allreduce(&sum, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("total %d\n", total);
  MPI_Finalize();
  return 0;
}
