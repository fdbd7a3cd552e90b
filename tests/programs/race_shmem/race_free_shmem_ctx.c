/* Race-free twin of race_shmem_ctx.c: each access is completed by
 * shmem_ctx_quiet on its own context (shmem_quiet for the default one)
 * before the sync (a, b, d) or before the PE's next access to the int (c,
 * e, f); shmem_ctx_fence(ctx) orders two writes on ctx (g, h) and ctx's
 * put before the flag write on ctx that T waits for (i); shmem_ctx_destroy
 * quiets ctx3 before the sync (j). The controls are those of
 * race_shmem_ctx.c. No races.
 *
 * Each PE calls shmem_ctx_quiet on its contexts before every
 * shmem_barrier_all. PEs: A = 0 and B = 2 (1 with two PEs) access the
 * symmetric heap of T = 1; every PE creates the contexts and calls
 * shmem_sync_all and the barriers. */
#include <shmem.h>
#include <stdio.h>

#define SLOTS 16

/* Ends a phase: this PE's accesses on its contexts are complete (a barrier
 * is not relied on for that), then every PE meets. */
static void end_phase(shmem_ctx_t c1, shmem_ctx_t c2) {
  shmem_ctx_quiet(c1);
  shmem_ctx_quiet(c2);
  shmem_barrier_all();
}

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (n < 2) {
    fprintf(stderr, "race_free_shmem_ctx: needs at least 2 PEs\n");
    shmem_global_exit(2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  int *mem = shmem_calloc(SLOTS, sizeof(int));
  long *flag = shmem_calloc(1, sizeof(long));
  /* Open MPI 4.1.4's shmem_calloc zeroes the block after its barrier: this
   * barrier keeps the zeroing from overwriting other PEs' first writes. */
  shmem_barrier_all();
  shmem_ctx_t ctx, ctx2, ctx3;
  if (shmem_ctx_create(0, &ctx) != 0 || shmem_ctx_create(0, &ctx2) != 0 ||
      shmem_ctx_create(0, &ctx3) != 0) {
    fprintf(stderr, "race_free_shmem_ctx: shmem_ctx_create failed\n");
    shmem_global_exit(2);
  }

  int one = 1, two = 2, got[8];

  /* a */
  if (me == A) {
    shmem_ctx_int_put(ctx, &mem[1], &one, 1, T);
    shmem_ctx_quiet(ctx);
  }
  shmem_sync_all();
  if (me == B) shmem_int_put(&mem[1], &two, 1, T);
  end_phase(ctx, ctx2);

  /* b */
  if (me == A) {
    shmem_int_p(&mem[2], 1, T);
    shmem_quiet();
  }
  shmem_sync_all();
  if (me == B) shmem_int_get(&got[0], &mem[2], 1, T);
  end_phase(ctx, ctx2);

  /* d */
  if (me == A) {
    shmem_ctx_int_get_nbi(ctx, &got[1], &mem[4], 1, T);
    shmem_ctx_quiet(ctx);
  }
  shmem_sync_all();
  if (me == B) shmem_int_p(&mem[4], 2, T);
  end_phase(ctx, ctx2);

  /* Controls. */
  if (me == A) {
    shmem_ctx_int_p(ctx, &mem[0], 1, T);
    shmem_ctx_quiet(ctx);
    shmem_ctx_int_get(ctx, &got[2], &mem[3], 1, T);
    shmem_int_p(&mem[5], 1, T);
    shmem_ctx_quiet(SHMEM_CTX_DEFAULT);
  }
  shmem_sync_all();
  if (me == B) {
    shmem_int_p(&mem[0], 2, T);
    shmem_int_p(&mem[3], 2, T);
    shmem_int_p(&mem[5], 2, T);
  }
  end_phase(ctx, ctx2);

  /* One PE's own accesses. */
  if (me == A) {
    shmem_ctx_int_p(ctx, &mem[8], 1, T);
    shmem_ctx_quiet(ctx);
    got[3] = shmem_int_g(&mem[8], T);
    shmem_ctx_int_put(ctx, &mem[9], &one, 1, T);
    shmem_ctx_quiet(ctx);
    shmem_ctx_int_get(ctx2, &got[4], &mem[9], 1, T);
    shmem_ctx_int_p(ctx, &mem[10], 1, T);
    shmem_ctx_quiet(ctx);
    got[5] = shmem_int_g(&mem[10], T);
  }
  end_phase(ctx, ctx2);

  /* f, g, h */
  if (me == A) {
    shmem_ctx_int_put(ctx, &mem[6], &one, 1, T);
    shmem_ctx_quiet(ctx);
    shmem_ctx_int_put(ctx, &mem[6], &two, 1, T);
    shmem_ctx_int_put(ctx, &mem[7], &one, 1, T);
    shmem_ctx_fence(ctx);
    shmem_ctx_int_put(ctx, &mem[7], &two, 1, T);
    shmem_ctx_int_put(ctx, &mem[11], &one, 1, T);
    shmem_ctx_fence(ctx);
    shmem_ctx_int_put(ctx, &mem[11], &two, 1, T);
  }
  end_phase(ctx, ctx2);

  /* i */
  if (me == A) {
    shmem_ctx_int_put(ctx, &mem[12], &one, 1, T);
    shmem_ctx_fence(ctx);
    shmem_ctx_long_p(ctx, &flag[0], 1, T);
  }
  if (me == T) {
    shmem_long_wait_until(&flag[0], SHMEM_CMP_EQ, 1);
    shmem_int_get(&got[6], &mem[12], 1, T);
  }
  end_phase(ctx, ctx2);

  /* j */
  if (me == A) {
    shmem_ctx_int_p(ctx3, &mem[13], 1, T);
    shmem_ctx_destroy(ctx3);
  }
  shmem_sync_all();
  if (me == B) shmem_int_p(&mem[13], 2, T);
  end_phase(ctx, ctx2);

  if (me != A) shmem_ctx_destroy(ctx3);
  shmem_barrier_all();

  shmem_ctx_destroy(ctx2);
  shmem_ctx_destroy(ctx);
  shmem_free(flag);
  shmem_free(mem);
  shmem_finalize();
  return 0;
}
