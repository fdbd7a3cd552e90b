/* The communication patterns of the scale model (bench/scale/model.py), as
 * a real MPI program: the model's check runs it under vcx-run and compares
 * the messages and bytes the tools report with the model's prediction. It
 * makes exactly the calls the model counts and nothing else that vcx
 * clocks, so the two can be compared message for message.
 *
 *   pattern --pattern barrier|stencil|collective|master_worker|lock --iterations K
 *
 * barrier        per iteration one MPI_Barrier on MPI_COMM_WORLD (the
 *                all-to-all the model compares with MPI_Allgather)
 * stencil        2-D grid of ranks (MPI_Dims_create, not periodic): per
 *                iteration an MPI_Irecv and an MPI_Isend with each
 *                neighbour, MPI_Waitall, MPI_Allreduce of one double
 * collective     per iteration MPI_Barrier, MPI_Allreduce, MPI_Bcast and
 *                MPI_Reduce (root 0) of one double on MPI_COMM_WORLD
 * master_worker  per iteration rank 0 sends one task to every worker and
 *                receives the results with MPI_ANY_SOURCE
 * lock           per iteration each rank locks its right neighbour's window
 *                exclusively, puts one int, unlocks; MPI_Win_free at the end
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(const char* why) {
  fprintf(stderr,
          "vcx: pattern: %s; use --pattern barrier|stencil|collective|master_worker|lock "
          "--iterations K (K >= 1)\n",
          why);
  exit(64);
}

static void stencil(long iters, int rank, int size) {
  int dims[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  const int row = rank / dims[1], col = rank % dims[1];
  int nb[4], n = 0;
  if (row > 0) nb[n++] = rank - dims[1];
  if (row + 1 < dims[0]) nb[n++] = rank + dims[1];
  if (col > 0) nb[n++] = rank - 1;
  if (col + 1 < dims[1]) nb[n++] = rank + 1;
  double halo_out = rank, halo_in[4], local = 1.0, sum = 0.0;
  for (long it = 0; it < iters; ++it) {
    MPI_Request req[8];
    MPI_Status st[8]; /* not MPI_STATUSES_IGNORE: GCC warns wrongly about it */
    for (int k = 0; k < n; ++k) MPI_Irecv(&halo_in[k], 1, MPI_DOUBLE, nb[k], 0, MPI_COMM_WORLD, &req[k]);
    for (int k = 0; k < n; ++k) MPI_Isend(&halo_out, 1, MPI_DOUBLE, nb[k], 0, MPI_COMM_WORLD, &req[n + k]);
    MPI_Waitall(2 * n, req, st);
    MPI_Allreduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
}

static void barrier(long iters) {
  for (long it = 0; it < iters; ++it) MPI_Barrier(MPI_COMM_WORLD);
}

static void collective(long iters) {
  double x = 1.0, y = 0.0;
  for (long it = 0; it < iters; ++it) {
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Bcast(&x, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Reduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  }
}

static void master_worker(long iters, int rank, int size) {
  double task = 0.0, result = 0.0;
  for (long it = 0; it < iters; ++it) {
    if (rank == 0) {
      for (int w = 1; w < size; ++w) MPI_Send(&task, 1, MPI_DOUBLE, w, 1, MPI_COMM_WORLD);
      for (int w = 1; w < size; ++w)
        MPI_Recv(&result, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&task, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      result = task + rank;
      MPI_Send(&result, 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
    }
  }
}

static void lock(long iters, int rank, int size) {
  int* base = NULL;
  MPI_Win win;
  MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  const int target = (rank + 1) % size;
  for (long it = 0; it < iters; ++it) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
    MPI_Put(&rank, 1, MPI_INT, target, 0, 1, MPI_INT, win);
    MPI_Win_unlock(target, win);
  }
  MPI_Win_free(&win);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const char* pattern = NULL;
  long iters = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--pattern") == 0 && i + 1 < argc) {
      pattern = argv[++i];
    } else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      char* end = NULL;
      iters = strtol(argv[++i], &end, 10);
      if (!end || *end != '\0') usage("--iterations needs a whole number");
    } else {
      usage("unknown argument");
    }
  }
  if (!pattern || iters < 1) usage("missing --pattern or --iterations");
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (strcmp(pattern, "barrier") == 0) {
    barrier(iters);
  } else if (strcmp(pattern, "stencil") == 0) {
    stencil(iters, rank, size);
  } else if (strcmp(pattern, "collective") == 0) {
    collective(iters);
  } else if (strcmp(pattern, "master_worker") == 0) {
    master_worker(iters, rank, size);
  } else if (strcmp(pattern, "lock") == 0) {
    lock(iters, rank, size);
  } else {
    usage("unknown pattern");
  }
  MPI_Finalize();
  return 0;
}
