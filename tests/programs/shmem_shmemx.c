/* Open MPI's OpenSHMEM extensions (shmemx.h) synchronise like the shmem.h
 * calls they extend; checked against the oracle:
 *
 *   H  shmemx_malloc_with_hint (several hints): symmetric heap, every PE
 *      synchronises, like shmem_malloc.
 *   A  ping-pong between PE 0 and every other PE, ROUNDS rounds each: the
 *      PE writes its data at PE 0 with shmemx_int16_p, then, after
 *      shmem_fence, the round number into its flag there with
 *      shmemx_int32_p; PE 0 waits with shmemx_int32_wait_until(EQ) and
 *      answers with shmemx_int32_p, which the PE waits for the same way.
 *   C  64-bit atomics as flags: every PE but 0 tries a shmemx_int64_cswap
 *      that fails (it writes nothing), then sets its flag at PE 0 with
 *      shmemx_int64_set; PE 0 waits for each with shmemx_int64_wait_until
 *      and answers with shmemx_int64_swap, which the PE waits for with
 *      shmemx_int64_wait (until the value is no longer 0).
 *   D  a reduction and a counter: PEs 1..n-1 reduce with
 *      shmemx_int64_max_to_all on their active set, then step a counter at
 *      PE 0 (heap memory from shmemx_malloc_with_hint) with
 *      shmemx_int64_fadd(+2) and shmemx_int64_finc. PE 0, which is not in
 *      the set, waits with shmemx_int64_wait_until(GE) and learns of the
 *      reduction through the counter alone.
 *   R  more reductions: shmemx_int16_sum_to_all over the even PEs (a
 *      strided set) and shmemx_int32_prod_to_all over every PE.
 *   X  data calls that synchronise nothing (recorded, not clocked):
 *      shmemx_int32_g, shmemx_int64_fetch, shmemx_int32_add,
 *      shmemx_int64_inc, shmemx_uint64_atomic_or,
 *      shmemx_int32_atomic_fetch_xor on variables nobody waits for; their
 *      results are read after a barrier. (PE 0 does not fetch_xor its own
 *      variable: under Open MPI 4.1.4 with UCX, the other PEs' fetch_xor
 *      then loses that update.)
 *
 * Each flag write's position in its flag's modification order is known by
 * construction (a round, a counter's value); shmem_gt.c logs it. Prints
 * what arrived, the same with and without vcx. */
#include <shmem.h>
#include <shmemx.h>
#include <stdint.h>
#include <stdio.h>

#include "shmem_gt.h"

#define ROUNDS 3
#define MAX_PES 64

/* Symmetric: globals. */
static int32_t flag_a[MAX_PES];
static int16_t data_a[MAX_PES];
static int32_t ack_a;
static long psync_d[SHMEM_REDUCE_SYNC_SIZE];
static long psync_r1[SHMEM_REDUCE_SYNC_SIZE];
static long psync_r2[SHMEM_REDUCE_SYNC_SIZE];
static int64_t wrk64[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 16];
static int32_t wrk32[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 16];
static int16_t wrk16[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 16];
static int64_t max_src, max_dst;
static int16_t sum_src[2], sum_dst[2];
static int32_t prod_src, prod_dst;
static int32_t x_value, x_sum, x_xor;
static int64_t x_fetched, x_count;
static uint64_t x_bits;

static void barrier(void) {
  shmem_barrier_all();
  sgt_world("shmem_barrier_all");
}

static void reset_psync(long *p) {
  for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; ++i) p[i] = SHMEM_SYNC_VALUE;
}

