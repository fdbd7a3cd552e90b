/* Shared helpers of the OpenSHMEM benchmarks (bench/shmem), the SHMEM
 * counterpart of bench/micro/bench_util.h: the same RESULT lines
 *   RESULT,<benchmark>,<parameter>,<metric>,<value>,<unit>
 * printed by PE 0, the same iteration counts (bench_scale.h: bench_init,
 * bench_iters), and only the timed part measured. Times are wall clock
 * between two barriers, so every PE's work lies inside them. */
#ifndef VCX_SHMEM_BENCH_UTIL_H
#define VCX_SHMEM_BENCH_UTIL_H

#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../micro/bench_scale.h"

static inline double shbench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline void shbench_result(const char* bench, const char* param, const char* metric,
                                  double value, const char* unit) {
  if (shmem_my_pe() != 0) return;
  printf("RESULT,%s,%s,%s,%.6g,%s\n", bench, param, metric, value, unit);
  fflush(stdout);
}

static inline void* shbench_malloc(size_t bytes) {
  void* p = shmem_malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "vcx: out of symmetric memory allocating %zu bytes\n", bytes);
    shmem_global_exit(1);
  }
  memset(p, 0, bytes ? bytes : 1);
  return p;
}

static inline void shbench_fail(const char* what) {
  fprintf(stderr, "vcx: benchmark check failed on PE %d: %s\n", shmem_my_pe(), what);
  shmem_global_exit(1);
}

#endif
