/* One timing loop for the data collectives (allreduce, bcast, alltoall):
 * for each size, `iters` calls after a tenth as many for warm-up; reports
 * the slowest rank's time per call. */
#ifndef VCX_BENCH_COLLECTIVE_H
#define VCX_BENCH_COLLECTIVE_H

#include "bench_util.h"

/* Runs op(bytes, sbuf, rbuf) for every size in `sizes` (bytes per rank). */
static inline void bench_collective(const char* name, const size_t* sizes, int nsizes,
                                    long base_iters, size_t buffer_bytes,
                                    void (*op)(size_t bytes, void* sbuf, void* rbuf)) {
  void* sbuf = bench_alloc(buffer_bytes);
  void* rbuf = bench_alloc(buffer_bytes);
  for (int s = 0; s < nsizes; ++s) {
    const long iters = bench_iters(sizes[s] <= 1024 ? base_iters : base_iters / 4, 5);
    for (long i = 0; i < iters / 10 + 1; ++i) op(sizes[s], sbuf, rbuf);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (long i = 0; i < iters; ++i) op(sizes[s], sbuf, rbuf);
    const double t = bench_max_time(MPI_Wtime() - t0);
    char param[32];
    snprintf(param, sizeof param, "%zu", sizes[s]);
    bench_result(name, param, "time", t / iters * 1e6, "us");
  }
  free(sbuf);
  free(rbuf);
}

#endif
