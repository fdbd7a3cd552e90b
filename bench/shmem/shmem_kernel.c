/* A SHMEM put/barrier kernel: a 2-D Jacobi relaxation whose rows are split
 * over the PEs. Each iteration puts the boundary rows into the neighbours'
 * halo rows (shmem_double_put of a row), waits with shmem_barrier_all,
 * relaxes the local cells, and every 10 iterations sums the residual with
 * shmem_double_sum_to_all. Reports the time of the whole loop; checks that
 * every PE ends with PE 0's residual. */
#include <math.h>

#include "shmem_bench_util.h"

/* 25 600 cells per PE, as many as the MPI stencil (bench/apps) has per rank. */
enum { kRows = 100, kCols = 256 };

static long p_sync[SHMEM_REDUCE_SYNC_SIZE];
static double p_wrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE > 1 ? SHMEM_REDUCE_MIN_WRKDATA_SIZE : 1];

#define AT(g, r, c) ((g)[(r) * kCols + (c)])

int main(int argc, char** argv) {
  shmem_init();
  bench_init(argc, argv);
  const int me = shmem_my_pe(), n = shmem_n_pes();
  for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; ++i) p_sync[i] = SHMEM_SYNC_VALUE;
  /* Rows 1..kRows are this PE's; 0 and kRows+1 are the halos. */
  double* u = shbench_malloc((kRows + 2) * kCols * sizeof(double));
  double* next = malloc((kRows + 2) * kCols * sizeof(double));
  double* residual = shbench_malloc(sizeof(double));
  double* total = shbench_malloc(sizeof(double));
  if (!next) shbench_fail("out of memory");
  for (int r = 1; r <= kRows; ++r)
    for (int c = 0; c < kCols; ++c) AT(u, r, c) = (double)(((me * kRows + r) * 7 + c) % 17);
  shmem_barrier_all();
  const long iters = bench_iters(300, 20);
  const double t0 = shbench_now();
  for (long it = 0; it < iters; ++it) {
    if (me > 0) shmem_double_put(&AT(u, kRows + 1, 0), &AT(u, 1, 0), kCols, me - 1);
    if (me + 1 < n) shmem_double_put(&AT(u, 0, 0), &AT(u, kRows, 0), kCols, me + 1);
    shmem_barrier_all();
    double res = 0.0;
    for (int r = 1; r <= kRows; ++r) {
      const int up = (r == 1 && me == 0) ? 1 : r - 1;
      const int down = (r == kRows && me == n - 1) ? kRows : r + 1;
      for (int c = 0; c < kCols; ++c) {
        const double left = AT(u, r, c > 0 ? c - 1 : c);
        const double right = AT(u, r, c + 1 < kCols ? c + 1 : c);
        AT(next, r, c) = 0.5 * AT(u, r, c) + 0.125 * (AT(u, up, c) + AT(u, down, c) + left + right);
        res += fabs(AT(next, r, c) - AT(u, r, c));
      }
    }
    /* The halos must not be overwritten before every PE has read them. */
    shmem_barrier_all();
    memcpy(&AT(u, 1, 0), &AT(next, 1, 0), kRows * kCols * sizeof(double));
    if (it % 10 == 9) {
      *residual = res;
      shmem_double_sum_to_all(total, residual, 1, 0, 0, n, p_wrk, p_sync);
    }
  }
  const double t = shbench_now() - t0;
  double* check = shbench_malloc(sizeof(double));
  shmem_barrier_all();
  shmem_double_get(check, total, 1, 0);
  if (iters >= 10 && *check != *total) shbench_fail("the residual differs from PE 0's");
  shbench_result("shmem_kernel", "0", "time", t, "s");
  shmem_barrier_all();
  shmem_free(check);
  shmem_free(total);
  shmem_free(residual);
  shmem_free(u);
  free(next);
  shmem_finalize();
  return 0;
}
