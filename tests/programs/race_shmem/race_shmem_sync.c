/* OpenSHMEM synchronisation that orders without completing. A's access
 * is not complete when it enters the synchronisation, or the
 * synchronisation carries nothing from A to B; B then accesses the same
 * int:
 *
 *   a  A's shmem_int_p, shmem_sync_all, B's p;
 *   b  A's shmem_int_put, shmem_sync over the active set {A, B}, B's get;
 *   c  A's p and shmem_quiet, shmem_broadcast32 rooted at B (nothing flows
 *      from A to B), B's p;
 *   d  A's shmem_int_put_nbi, shmem_fcollect32 over every PE, B's put;
 *   e  A's shmem_int_atomic_add, shmem_int_sum_to_all over every PE, B's g;
 *   f  A's p and shmem_fence (which orders A's puts but completes none),
 *      shmem_sync_all, B's p.
 * Unmarked controls: shmem_barrier_all and shmem_barrier over {A, B}
 * (they complete A's puts); a fetching atomic and a blocking get, complete
 * when they return, before shmem_sync_all; A's p and shmem_quiet before
 * shmem_alltoall32.
 *
 * race_free_shmem_sync.c has A call shmem_quiet before the shmem_sync_all
 * (a), the shmem_sync (b), the fcollect (d) and the reduction (e), roots
 * the broadcast at A (c), and calls shmem_quiet instead of shmem_fence (f).
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
    fprintf(stderr, "race_shmem_sync: needs at least 2 PEs\n");
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
  if (me == A) shmem_int_p(&mem[0], 1, T); /* race: a */
  shmem_sync_all();
  if (me == B) shmem_int_p(&mem[0], 2, T); /* race: a */
  shmem_barrier_all();

  /* Control: shmem_barrier_all completes and orders. */
  if (me == A) shmem_int_p(&mem[1], 1, T);
  shmem_barrier_all();
  if (me == B) shmem_int_p(&mem[1], 2, T);
  shmem_barrier_all();

  /* b */
  if (me == A) shmem_int_put(&mem[2], &one, 1, T); /* race: b */
  if (me == A || me == B) shmem_sync(A, log_ab, 2, psync_b);
  if (me == B) shmem_int_get(&got[0], &mem[2], 1, T); /* race: b */
  shmem_barrier_all();

  /* Control: shmem_barrier over {A, B} completes and orders. */
  if (me == A) shmem_int_put(&mem[3], &one, 1, T);
  if (me == A || me == B) shmem_barrier(A, log_ab, 2, psync_ab);
  if (me == B) shmem_int_get(&got[1], &mem[3], 1, T);
  shmem_barrier_all();

  /* c */
  if (me == A) {
    shmem_int_p(&mem[4], 1, T); /* race: c */
    shmem_quiet();
  }
  shmem_broadcast32(cdst, csrc, 1, B, 0, 0, n, psync_c);
  if (me == B) shmem_int_p(&mem[4], 2, T); /* race: c */
  shmem_barrier_all();

  /* d */
  if (me == A) shmem_int_put_nbi(&mem[5], &one, 1, T); /* race: d */
  shmem_fcollect32(cdst, csrc, 1, 0, 0, n, psync_d);
  if (me == B) shmem_int_put(&mem[5], &two, 1, T); /* race: d */
  shmem_barrier_all();

  /* e */
  if (me == A) shmem_int_atomic_add(&mem[6], 1, T); /* race: e */
  shmem_int_sum_to_all(cdst, csrc, 1, 0, 0, n, pwrk, psync_e);
  if (me == B) got[2] = shmem_int_g(&mem[6], T); /* race: e */
  shmem_barrier_all();

  /* f */
  if (me == A) {
    shmem_int_p(&mem[7], 1, T); /* race: f */
    shmem_fence();
  }
  shmem_sync_all();
  if (me == B) shmem_int_p(&mem[7], 2, T); /* race: f */
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
