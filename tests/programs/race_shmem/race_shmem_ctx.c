/* Communication contexts (shmem_ctx_create): shmem_ctx_quiet(ctx)
 * completes the puts, non-fetching atomics and non-blocking gets issued on
 * ctx and no others; shmem_quiet is shmem_ctx_quiet(SHMEM_CTX_DEFAULT).
 * In a, b and d the calls are ordered by shmem_sync_all, which completes
 * nothing:
 *
 *   a  A's shmem_ctx_int_put on ctx, shmem_quiet, sync, B's put;
 *   b  A's shmem_int_p (default context), shmem_ctx_quiet(ctx), sync,
 *      B's get;
 *   d  A's shmem_ctx_int_get_nbi on ctx, shmem_quiet, sync, B's p;
 *   c  A's shmem_ctx_int_p on ctx, shmem_quiet, then its own shmem_int_g;
 *   e  A's shmem_ctx_int_put on ctx, shmem_ctx_quiet(ctx2), then its
 *      shmem_ctx_int_get on ctx2;
 *   f  A's shmem_ctx_int_put on ctx, shmem_quiet, its second
 *      shmem_ctx_int_put on ctx to the same int (nothing completes or
 *      orders the first);
 *   g  A's shmem_ctx_int_put on ctx, shmem_fence (the default context's),
 *      its second shmem_ctx_int_put on ctx;
 *   h  A's shmem_ctx_int_put on ctx, shmem_ctx_fence(ctx), its
 *      shmem_int_put on the default context (a fence orders the writes of
 *      its own context only);
 *   i  A's shmem_ctx_int_put on ctx, shmem_ctx_fence(ctx), its shmem_long_p
 *      of T's flag on the default context; T waits for the flag and gets
 *      the int (the flag's delivery says nothing of ctx's put);
 *   j  A's shmem_ctx_int_p on ctx3, shmem_quiet, sync, B's p (ctx3's p is
 *      complete only when A destroys ctx3, at the end).
 * Unmarked controls: a p on ctx and shmem_ctx_quiet(ctx) before the
 * sync; a blocking shmem_ctx_int_get on ctx (complete when it returns);
 * a shmem_int_p and shmem_ctx_quiet(SHMEM_CTX_DEFAULT); A's own p on ctx,
 * shmem_ctx_quiet(ctx), g.
 *
 * Each PE calls shmem_ctx_quiet on its contexts before every
 * shmem_barrier_all, so that no access is left to a barrier to complete.
 * race_free_shmem_ctx.c quiets the context of each access (a, b, d, c, e,
 * f), fences the context of the two writes (g, h), writes the flag on ctx
 * (i) and destroys ctx3, which quiets it, before the sync (j).
 * PEs: A = 0 and B = 2 (1 with two PEs) access the symmetric heap of
 * T = 1; every PE creates the contexts and calls shmem_sync_all and the
 * barriers. */
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
    fprintf(stderr, "race_shmem_ctx: needs at least 2 PEs\n");
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
    fprintf(stderr, "race_shmem_ctx: shmem_ctx_create failed\n");
    shmem_global_exit(2);
  }

  int one = 1, two = 2, got[8];

  /* a */
  if (me == A) {
    shmem_ctx_int_put(ctx, &mem[1], &one, 1, T); /* race: a */
    shmem_quiet();
  }
  shmem_sync_all();
  if (me == B) shmem_int_put(&mem[1], &two, 1, T); /* race: a */
  end_phase(ctx, ctx2);

  /* b */
  if (me == A) {
    shmem_int_p(&mem[2], 1, T); /* race: b */
    shmem_ctx_quiet(ctx);
  }
  shmem_sync_all();
  if (me == B) shmem_int_get(&got[0], &mem[2], 1, T); /* race: b */
  end_phase(ctx, ctx2);

  /* d */
  if (me == A) {
    shmem_ctx_int_get_nbi(ctx, &got[1], &mem[4], 1, T); /* race: d */
    shmem_quiet();
  }
  shmem_sync_all();
  if (me == B) shmem_int_p(&mem[4], 2, T); /* race: d */
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
    shmem_ctx_int_p(ctx, &mem[8], 1, T); /* race: c */
    shmem_quiet();
    got[3] = shmem_int_g(&mem[8], T); /* race: c */
    shmem_ctx_int_put(ctx, &mem[9], &one, 1, T); /* race: e */
    shmem_ctx_quiet(ctx2);
    shmem_ctx_int_get(ctx2, &got[4], &mem[9], 1, T); /* race: e */
    shmem_ctx_int_p(ctx, &mem[10], 1, T);
    shmem_ctx_quiet(ctx);
    got[5] = shmem_int_g(&mem[10], T);
  }
  end_phase(ctx, ctx2);

  /* f, g, h */
  if (me == A) {
    shmem_ctx_int_put(ctx, &mem[6], &one, 1, T); /* race: f */
    shmem_quiet();
    shmem_ctx_int_put(ctx, &mem[6], &two, 1, T); /* race: f */
    shmem_ctx_int_put(ctx, &mem[7], &one, 1, T); /* race: g */
    shmem_fence();
    shmem_ctx_int_put(ctx, &mem[7], &two, 1, T); /* race: g */
    shmem_ctx_int_put(ctx, &mem[11], &one, 1, T); /* race: h */
    shmem_ctx_fence(ctx);
    shmem_int_put(&mem[11], &two, 1, T); /* race: h */
  }
  end_phase(ctx, ctx2);

  /* i */
  if (me == A) {
    shmem_ctx_int_put(ctx, &mem[12], &one, 1, T); /* race: i */
    shmem_ctx_fence(ctx);
    shmem_long_p(&flag[0], 1, T);
  }
  if (me == T) {
    shmem_long_wait_until(&flag[0], SHMEM_CMP_EQ, 1);
    shmem_int_get(&got[6], &mem[12], 1, T); /* race: i */
  }
  end_phase(ctx, ctx2);

  /* j */
  if (me == A) {
    shmem_ctx_int_p(ctx3, &mem[13], 1, T); /* race: j */
    shmem_quiet();
  }
  shmem_sync_all();
  if (me == B) shmem_int_p(&mem[13], 2, T); /* race: j */
  end_phase(ctx, ctx2);

  shmem_ctx_destroy(ctx3);
  shmem_barrier_all();

  shmem_ctx_destroy(ctx2);
  shmem_ctx_destroy(ctx);
  shmem_free(flag);
  shmem_free(mem);
  shmem_finalize();
  return 0;
}
