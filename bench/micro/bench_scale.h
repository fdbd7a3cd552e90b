/* The iteration counts every benchmark (MPI and OpenSHMEM) shares: fixed
 * per benchmark, so that a run with and without vcx does exactly the same
 * work, and multiplied by `--scale F` (bench/run --quick uses a small F). */
#ifndef VCX_BENCH_SCALE_H
#define VCX_BENCH_SCALE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double bench_scale_ = 1.0;

/* Reads --scale F from the command line (F > 0); exits with a usage line
 * on anything else. */
static inline void bench_init(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--scale") == 0 && i + 1 < argc) {
      char* end = NULL;
      bench_scale_ = strtod(argv[++i], &end);
      if (!end || *end != '\0' || !(bench_scale_ > 0.0)) {
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

/* `n` scaled by --scale, at least `at_least`. */
static inline long bench_iters(long n, long at_least) {
  long k = (long)(n * bench_scale_ + 0.5);
  return k < at_least ? at_least : k;
}

#endif
