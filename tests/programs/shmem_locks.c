/* OpenSHMEM locks checked against the oracle, with the data calls vcx
 * records (not clocked) in the critical sections: every PE takes a lock in
 * static memory with shmem_set_lock and one on the symmetric heap with
 * shmem_test_lock (falling back to shmem_set_lock), several rounds each,
 * and updates counters at PE 0 with get/put, atomics, non-blocking and
 * strided calls and a communication context, completed by shmem_quiet or
 * shmem_fence. The real lock order is measured by shmem_gt.c. Prints
 * order-independent totals, the same with and without vcx. */
#include <shmem.h>
#include <stdio.h>

#include "shmem_gt.h"

#define ROUNDS 3

static long lock_static;  /* symmetric: a global variable */

int main(void) {
  shmem_init();
  sgt_init();
  const int me = shmem_my_pe(), npes = shmem_n_pes();
  long *lock_heap = shmem_calloc(1, sizeof(long));
  sgt_world("shmem_calloc");
  long *shared = shmem_calloc(8, sizeof(long));
  sgt_world("shmem_calloc");
  int *strided = shmem_calloc(16, sizeof(int));
  sgt_world("shmem_calloc");

  shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
  const int own_ctx = shmem_ctx_create(0, &ctx) == 0;
  if (!own_ctx) ctx = SHMEM_CTX_DEFAULT;

  for (int round = 0; round < ROUNDS; ++round) {
    /* A read-modify-write that only the lock keeps correct. */
    sgt_set_lock(&lock_static, 0);
    long v = 0;
    shmem_long_get(&v, &shared[0], 1, 0);
    if (v != shmem_long_g(&shared[0], 0)) printf("PE %d: the counter changed under the lock\n", me);
    shmem_long_p(&shared[0], v + 1, 0);
    shmem_quiet();
    sgt_clear_lock(&lock_static, 0);

    int tries = 0;
    while (tries < 1000 && sgt_test_lock(lock_heap, 1) != 0) ++tries;
    if (tries == 1000) sgt_set_lock(lock_heap, 1);
    long w = 0;
    shmem_long_get_nbi(&w, &shared[1], 1, 0);
    shmem_quiet();
    w += me + 1;
    shmem_long_put_nbi(&shared[1], &w, 1, 0);
    shmem_fence();
    shmem_ctx_long_atomic_add(ctx, &shared[2], 2, 0);
    shmem_ctx_quiet(ctx);
    sgt_clear_lock(lock_heap, 1);

    /* Atomics that need no lock. */
    shmem_long_atomic_fetch_inc(&shared[3], 0);
    shmem_long_atomic_add(&shared[4], me, 0);
    (void)shmem_long_atomic_compare_swap(&shared[5], 0, 1, 0);
    (void)shmem_long_atomic_fetch(&shared[5], 0);
  }

  /* Strided writes: PE p fills every npes-th int of PE 0 from p on. */
  int mine[4] = {me, me, me, me};
  const int per_pe = 16 / npes;
  shmem_int_iput(&strided[me], mine, npes, 1, (size_t)(per_pe < 4 ? per_pe : 4), 0);
  shmem_quiet();
  shmem_barrier_all();
  sgt_world("shmem_barrier_all");

  if (me == 0) {
    int got[4];
    shmem_int_iget(got, &strided[1 % npes], 1, npes, 2, 0);
    long expect1 = 0;
    for (int p = 0; p < npes; ++p) expect1 += p + 1;
    printf("locked counter %ld of %d\n", shared[0], npes * ROUNDS);
    printf("test-lock sum %ld of %ld, context adds %ld\n", shared[1], expect1 * ROUNDS,
           shared[2]);
    printf("atomics %ld %ld %ld, strided %d %d\n", shared[3], shared[4], shared[5], got[0],
           got[1]);
  }
  if (own_ctx) shmem_ctx_destroy(ctx);
  shmem_barrier_all();
  sgt_world("shmem_barrier_all");
  shmem_free(strided);
  sgt_world("shmem_free");
  shmem_free(shared);
  sgt_world("shmem_free");
  shmem_free(lock_heap);
  sgt_world("shmem_free");
  sgt_finalize();
  shmem_finalize();
  return 0;
}
