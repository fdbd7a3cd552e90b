/* shmem_putmem to the right neighbour, then shmem_barrier_all: time per
 * round for 8 B to 64 KiB. The barrier is the synchronisation vcx clocks
 * (an all-to-all); the put is recorded, not waited for. */
#include "shmem_bench_util.h"

int main(int argc, char** argv) {
  shmem_init();
  bench_init(argc, argv);
  const int me = shmem_my_pe(), n = shmem_n_pes();
  const int right = (me + 1) % n;
  const size_t largest = 64 * 1024;
  char* src = shbench_malloc(largest);
  char* dst = shbench_malloc(largest);
  /* Start-up (first connections between the tools, first pages of the
   * rings) stays out of the first size's numbers. */
  for (long i = 0; i < bench_iters(200, 5); ++i) shmem_barrier_all();
  for (size_t bytes = 8; bytes <= largest; bytes *= 8) {
    const long iters = bench_iters(bytes >= 4096 ? 300 : 1000, 5);
    memset(src, (int)(bytes & 0x7f) + me, bytes);
    for (long i = 0; i < iters / 10 + 1; ++i) {
      shmem_putmem(dst, src, bytes, right);
      shmem_barrier_all();
    }
    const double t0 = shbench_now();
    for (long i = 0; i < iters; ++i) {
      shmem_putmem(dst, src, bytes, right);
      shmem_barrier_all();
    }
    const double t = shbench_now() - t0;
    const int left = (me + n - 1) % n;
    if (dst[bytes - 1] != (char)((int)(bytes & 0x7f) + left)) shbench_fail("the put did not arrive");
    /* The left neighbour's next put writes dst again: not before the check. */
    shmem_barrier_all();
    char param[32];
    snprintf(param, sizeof param, "%zu", bytes);
    shbench_result("shmem_put_barrier", param, "time", t / iters * 1e6, "us");
  }
  shmem_free(dst);
  shmem_free(src);
  shmem_finalize();
  return 0;
}
