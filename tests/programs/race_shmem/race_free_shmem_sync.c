/* Race-free twin of race_shmem_sync.c: A calls shmem_quiet before the
 * shmem_sync_all (a), the shmem_sync over {A, B} (b), the fcollect (d) and
 * the reduction (e), so that its access is complete before the
 * synchronisation orders it before B's; the broadcast is rooted at A (c);
 * A calls shmem_quiet instead of shmem_fence (f). The controls are those
 * of race_shmem_sync.c. No races.
 *
 * PEs: A = 0 and B = 2 (1 with two PEs) access the symmetric heap of
 * T = 1; every PE takes part in the collectives over every PE. */
#include <shmem.h>
#include <stdio.h>

static long psync_b[SHMEM_SYNC_SIZE];
static long psync_ab[SHMEM_BARRIER_SYNC_SIZE];
static long psync_c[SHMEM_BCAST_SYNC_SIZE];
static long psync_d[SHMEM_COLLECT_SYNC_SIZE];
static long psync_e[SHMEM_REDUCE_SYNC_SIZE];
static long psync_x[SHMEM_ALLTOALL_SYNC_SIZE];
static int pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];

static void init_psync(long *p, int size) {
  for (int i = 0; i < size; ++i) p[i] = SHMEM_SYNC_VALUE;
}

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (n < 2) {
    fprintf(stderr, "race_free_shmem_sync: needs at least 2 PEs\n");
    shmem_global_exit(2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  /* The active set {A, B}: PE_start A, stride B - A (1 or 2), 2 PEs. */
  const int log_ab = B - A == 2 ? 1 : 0;
  init_psync(psync_b, SHMEM_SYNC_SIZE);
  init_psync(psync_ab, SHMEM_BARRIER_SYNC_SIZE);
  init_psync(psync_c, SHMEM_BCAST_SYNC_SIZE);
  init_psync(psync_d, SHMEM_COLLECT_SYNC_SIZE);
  init_psync(psync_e, SHMEM_REDUCE_SYNC_SIZE);
  init_psync(psync_x, SHMEM_ALLTOALL_SYNC_SIZE);
  int *mem = shmem_calloc(16, sizeof(int));
  /* Buffers of the collectives. */
  int *csrc = shmem_calloc((size_t)n, sizeof(int));
  int *cdst = shmem_calloc((size_t)n, sizeof(int));
  /* Open MPI 4.1.4's shmem_calloc zeroes the block after its barrier: this
   * barrier keeps the zeroing from overwriting other PEs' first writes. */
  shmem_barrier_all();

  int one = 1, two = 2, got[4];

  /* a */
  if (me == A) {
    shmem_int_p(&mem[0], 1, T);
    shmem_quiet();
  }
  shmem_sync_all();
  if (me == B) shmem_int_p(&mem[0], 2, T);
  shmem_barrier_all();

  /* Control: shmem_barrier_all completes and orders. */
  if (me == A) shmem_int_p(&mem[1], 1, T);
  shmem_barrier_all();
  if (me == B) shmem_int_p(&mem[1], 2, T);
  shmem_barrier_all();

  /* b */
  if (me == A) {
    shmem_int_put(&mem[2], &one, 1, T);
    shmem_quiet();
  }
  if (me == A || me == B) shmem_sync(A, log_ab, 2, psync_b);
  if (me == B) shmem_int_get(&got[0], &mem[2], 1, T);
  shmem_barrier_all();

  /* Control: shmem_barrier over {A, B} completes and orders. */
  if (me == A) shmem_int_put(&mem[3], &one, 1, T);
  if (me == A || me == B) shmem_barrier(A, log_ab, 2, psync_ab);
  if (me == B) shmem_int_get(&got[1], &mem[3], 1, T);
  shmem_barrier_all();

  /* c: rooted at A. */
  if (me == A) {
    shmem_int_p(&mem[4], 1, T);
    shmem_quiet();
  }
  shmem_broadcast32(cdst, csrc, 1, A, 0, 0, n, psync_c);
  if (me == B) shmem_int_p(&mem[4], 2, T);
  shmem_barrier_all();

  /* d */
  if (me == A) {
    shmem_int_put_nbi(&mem[5], &one, 1, T);
    shmem_quiet();
  }
  shmem_fcollect32(cdst, csrc, 1, 0, 0, n, psync_d);
  if (me == B) shmem_int_put(&mem[5], &two, 1, T);
  shmem_barrier_all();

  /* e */
  if (me == A) {
    shmem_int_atomic_add(&mem[6], 1, T);
    shmem_quiet();
  }
  shmem_int_sum_to_all(cdst, csrc, 1, 0, 0, n, pwrk, psync_e);
  if (me == B) got[2] = shmem_int_g(&mem[6], T);
  shmem_barrier_all();

  /* f: shmem_quiet instead of shmem_fence. */
  if (me == A) {
    shmem_int_p(&mem[7], 1, T);
    shmem_quiet();
  }
  shmem_sync_all();
  if (me == B) shmem_int_p(&mem[7], 2, T);
  shmem_barrier_all();

  /* Controls: complete when they return. */
  if (me == A) {
    got[3] = shmem_int_atomic_fetch_inc(&mem[8], T);
    shmem_int_get(&got[3], &mem[9], 1, T);
  }
  shmem_sync_all();
  if (me == B) {
    shmem_int_p(&mem[8], 2, T);
    shmem_int_p(&mem[9], 2, T);
  }
  shmem_barrier_all();

  /* Control: completed by shmem_quiet, ordered by shmem_alltoall32. */
  if (me == A) {
    shmem_int_p(&mem[10], 1, T);
    shmem_quiet();
  }
  shmem_alltoall32(cdst, csrc, 1, 0, 0, n, psync_x);
  if (me == B) shmem_int_p(&mem[10], 2, T);
  shmem_barrier_all();

  shmem_free(cdst);
  shmem_free(csrc);
  shmem_free(mem);
  shmem_finalize();
  return 0;
}
