/* Shared helpers of the OpenSHMEM benchmarks (bench/shmem), the SHMEM
 * counterpart of bench/micro/bench_util.h: the same RESULT lines
 *   RESULT,<benchmark>,<parameter>,<metric>,<value>,<unit>
 * printed by PE 0, the same fixed iteration counts scaled by --scale F, and
 * only the timed part measured. Times are wall clock between two barriers,
 * so every PE's work lies inside them. */
#ifndef VCX_SHMEM_BENCH_UTIL_H
#define VCX_SHMEM_BENCH_UTIL_H

#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double shbench_scale_ = 1.0;

static inline void shbench_init(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--scale") == 0 && i + 1 < argc) {
      char* end = NULL;
      shbench_scale_ = strtod(argv[++i], &end);
      if (!end || *end != '\0' || !(shbench_scale_ > 0.0)) {
        fprintf(stderr, "vcx: --scale needs a positive number, not '%s'\n", argv[i]);
        exit(64);
      }
    } else {
      fprintf(stderr, "vcx: %s: unknown argument '%s'; the only option is --scale F\n", argv[0],
              argv[i]);
      exit(64);
    }
  }
}

static inline long shbench_iters(long n, long at_least) {
  long k = (long)(n * shbench_scale_ + 0.5);
  return k < at_least ? at_least : k;
}

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