int main(void) {
  shmem_init();
  sgt_init();
  const int me = shmem_my_pe(), npes = shmem_n_pes();
  if (npes > MAX_PES) {
    fprintf(stderr, "shmem_shmemx: at most %d PEs\n", MAX_PES);
    shmem_global_exit(2);
  }
  reset_psync(psync_d);
  reset_psync(psync_r1);
  reset_psync(psync_r2);

  /* H */
  int64_t *flag_c = shmemx_malloc_with_hint((size_t)npes * sizeof(int64_t), SHMEM_HINT_NONE);
  sgt_world("shmemx_malloc_with_hint");
  int64_t *answer_c = shmemx_malloc_with_hint(sizeof(int64_t), SHMEM_HINT_LOW_LAT_MEM);
  sgt_world("shmemx_malloc_with_hint");
  int64_t *count_d = shmemx_malloc_with_hint(sizeof(int64_t), SHMEM_HINT_ATOMICS);
  sgt_world("shmemx_malloc_with_hint");
  if (!flag_c || !answer_c || !count_d) {
    fprintf(stderr, "shmem_shmemx: shmemx_malloc_with_hint failed\n");
    shmem_global_exit(3);
  }
  for (int i = 0; i < npes; ++i) flag_c[i] = 0;
  *answer_c = 0;
  *count_d = 0;
  x_value = 10 * me + 1;
  x_fetched = 1000 + me;
  barrier();
  char name[32];

  /* A */
  if (me == 0) {
    int wrong = 0;
    for (int w = 1; w < npes; ++w) {
      snprintf(name, sizeof name, "A.flag%d", w);
      for (int r = 1; r <= ROUNDS; ++r) {
        shmemx_int32_wait_until(&flag_a[w], SHMEM_CMP_EQ, r);
        sgt_flag_wait("shmemx_int32_wait_until", name, ((volatile int32_t *)flag_a)[w], r);
        if (((volatile int16_t *)data_a)[w] != 100 * w + r) ++wrong;
        shmemx_int32_p(&ack_a, r, w);
        sgt_flag_write("shmemx_int32_p", "A.ack", w, "store", r, r);
      }
    }
    printf("PE 0: A: %d rounds with each PE, %d wrong data\n", ROUNDS, wrong);
  } else {
    snprintf(name, sizeof name, "A.flag%d", me);
    for (int r = 1; r <= ROUNDS; ++r) {
      shmemx_int16_p(&data_a[me], (int16_t)(100 * me + r), 0);
      shmem_fence();
      shmemx_int32_p(&flag_a[me], r, 0);
      sgt_flag_write("shmemx_int32_p", name, 0, "store", r, r);
      shmemx_int32_wait_until(&ack_a, SHMEM_CMP_EQ, r);
      sgt_flag_wait("shmemx_int32_wait_until", "A.ack", *(volatile int32_t *)&ack_a, r);
    }
    printf("PE %d: A: %d rounds acknowledged\n", me, ROUNDS);
  }
  barrier();

  /* C */
  if (me != 0) {
    snprintf(name, sizeof name, "C.flag%d", me);
    const int64_t old = shmemx_int64_cswap(&flag_c[me], 55, 77, 0);
    sgt_flag_write("shmemx_int64_cswap", name, 0, "none", 77, 0);
    shmemx_int64_set(&flag_c[me], 100 + me, 0);
    sgt_flag_write("shmemx_int64_set", name, 0, "store", 100 + me, 1);
    shmemx_int64_wait(answer_c, 0);
    sgt_flag_wait("shmemx_int64_wait", "C.answer", *(volatile int64_t *)answer_c, 1);
    printf("PE %d: C: compare-and-swap found %lld, answer %lld\n", me, (long long)old,
           (long long)*answer_c);
  } else {
    for (int w = 1; w < npes; ++w) {
      snprintf(name, sizeof name, "C.flag%d", w);
      shmemx_int64_wait_until(&flag_c[w], SHMEM_CMP_EQ, 100 + w);
      sgt_flag_wait("shmemx_int64_wait_until", name, ((volatile int64_t *)flag_c)[w], 1);
      (void)shmemx_int64_swap(answer_c, w, w);
      sgt_flag_write("shmemx_int64_swap", "C.answer", w, "store", w, 1);
    }
    printf("PE 0: C: every flag set\n");
  }
  barrier();

  /* D: the counter's values are the orders. */
  if (me != 0) {
    max_src = 7 * me;
    shmemx_int64_max_to_all(&max_dst, &max_src, 1, 1, 0, npes - 1, wrk64, psync_d);
    sgt_set("shmemx_int64_max_to_all", 1, 0, npes - 1);
    int64_t f = shmemx_int64_fadd(count_d, 2, 0);
    sgt_flag_write("shmemx_int64_fadd", "D", 0, "up", f + 2, f + 2);
    f = shmemx_int64_finc(count_d, 0);
    sgt_flag_write("shmemx_int64_finc", "D", 0, "up", f + 1, f + 1);
    printf("PE %d: D: max %lld\n", me, (long long)max_dst);
  } else {
    shmemx_int64_wait_until(count_d, SHMEM_CMP_GE, 3 * (npes - 1));
    const int64_t got = *(volatile int64_t *)count_d;
    sgt_flag_wait("shmemx_int64_wait_until", "D", got, got);
    printf("PE 0: D: counted %lld\n", (long long)got);
  }
  barrier();

  /* R */
  const int evens = (npes + 1) / 2;
  if (me % 2 == 0) {
    sum_src[0] = (int16_t)me;
    sum_src[1] = 1;
    shmemx_int16_sum_to_all(sum_dst, sum_src, 2, 0, 1, evens, wrk16, psync_r1);
    sgt_set("shmemx_int16_sum_to_all", 0, 1, evens);
    printf("PE %d: R: even sum %d over %d PEs\n", me, sum_dst[0], sum_dst[1]);
  }
  prod_src = me + 1;
  shmemx_int32_prod_to_all(&prod_dst, &prod_src, 1, 0, 0, npes, wrk32, psync_r2);
  sgt_set("shmemx_int32_prod_to_all", 0, 0, npes);
  printf("PE %d: R: product %d\n", me, prod_dst);
  barrier();

  /* X */
  const int next = (me + 1) % npes;
  const int32_t g = shmemx_int32_g(&x_value, next);
  const int64_t fetched = shmemx_int64_fetch(&x_fetched, next);
  shmemx_int32_add(&x_sum, me + 1, 0);
  shmemx_int64_inc(&x_count, 0);
  shmemx_uint64_atomic_or(&x_bits, (uint64_t)1 << me, 0);
  if (me != 0) (void)shmemx_int32_atomic_fetch_xor(&x_xor, 1 << me, 0);
  printf("PE %d: X: read %d and %lld from PE %d\n", me, g, (long long)fetched, next);
  barrier();
  if (me == 0)
    printf("PE 0: X: sum %d, count %lld, bits %llx, xor %x\n", x_sum, (long long)x_count,
           (unsigned long long)x_bits, (unsigned)x_xor);
  barrier();

  shmem_free(count_d);
  sgt_world("shmem_free");
  shmem_free(answer_c);
  sgt_world("shmem_free");
  shmem_free(flag_c);
  sgt_world("shmem_free");
  sgt_finalize();
  shmem_finalize();
  return 0;
}
