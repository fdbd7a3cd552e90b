/* OpenSHMEM collectives over every PE and over active sets, checked against
 * the oracle: barrier_all, sync_all, barrier and sync on strided sets,
 * broadcast32/64 from several roots, collect/fcollect, alltoall(s),
 * *_to_all reductions, and the symmetric heap calls (malloc, calloc,
 * align, realloc, free). Puts move data between the collectives. Runs with
 * any number of PEs from 2; prints what every PE received, which is the
 * same with and without vcx. */
#include <shmem.h>
#include <stdio.h>
#include <string.h>

#include "shmem_gt.h"

static long psync_a[SHMEM_REDUCE_SYNC_SIZE];
static long psync_b[SHMEM_REDUCE_SYNC_SIZE];
static long psync_c[SHMEM_ALLTOALL_SYNC_SIZE];
static int iwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 16];
static long lwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 16];
static double dwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 16];

static int me, npes;

static void reset_psync(long *p, int n) {
  for (int i = 0; i < n; ++i) p[i] = SHMEM_SYNC_VALUE;
}

/* pSync arrays may be reused once every PE of the set is past the earlier
 * collective: a barrier over every PE makes sure of that. */
static void barrier_all(void) {
  shmem_barrier_all();
  sgt_world("shmem_barrier_all");
}

