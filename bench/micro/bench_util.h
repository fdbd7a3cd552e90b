/* Shared helpers of the MPI benchmarks (bench/micro, bench/apps).
 *
 * Every benchmark prints its results from rank 0 as lines
 *   RESULT,<benchmark>,<parameter>,<metric>,<value>,<unit>
 * which bench/run collects; anything else on stdout is ignored by it.
 * Iteration counts are fixed per benchmark so that a run with and without
 * vcx does exactly the same work; `--scale F` multiplies them (bench/run
 * --quick uses a small F). Only the timed part is measured, never start-up.
 */
#ifndef VCX_BENCH_UTIL_H
#define VCX_BENCH_UTIL_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_scale.h"

static inline int bench_rank(void) {
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

static inline int bench_size(void) {
  int n;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

/* Prints one result line from rank 0. */
static inline void bench_result(const char* bench, const char* param, const char* metric,
                                double value, const char* unit) {
  if (bench_rank() != 0) return;
  printf("RESULT,%s,%s,%s,%.6g,%s\n", bench, param, metric, value, unit);
  fflush(stdout);
}

/* The slowest rank's elapsed time: a collective benchmark is as fast as its
 * last rank. */
static inline double bench_max_time(double local) {
  double t;
  MPI_Allreduce(&local, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return t;
}

static inline void* bench_alloc(size_t bytes) {
  void* p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "vcx: out of memory allocating %zu bytes\n", bytes);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  memset(p, 1, bytes);
  return p;
}

static inline void bench_fail(const char* what) {
  fprintf(stderr, "vcx: benchmark check failed on rank %d: %s\n", bench_rank(), what);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

#endif