int main(void) {
  shmem_init();
  sgt_init();
  me = shmem_my_pe();
  npes = shmem_n_pes();
  reset_psync(psync_a, SHMEM_REDUCE_SYNC_SIZE);
  reset_psync(psync_b, SHMEM_REDUCE_SYNC_SIZE);
  reset_psync(psync_c, SHMEM_ALLTOALL_SYNC_SIZE);
  barrier_all();

  /* Symmetric heap: every call synchronises every PE. */
  int *ring = shmem_malloc(sizeof(int) * 4);
  sgt_world("shmem_malloc");
  long *table = shmem_calloc((size_t)npes, sizeof(long));
  sgt_world("shmem_calloc");
  double *aligned = shmem_align(64, sizeof(double) * 2);
  sgt_world("shmem_align");

  /* A ring of puts, completed by a barrier. */
  const int next = (me + 1) % npes;
  int mine = 100 + me;
  shmem_int_put(ring, &mine, 1, next);
  shmem_long_p(&table[me], 1000L + me, 0);
  barrier_all();
  printf("PE %d: ring got %d\n", me, ring[0]);
  if (me == 0) {
    long sum = 0;
    for (int i = 0; i < npes; ++i) sum += table[i];
    printf("PE 0: table sum %ld\n", sum);
  }

  /* Active sets: the even PEs (stride 2) and the odd ones, then the first
   * two; shmem_sync is shmem_barrier without completing memory updates. */
  const int evens = (npes + 1) / 2, odds = npes / 2;
  if (me % 2 == 0) {
    shmem_barrier(0, 1, evens, psync_a);
    sgt_set("shmem_barrier", 0, 1, evens);
  } else {
    shmem_barrier(1, 1, odds, psync_a);
    sgt_set("shmem_barrier", 1, 1, odds);
  }
  barrier_all();
  if (me < 2) {
    shmem_sync(0, 0, 2, psync_b);
    sgt_set("shmem_sync", 0, 0, 2);
  }
  shmem_sync_all();
  sgt_world("shmem_sync_all");

  /* Broadcasts: from the last PE over everyone, then within the even PEs
   * from their second member when there is one. */
  static long lsrc[4], ldst[4];
  static int isrc[4], idst[4];
  lsrc[0] = 7000 + me;
  shmem_broadcast64(ldst, lsrc, 1, npes - 1, 0, 0, npes, psync_a);
  sgt_bcast("shmem_broadcast64", npes - 1, 0, 0, npes);
  printf("PE %d: broadcast64 %ld\n", me, me == npes - 1 ? -1L : ldst[0]);
  barrier_all();
  if (me % 2 == 0 && evens > 1) {
    isrc[0] = 300 + me;
    shmem_broadcast32(idst, isrc, 1, 1, 0, 1, evens, psync_b);
    sgt_bcast("shmem_broadcast32", 1, 0, 1, evens);
    printf("PE %d: broadcast32 %d\n", me, me == 2 ? -1 : idst[0]);
  }
  barrier_all();

  /* Collect and fcollect over every PE, then over the odd PEs. */
  static long cdst[64];
  static int fdst[64];
  lsrc[0] = me;
  lsrc[1] = me * 10;
  shmem_collect64(cdst, lsrc, (size_t)(me % 2 + 1), 0, 0, npes, psync_a);
  sgt_set("shmem_collect64", 0, 0, npes);
  barrier_all();
  isrc[0] = 50 + me;
  if (me % 2 == 1) {
    shmem_fcollect32(fdst, isrc, 1, 1, 1, odds, psync_b);
    sgt_set("shmem_fcollect32", 1, 1, odds);
    int s = 0;
    for (int i = 0; i < odds; ++i) s += fdst[i];
    printf("PE %d: fcollect32 sum %d\n", me, s);
  }
  long csum = 0;
  for (int i = 0; i < npes + (npes / 2); ++i) csum += cdst[i];
  printf("PE %d: collect64 sum %ld\n", me, csum);
  barrier_all();

  /* All-to-all exchanges. */
  static int a2a_src[64], a2a_dst[64];
  static long a2as_src[128], a2as_dst[128];
  for (int i = 0; i < npes; ++i) {
    a2a_src[i] = me * 100 + i;
    a2as_src[2 * i] = me * 1000 + i;
  }
  shmem_alltoall32(a2a_dst, a2a_src, 1, 0, 0, npes, psync_c);
  sgt_set("shmem_alltoall32", 0, 0, npes);
  barrier_all();
  shmem_alltoalls64(a2as_dst, a2as_src, 1, 2, 1, 0, 0, npes, psync_c);
  sgt_set("shmem_alltoalls64", 0, 0, npes);
  long a2a = 0;
  for (int i = 0; i < npes; ++i) a2a += a2a_dst[i] + a2as_dst[i];
  printf("PE %d: alltoall %ld\n", me, a2a);
  barrier_all();

  /* Reductions, over everyone and over the even PEs. */
  static int isum_src[2], isum_dst[2];
  static long lmax_src[1], lmax_dst[1];
  static double dprod_src[1], dprod_dst[1];
  isum_src[0] = me + 1;
  isum_src[1] = 2 * me;
  shmem_int_sum_to_all(isum_dst, isum_src, 2, 0, 0, npes, iwrk, psync_a);
  sgt_set("shmem_int_sum_to_all", 0, 0, npes);
  lmax_src[0] = (me * 37) % 11;
  if (me % 2 == 0) {
    shmem_long_max_to_all(lmax_dst, lmax_src, 1, 0, 1, evens, lwrk, psync_b);
    sgt_set("shmem_long_max_to_all", 0, 1, evens);
    printf("PE %d: even max %ld\n", me, lmax_dst[0]);
  }
  barrier_all();
  dprod_src[0] = 1.0 + me;
  shmem_double_prod_to_all(dprod_dst, dprod_src, 1, 0, 0, npes, dwrk, psync_a);
  sgt_set("shmem_double_prod_to_all", 0, 0, npes);
  printf("PE %d: sum %d %d prod %.0f\n", me, isum_dst[0], isum_dst[1], dprod_dst[0]);

  /* Heap calls again: realloc keeps the contents, free releases. */
  ring = shmem_realloc(ring, sizeof(int) * 16);
  sgt_world("shmem_realloc");
  printf("PE %d: after realloc %d\n", me, ring[0]);
  /* Freeing a null pointer does nothing (no synchronisation, no event); one
   * PE alone does it, which would hang the tools if it were taken for a
   * collective. */
  if (me == 0) shmem_free(NULL);
  shmem_free(aligned);
  sgt_world("shmem_free");
  shmem_free(table);
  sgt_world("shmem_free");
  shmem_free(ring);
  sgt_world("shmem_free");

  sgt_finalize();
  shmem_finalize();
  return 0;
}
