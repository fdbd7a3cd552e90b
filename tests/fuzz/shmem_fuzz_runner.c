/* Random OpenSHMEM programs for exactness testing: one interpreter of
 * random scripts, the OpenSHMEM counterpart of fuzz_runner.c.
 *
 *   vcx-shmem-fuzz-runner SEED ROUNDS
 *
 * Every PE derives the same script from SEED with the same generator and
 * draws every choice, also those that concern other PEs, so all PEs agree
 * on it without communicating. Each of the ROUNDS rounds is one to three
 * segments, each chosen so that it cannot deadlock and its clocks are
 * exact by the rules of docs/clock-rules.md:
 *
 *   barrier  one to four of shmem_barrier_all, shmem_sync_all and
 *            shmem_barrier / shmem_sync on random active sets (often the
 *            same set again, reusing its pSync as OpenSHMEM 1.4 allows for
 *            consecutive barriers on one set);
 *   coll     one to three collectives, each on the world or a random active
 *            set: broadcast32/64, collect32/64, fcollect32/64, a reduction
 *            (sum, prod, max, min, and, or, xor over int, long or double),
 *            alltoall32/64, alltoalls32/64; results checked;
 *   data     puts (p, put, put_nbi, put32/64, putmem, iput) into one bank of
 *            slots, non-fetching atomics (add, inc) and fetch_add into one
 *            accumulator per bank, to random PEs, then a barrier over
 *            every PE; then gets (g, get, get_nbi, iget, atomic_fetch) of
 *            what the barrier made visible; everything checked. Two banks
 *            alternate, so a bank is written again only after the next
 *            data segment's barrier, which every PE reaches only after
 *            reading it;
 *   lock     random PEs take one of three locks on the symmetric heap
 *            with shmem_set_lock or a shmem_test_lock
 *            loop, and increment the lock's counter at its home PE with a
 *            get and a put; shmem_gt.c measures the real lock order;
 *   token    a token passed along a random chain of PEs (repeats and
 *            self-passes allowed) through each PE's token flag of the
 *            segment (short, int or long): the holder writes the next
 *            holder's flag (p, put of one element, put_nbi, putN, putmem,
 *            atomic set and swap, compare-and-swap, legacy and context forms),
 *            which waits for it (wait_until EQ, GE or NE, the legacy wait,
 *            a test loop). The flag carries the number of times its PE
 *            received the token, or always 1 and the PE resets it to 0 with
 *            a plain store before passing the token on: each write is
 *            waited for once and the next write to a flag follows its
 *            wait (docs/clock-rules.md, "a flag written once per wait");
 *   pairs    random writer -> waiter pairs, each with a flag of its own
 *            (int or long) written once; every PE makes all of its writes,
 *            some after a failed compare-and-swap and some after data put
 *            before a shmem_fence, then waits for its incoming flags in a
 *            random order;
 *   counter  one or two counters, each at a random PE: random PEs step it
 *            all up (fetch_add, fetch_inc, fadd, finc, context fetch_add)
 *            or all down (fetch_add with a negative increment), the owner
 *            waits for the final value ("a counter");
 *   annot    random writer -> poller pairs synchronised through a flag that
 *            the poller polls with shmem_long_g (not a wait for vcx), made
 *            visible with vcx/annotate_shmem.h: a process signal before
 *            the flag and a process wait after the poll, or a resource
 *            deposit before and one resource wait after every incoming
 *            flag of the segment (the fetch's `seen` is exactly the
 *            deposits made before it).
 *
 * Why nothing deadlocks: every PE does its part of the script in script
 * order, and each blocking call waits only for calls placed at or before
 * it in that order (a collective for its members at the same place, a
 * flag wait for a write placed before it, a lock for a holder whose
 * critical section blocks on nothing). pSync arrays (and the work and
 * data buffers that go with them) are used by one collective each until a
 * shmem_barrier_all, which the script inserts when none is free; only
 * barriers and syncs on the set that used one last may take it again.
 * Every flag slot belongs to one segment, so no write of a later segment
 * can reach a flag before its wait.
 *
 * The ground truth goes through tests/programs/shmem_gt.c like the fixed
 * OpenSHMEM programs: collectives with their sets, lock counts, flag
 * writes and waits with their modification order (known by construction:
 * the number of the write, a counter's value), annotations. Each PE prints
 * a digest of everything it checked, the same with and without vcx.
 *
 * Open MPI 4.1.4 (UCX) defects the script keeps clear of:
 *   - compare-and-swap only on long: the 4-byte one writes 8 bytes into
 *     its result and smashes the caller's stack;
 *   - no fetching bitwise atomics: shmem_long_atomic_fetch_xor stores 0,
 *     fetch_or and fetch_and store nothing (they fetch correctly);
 *   - a remote operation on static symmetric memory (a lock variable,
 *     shmem_gt.c's default lock counters) completes only while the target
 *     PE is in a call that progresses (wait_until, a collective), not
 *     while it spins on shmem_TYPE_test or shmem_TYPE_g; so locks and
 *     lock counters live on the symmetric heap (sgt_lock_counters), and
 *     static memory (pSync, reduction work arrays) is touched only by
 *     collectives its PE is in. */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_rng.h"
#include "shmem_gt.h"
#include "vcx/annotate_shmem.h"

#define MAX_PES 8
#define MAX_ROUNDS 1000
#define SEGS_PER_ROUND 3
#define NPSYNC 12 /* pSync arrays, each with its work and data buffers */
#define SYNC_LEN                                                                   \
  (SHMEM_BARRIER_SYNC_SIZE + SHMEM_BCAST_SYNC_SIZE + SHMEM_COLLECT_SYNC_SIZE +     \
   SHMEM_REDUCE_SYNC_SIZE + SHMEM_ALLTOALL_SYNC_SIZE + SHMEM_ALLTOALLS_SYNC_SIZE)
#define WRK_LEN (SHMEM_REDUCE_MIN_WRKDATA_SIZE + 8)
#define CBUF 64 /* elements per collective buffer */
#define SLOTW 8 /* longs per data slot */
#define PUBW 16 /* longs of the constant array every PE publishes */
#define NLOCKS 3
#define NQUEUES 4

static int me, n;
static unsigned long digest;

static void fail(const char *what, long long got, long long want) {
  fprintf(stderr, "vcx-shmem-fuzz-runner: PE %d: %s: got %lld, expected %lld\n", me, what, got,
          want);
  shmem_global_exit(99);
}

static void check(const char *what, long long got, long long want) {
  if (got != want) fail(what, got, want);
  digest = digest * 1000003ul + (unsigned long)got;
}

/* A value that depends on its arguments only: what a PE contributes. */
static long val(long a, long b, long c) {
  uint64_t z = (uint64_t)a * 0x9e3779b97f4a7c15ull ^ (uint64_t)b * 0xbf58476d1ce4e5b9ull ^
               (uint64_t)c * 0x94d049bb133111ebull;
  z ^= z >> 29;
  return (long)(z % 997) + 1;
}

/* ---- Symmetric memory ----------------------------------------------------- */

static long psync[NPSYNC][SYNC_LEN]; /* static: symmetric */
static int iwrk[NPSYNC][WRK_LEN];
static long lwrk[NPSYNC][WRK_LEN];
static double dwrk[NPSYNC][WRK_LEN];

/* Collective buffers, CBUF elements per pSync. */
static long *cl_src, *cl_dst;
static int *ci_src, *ci_dst;
static double *cd_src, *cd_dst;
/* Data segments: slots[bank][writer][SLOTW], acc[bank], pub[PUBW]. */
static long *slots, *acc, *pub;
/* The locks, their counters at their home PEs, shmem_gt.c's lock counters. */
static long *lock_heap, *lock_ctr, *gt_lock_ctr;
/* Per segment: token flags and data, pair flags and data (per writer),
 * counters (two per segment), polled flags and data (per writer). */
static short *tok_s;
static int *tok_i;
static long *tok_l, *tok_data;
static int *pair_i;
static long *pair_l, *pair_data;
static long *cnt;
static long *poll_f, *poll_data;

static void *sym_calloc(size_t count, size_t size) {
  void *p = shmem_calloc(count, size);
  sgt_world("shmem_calloc");
  if (!p) fail("shmem_calloc returned null", 0, 1);
  return p;
}

static void sym_free(void *p) {
  shmem_free(p);
  sgt_world("shmem_free");
}

/* ---- Active sets and pSync ------------------------------------------------ */

typedef struct {
  int start, stride, size;
} aset;

static aset world_set(void) {
  aset s = {0, 0, n};
  return s;
}

static aset random_set(void) {
  if (chance(30)) return world_set();
  aset s;
  s.stride = pick(3);
  s.start = pick(n);
  const int max = ((n - 1 - s.start) >> s.stride) + 1;
  s.size = (max >= 2 && chance(85)) ? 2 + pick(max - 1) : 1 + pick(max);
  return s;
}

static int same_set(aset a, aset b) {
  return a.start == b.start && a.stride == b.stride && a.size == b.size;
}

static int member(aset s) { return sgt_in_set(me, s.start, s.stride, s.size); }
static int member_pe(aset s, int i) { return s.start + (i << s.stride); }
static int member_index(aset s, int pe) { return (pe - s.start) >> s.stride; }

/* What each pSync array was used for since the last shmem_barrier_all. */
static struct {
  int used, barrier; /* barrier: by a shmem_barrier or shmem_sync only */
  aset set;
} ps[NPSYNC];

static void barrier_all(void) {
  shmem_barrier_all();
  sgt_world("shmem_barrier_all");
  /* Every PE is done with every earlier collective: all pSyncs are free. */
  memset(ps, 0, sizeof ps);
}

/* The pSync (and buffers) for a collective on `s`, chosen by every PE
 * alike, members or not. A free one, or for a barrier or sync the one the
 * last barrier or sync on the same set used (OpenSHMEM 1.4: consecutive
 * barriers on one active set may reuse their pSync). With none, a
 * shmem_barrier_all first frees them all. */
static int take_psync(int is_barrier, aset s) {
  int cand[NPSYNC], nc = 0, reuse = -1;
  for (int i = 0; i < NPSYNC; ++i) {
    if (!ps[i].used) cand[nc++] = i;
    else if (is_barrier && ps[i].barrier && same_set(ps[i].set, s)) reuse = i;
  }
  int p;
  if (reuse >= 0 && (nc == 0 || chance(70))) {
    p = reuse;
  } else {
    if (nc == 0) {
      barrier_all();
      for (int i = 0; i < NPSYNC; ++i) cand[nc++] = i;
    }
    p = cand[pick(nc)];
  }
  ps[p].used = 1;
  ps[p].barrier = is_barrier;
  ps[p].set = s;
  return p;
}

/* ---- Segment: barriers ---------------------------------------------------- */

static void set_barrier(int sync, aset s) {
  const int p = take_psync(1, s);
  if (!member(s)) return;
  if (sync) {
    shmem_sync(s.start, s.stride, s.size, psync[p]);
    sgt_set("shmem_sync", s.start, s.stride, s.size);
  } else {
    shmem_barrier(s.start, s.stride, s.size, psync[p]);
    sgt_set("shmem_barrier", s.start, s.stride, s.size);
  }
}

static void seg_barrier(void) {
  const int ops = 1 + pick(4);
  aset last = world_set();
  int have_last = 0;
  for (int k = 0; k < ops; ++k) {
    const int kind = pick(100);
    if (kind < 20) {
      barrier_all();
    } else if (kind < 35) {
      shmem_sync_all();
      sgt_world("shmem_sync_all");
    } else {
      const aset s = (have_last && chance(50)) ? last : random_set();
      last = s;
      have_last = 1;
      set_barrier(chance(50), s);
    }
  }
}

/* ---- Segment: collectives ------------------------------------------------- */

static long opid; /* numbers every collective and data segment */

static void coll_bcast(aset s) {
  const int wide = chance(50), ne = 1 + pick(4), root = pick(s.size);
  const int p = take_psync(0, s);
  const long t = ++opid;
  if (!member(s)) return;
  const int rpe = member_pe(s, root);
  if (wide) {
    long *src = cl_src + p * CBUF, *dst = cl_dst + p * CBUF;
    for (int i = 0; i < ne; ++i) src[i] = val(t, me, i);
    shmem_broadcast64(dst, src, (size_t)ne, root, s.start, s.stride, s.size, psync[p]);
    sgt_bcast("shmem_broadcast64", root, s.start, s.stride, s.size);
    if (me != rpe)
      for (int i = 0; i < ne; ++i) check("broadcast64", dst[i], val(t, rpe, i));
  } else {
    int *src = ci_src + p * CBUF, *dst = ci_dst + p * CBUF;
    for (int i = 0; i < ne; ++i) src[i] = (int)val(t, me, i);
    shmem_broadcast32(dst, src, (size_t)ne, root, s.start, s.stride, s.size, psync[p]);
    sgt_bcast("shmem_broadcast32", root, s.start, s.stride, s.size);
    if (me != rpe)
      for (int i = 0; i < ne; ++i) check("broadcast32", dst[i], val(t, rpe, i));
  }
}

static void coll_collect(aset s) {
  const int wide = chance(50), fixed = chance(50);
  int ne[MAX_PES];
  const int ne0 = 1 + pick(3);
  for (int m = 0; m < s.size; ++m) ne[m] = fixed ? ne0 : 1 + pick(3);
  const int p = take_psync(0, s);
  const long t = ++opid;
  if (!member(s)) return;
  const int mi = member_index(s, me);
  const char *name = fixed ? (wide ? "shmem_fcollect64" : "shmem_fcollect32")
                           : (wide ? "shmem_collect64" : "shmem_collect32");
  long *lsrc = cl_src + p * CBUF, *ldst = cl_dst + p * CBUF;
  int *isrc = ci_src + p * CBUF, *idst = ci_dst + p * CBUF;
  for (int i = 0; i < ne[mi]; ++i) {
    lsrc[i] = val(t, me, i);
    isrc[i] = (int)val(t, me, i);
  }
  if (fixed && wide)
    shmem_fcollect64(ldst, lsrc, (size_t)ne0, s.start, s.stride, s.size, psync[p]);
  else if (fixed)
    shmem_fcollect32(idst, isrc, (size_t)ne0, s.start, s.stride, s.size, psync[p]);
  else if (wide)
    shmem_collect64(ldst, lsrc, (size_t)ne[mi], s.start, s.stride, s.size, psync[p]);
  else
    shmem_collect32(idst, isrc, (size_t)ne[mi], s.start, s.stride, s.size, psync[p]);
  sgt_set(name, s.start, s.stride, s.size);
  int at = 0;
  for (int m = 0; m < s.size; ++m)
    for (int i = 0; i < ne[m]; ++i, ++at)
      check(name, wide ? ldst[at] : idst[at], val(t, member_pe(s, m), i));
}

enum { R_INT_SUM, R_INT_PROD, R_LONG_SUM, R_LONG_MAX, R_LONG_MIN, R_LONG_AND, R_LONG_OR,
       R_LONG_XOR, R_DOUBLE_SUM, R_KINDS };

static long reduce_in(int kind, long t, int pe, int i) {
  const long v = val(t, pe, i);
  return kind == R_INT_PROD ? 1 + v % 3 : v;
}

static void coll_reduce(aset s) {
  const int kind = pick(R_KINDS), nr = 1 + pick(3);
  const int p = take_psync(0, s);
  const long t = ++opid;
  if (!member(s)) return;
  long *lsrc = cl_src + p * CBUF, *ldst = cl_dst + p * CBUF;
  int *isrc = ci_src + p * CBUF, *idst = ci_dst + p * CBUF;
  double *dsrc = cd_src + p * CBUF, *ddst = cd_dst + p * CBUF;
  for (int i = 0; i < nr; ++i) {
    lsrc[i] = reduce_in(kind, t, me, i);
    isrc[i] = (int)lsrc[i];
    dsrc[i] = (double)lsrc[i];
  }
  const char *name = "";
  switch (kind) {
    case R_INT_SUM:
      shmem_int_sum_to_all(idst, isrc, nr, s.start, s.stride, s.size, iwrk[p], psync[p]);
      name = "shmem_int_sum_to_all";
      break;
    case R_INT_PROD:
      shmem_int_prod_to_all(idst, isrc, nr, s.start, s.stride, s.size, iwrk[p], psync[p]);
      name = "shmem_int_prod_to_all";
      break;
    case R_LONG_SUM:
      shmem_long_sum_to_all(ldst, lsrc, nr, s.start, s.stride, s.size, lwrk[p], psync[p]);
      name = "shmem_long_sum_to_all";
      break;
    case R_LONG_MAX:
      shmem_long_max_to_all(ldst, lsrc, nr, s.start, s.stride, s.size, lwrk[p], psync[p]);
      name = "shmem_long_max_to_all";
      break;
    case R_LONG_MIN:
      shmem_long_min_to_all(ldst, lsrc, nr, s.start, s.stride, s.size, lwrk[p], psync[p]);
      name = "shmem_long_min_to_all";
      break;
    case R_LONG_AND:
      shmem_long_and_to_all(ldst, lsrc, nr, s.start, s.stride, s.size, lwrk[p], psync[p]);
      name = "shmem_long_and_to_all";
      break;
    case R_LONG_OR:
      shmem_long_or_to_all(ldst, lsrc, nr, s.start, s.stride, s.size, lwrk[p], psync[p]);
      name = "shmem_long_or_to_all";
      break;
    case R_LONG_XOR:
      shmem_long_xor_to_all(ldst, lsrc, nr, s.start, s.stride, s.size, lwrk[p], psync[p]);
      name = "shmem_long_xor_to_all";
      break;
    default:
      shmem_double_sum_to_all(ddst, dsrc, nr, s.start, s.stride, s.size, dwrk[p], psync[p]);
      name = "shmem_double_sum_to_all";
      break;
  }
  sgt_set(name, s.start, s.stride, s.size);
  for (int i = 0; i < nr; ++i) {
    long want = reduce_in(kind, t, s.start, i);
    for (int m = 1; m < s.size; ++m) {
      const long v = reduce_in(kind, t, member_pe(s, m), i);
      switch (kind) {
        case R_INT_PROD: want *= v; break;
        case R_LONG_MAX: want = v > want ? v : want; break;
        case R_LONG_MIN: want = v < want ? v : want; break;
        case R_LONG_AND: want &= v; break;
        case R_LONG_OR: want |= v; break;
        case R_LONG_XOR: want ^= v; break;
        default: want += v; break;
      }
    }
    long got = kind <= R_INT_PROD ? idst[i] : kind == R_DOUBLE_SUM ? (long)ddst[i] : ldst[i];
    check(name, got, want);
  }
}

static void coll_alltoall(aset s) {
  const int wide = chance(50), strided = chance(40), ne = 1 + pick(2);
  const int sst = strided ? 1 + pick(2) : 1, dst = strided ? 1 + pick(2) : 1;
  const int p = take_psync(0, s);
  const long t = ++opid;
  if (!member(s)) return;
  const int mi = member_index(s, me);
  long *lsrc = cl_src + p * CBUF, *ldst = cl_dst + p * CBUF;
  int *isrc = ci_src + p * CBUF, *idst = ci_dst + p * CBUF;
  for (int j = 0; j < s.size; ++j)
    for (int e = 0; e < ne; ++e) {
      const int k = j * ne + e;
      lsrc[k * sst] = val(t, me, k);
      isrc[k * sst] = (int)val(t, me, k);
    }
  const char *name;
  if (strided) {
    name = wide ? "shmem_alltoalls64" : "shmem_alltoalls32";
    if (wide)
      shmem_alltoalls64(ldst, lsrc, dst, sst, (size_t)ne, s.start, s.stride, s.size, psync[p]);
    else
      shmem_alltoalls32(idst, isrc, dst, sst, (size_t)ne, s.start, s.stride, s.size, psync[p]);
  } else {
    name = wide ? "shmem_alltoall64" : "shmem_alltoall32";
    if (wide)
      shmem_alltoall64(ldst, lsrc, (size_t)ne, s.start, s.stride, s.size, psync[p]);
    else
      shmem_alltoall32(idst, isrc, (size_t)ne, s.start, s.stride, s.size, psync[p]);
  }
  sgt_set(name, s.start, s.stride, s.size);
  for (int m = 0; m < s.size; ++m)
    for (int e = 0; e < ne; ++e) {
      const int at = (m * ne + e) * dst;
      check(name, wide ? ldst[at] : idst[at], val(t, member_pe(s, m), mi * ne + e));
    }
}

static void seg_coll(void) {
  const int ops = 1 + pick(3);
  for (int k = 0; k < ops; ++k) {
    const aset s = random_set();
    switch (pick(6)) {
      case 0: set_barrier(chance(50), s); break;
      case 1: coll_bcast(s); break;
      case 2: coll_collect(s); break;
      case 3: coll_reduce(s); break;
      default: coll_alltoall(s); break;
    }
  }
}

/* ---- Segment: data movement ----------------------------------------------- */

static long dsegs;                    /* data segments so far */
static long acc_expect[2][MAX_PES];   /* accumulator of each bank at each PE */

static long dval(long d, int w, int x, int i) { return val(d * 64 + w, x, i) + 1000 * i; }

static void seg_data(void) {
  const long d = dsegs++;
  const int b = (int)(d % 2);
  long *bank = slots + (size_t)b * MAX_PES * SLOTW;
  /* writes[w][x]: method + 1 (0: none), len */
  int how[MAX_PES][MAX_PES], len[MAX_PES][MAX_PES];
  for (int w = 0; w < n; ++w)
    for (int x = 0; x < n; ++x) {
      how[w][x] = chance(50) ? 1 + pick(7) : 0;
      len[w][x] = how[w][x] == 7 ? 1 + pick(SLOTW / 2) : 1 + pick(SLOTW);
    }
  for (int x = 0; x < n; ++x) {
    const int m = how[me][x];
    if (!m) continue;
    long *target = bank + (size_t)me * SLOTW;
    long src[SLOTW];
    for (int i = 0; i < SLOTW; ++i) src[i] = dval(d, me, x, i);
    const size_t l = (size_t)len[me][x];
    switch (m) {
      case 1: shmem_long_put(target, src, l, x); break;
      case 2: shmem_long_put_nbi(target, src, l, x); shmem_quiet(); break;
      case 3: shmem_put64(target, src, l, x); break;
      case 4: shmem_putmem(target, src, l * sizeof(long), x); break;
      case 5:
        for (size_t i = 0; i < l; ++i) shmem_long_p(&target[i], src[i], x);
        break;
      case 6: shmem_ctx_long_put(SHMEM_CTX_DEFAULT, target, src, l, x); break;
      default: shmem_long_iput(target, src, 2, 1, l, x); break;
    }
  }
  /* Atomics on the bank's accumulators. */
  for (int w = 0; w < n; ++w) {
    const int k = pick(3);
    for (int a = 0; a < k; ++a) {
      const int x = pick(n), op = pick(4);
      const long inc = op == 1 ? 1 : 1 + pick(5);
      acc_expect[b][x] += inc;
      if (w != me) continue;
      switch (op) {
        case 0: shmem_long_atomic_add(&acc[b], inc, x); break;
        case 1: shmem_long_atomic_inc(&acc[b], x); break;
        case 2: (void)shmem_long_atomic_fetch_add(&acc[b], inc, x); break;
        default: shmem_ctx_long_atomic_add(SHMEM_CTX_DEFAULT, &acc[b], inc, x); break;
      }
    }
  }
  /* A barrier over every PE completes and orders all of it. */
  if (chance(50)) {
    barrier_all();
  } else {
    shmem_quiet();
    set_barrier(0, world_set());
  }
  for (int w = 0; w < n; ++w) {
    const int m = how[w][me];
    if (!m) continue;
    const long *got = bank + (size_t)w * SLOTW;
    for (int i = 0; i < len[w][me]; ++i)
      check("data put", got[m == 7 ? 2 * i : i], dval(d, w, me, i));
  }
  check("accumulator", *(volatile long *)&acc[b], acc_expect[b][me]);
  /* Gets of what the barrier made visible. */
  for (int r = 0; r < n; ++r) {
    const int k = pick(3);
    for (int a = 0; a < k; ++a) {
      const int x = pick(n), op = pick(6), i = pick(PUBW / 2);
      int w = pick(n);
      if (r != me) continue;
      long got[PUBW];
      switch (op) {
        case 0:
          check("g", shmem_long_g(&pub[i], x), 100000L * x + i);
          break;
        case 1:
          shmem_long_get(got, &pub[i], 4, x);
          for (int j = 0; j < 4; ++j) check("get", got[j], 100000L * x + i + j);
          break;
        case 2:
          shmem_long_get_nbi(got, &pub[i], 3, x);
          shmem_quiet();
          for (int j = 0; j < 3; ++j) check("get_nbi", got[j], 100000L * x + i + j);
          break;
        case 3:
          shmem_long_iget(got, &pub[i], 1, 2, 4, x);
          for (int j = 0; j < 4; ++j) check("iget", got[j], 100000L * x + i + 2 * j);
          break;
        case 4:
          check("atomic_fetch", shmem_long_atomic_fetch(&acc[b], x), acc_expect[b][x]);
          break;
        default: {
          /* A slot that some PE wrote to x in this segment, if any. */
          int found = -1;
          for (int j = 0; j < n && found < 0; ++j)
            if (how[(w + j) % n][x]) found = (w + j) % n;
          if (found < 0) break;
          w = found;
          const int l = len[w][x], strided = how[w][x] == 7;
          shmem_long_get(got, bank + (size_t)w * SLOTW, strided ? 2 * l - 1 : l, x);
          for (int j = 0; j < l; ++j)
            check("get of a put", got[strided ? 2 * j : j], dval(d, w, x, j));
          break;
        }
      }
    }
  }
}

/* ---- Segment: locks ------------------------------------------------------- */

static long lock_expect[NLOCKS];

static void seg_lock(void) {
  for (int r = 0; r < n; ++r) {
    const int takes = chance(60) ? 1 + pick(2) : 0;
    for (int k = 0; k < takes; ++k) {
      const int id = pick(NLOCKS), how = pick(2), rmw = pick(2);
      ++lock_expect[id];
      if (r != me) continue;
      long *lock = &lock_heap[id];
      if (how == 0) {
        sgt_set_lock(lock, id);
      } else {
        int tries = 0;
        while (sgt_test_lock(lock, id) != 0)
          if (++tries == 200) {
            sgt_set_lock(lock, id);
            break;
          }
      }
      /* A read-modify-write that only the lock keeps correct. */
      const int home = id % n;
      long v;
      if (rmw == 0) {
        v = shmem_long_g(&lock_ctr[id], home);
        shmem_long_p(&lock_ctr[id], v + 1, home);
      } else {
        shmem_long_get(&v, &lock_ctr[id], 1, home);
        ++v;
        shmem_long_put(&lock_ctr[id], &v, 1, home);
      }
      shmem_quiet();
      sgt_clear_lock(lock, id);
    }
  }
}

/* ---- Flags: writes and waits ---------------------------------------------- */

enum { T_SHORT, T_INT, T_LONG };

/* Write `value` into the flag at PE pe (its value there is `prev`, known to
 * the script), with write method `how` of the type, and log it. */
static void flag_write(int type, void *flag, int pe, int how, long value, long prev,
                       const char *name, long order) {
  const char *call = "";
  if (type == T_SHORT) {
    short *f = flag, v = (short)value;
    switch (how % 4) {
      case 0: shmem_short_p(f, v, pe); call = "shmem_short_p"; break;
      case 1: shmem_short_put(f, &v, 1, pe); call = "shmem_short_put"; break;
      case 2: shmem_put16(f, &v, 1, pe); call = "shmem_put16"; break;
      default: shmem_putmem(f, &v, sizeof v, pe); call = "shmem_putmem"; break;
    }
  } else if (type == T_INT) {
    int *f = flag, v = (int)value;
    switch (how % 6) {
      case 0: shmem_int_p(f, v, pe); call = "shmem_int_p"; break;
      case 1: shmem_int_put(f, &v, 1, pe); call = "shmem_int_put"; break;
      case 2:
        shmem_int_put_nbi(f, &v, 1, pe);
        shmem_quiet();
        call = "shmem_int_put_nbi";
        break;
      case 3: shmem_put32(f, &v, 1, pe); call = "shmem_put32"; break;
      case 4: shmem_putmem(f, &v, sizeof v, pe); call = "shmem_putmem"; break;
      default: shmem_ctx_int_p(SHMEM_CTX_DEFAULT, f, v, pe); call = "shmem_ctx_int_p"; break;
    }
  } else {
    long *f = flag, v = value;
    switch (how % 12) {
      case 0: shmem_long_p(f, v, pe); call = "shmem_long_p"; break;
      case 1: shmem_long_put(f, &v, 1, pe); call = "shmem_long_put"; break;
      case 2:
        shmem_long_put_nbi(f, &v, 1, pe);
        shmem_quiet();
        call = "shmem_long_put_nbi";
        break;
      case 3: shmem_put64(f, &v, 1, pe); call = "shmem_put64"; break;
      case 4: shmem_putmem(f, &v, sizeof v, pe); call = "shmem_putmem"; break;
      case 5: shmem_long_atomic_set(f, v, pe); call = "shmem_long_atomic_set"; break;
      case 6:
        check("swap", shmem_long_atomic_swap(f, v, pe), prev);
        call = "shmem_long_atomic_swap";
        break;
      case 7:
        check("compare_swap", shmem_long_atomic_compare_swap(f, prev, v, pe), prev);
        call = "shmem_long_atomic_compare_swap";
        break;
      case 8:
        check("cswap", shmem_long_cswap(f, prev, v, pe), prev);
        call = "shmem_long_cswap";
        break;
      case 9: shmem_long_set(f, v, pe); call = "shmem_long_set"; break;
      case 10:
        check("swap", shmem_long_swap(f, v, pe), prev);
        call = "shmem_long_swap";
        break;
      default:
        shmem_ctx_long_atomic_set(SHMEM_CTX_DEFAULT, f, v, pe);
        call = "shmem_ctx_long_atomic_set";
        break;
    }
  }
  sgt_flag_write(call, name, pe, "store", value, order);
}

/* A compare-and-swap that fails (the flag holds `prev`, not prev + 1000):
 * it stores nothing. Long flags only. */
static void flag_failed_cswap(long *flag, int pe, long prev, const char *name) {
  check("failed compare_swap", shmem_long_atomic_compare_swap(flag, prev + 1000, 7, pe), prev);
  sgt_flag_write("shmem_long_atomic_compare_swap", name, pe, "none", 7, 0);
}

/* Wait on this PE's flag until it holds `value` (it holds `prev` or, after
 * the one write waited for, `value`; prev < value), with wait method `how`,
 * and log it with the order of that write. */
static void flag_wait(int type, void *flag, int how, long value, long prev, const char *name,
                      long order) {
  const char *call = "";
  long got = 0;
  long tests = 0;
  if (type == T_SHORT) {
    short *f = flag;
    switch (how % 5) {
      case 0: shmem_short_wait_until(f, SHMEM_CMP_EQ, (short)value); call = "shmem_short_wait_until"; break;
      case 1: shmem_short_wait_until(f, SHMEM_CMP_GE, (short)value); call = "shmem_short_wait_until"; break;
      case 2: shmem_short_wait_until(f, SHMEM_CMP_NE, (short)prev); call = "shmem_short_wait_until"; break;
      case 3: shmem_short_wait(f, (short)prev); call = "shmem_short_wait"; break;
      default:
        while (!shmem_short_test(f, SHMEM_CMP_EQ, (short)value)) {
          sgt_unclocked("shmem_short_test");
          if (++tests > 100) usleep(50);
        }
        call = "shmem_short_test";
        break;
    }
    got = *(volatile short *)f;
  } else if (type == T_INT) {
    int *f = flag;
    switch (how % 5) {
      case 0: shmem_int_wait_until(f, SHMEM_CMP_EQ, (int)value); call = "shmem_int_wait_until"; break;
      case 1: shmem_int_wait_until(f, SHMEM_CMP_GT, (int)prev); call = "shmem_int_wait_until"; break;
      case 2: shmem_int_wait_until(f, SHMEM_CMP_NE, (int)prev); call = "shmem_int_wait_until"; break;
      case 3: shmem_int_wait(f, (int)prev); call = "shmem_int_wait"; break;
      default:
        while (!shmem_int_test(f, SHMEM_CMP_GE, (int)value)) {
          sgt_unclocked("shmem_int_test");
          if (++tests > 100) usleep(50);
        }
        call = "shmem_int_test";
        break;
    }
    got = *(volatile int *)f;
  } else {
    long *f = flag;
    switch (how % 6) {
      case 0: shmem_long_wait_until(f, SHMEM_CMP_EQ, value); call = "shmem_long_wait_until"; break;
      case 1: shmem_long_wait_until(f, SHMEM_CMP_GE, value); call = "shmem_long_wait_until"; break;
      case 2: shmem_long_wait_until(f, SHMEM_CMP_NE, prev); call = "shmem_long_wait_until"; break;
      case 3: shmem_long_wait(f, prev); call = "shmem_long_wait"; break;
      case 4: shmem_wait(f, prev); call = "shmem_wait"; break;
      default:
        while (!shmem_long_test(f, SHMEM_CMP_EQ, value)) {
          sgt_unclocked("shmem_long_test");
          if (++tests > 100) usleep(50);
        }
        call = "shmem_long_test";
        break;
    }
    got = *(volatile long *)f;
  }
  sgt_flag_wait(call, name, got, order);
  check(name, got, value);
}

static void *flag_at(int type, long index) {
  if (type == T_SHORT) return &tok_s[index];
  if (type == T_INT) return &tok_i[index];
  return &tok_l[index];
}

/* ---- Segment: a token chain ----------------------------------------------- */

static void seg_token(long seg) {
  const int type = pick(3), reset = chance(30), hops = 1 + pick(2 * n);
  int holder = pick(n);
  int received[MAX_PES] = {0};
  char name[48];
  snprintf(name, sizeof name, "tok.%ld", seg);
  void *flag = flag_at(type, seg);
  for (int h = 0; h < hops; ++h) {
    const int next = pick(n), wr = pick(12), wt = pick(6), with_data = chance(30),
              failed_cswap = type == T_LONG && chance(15);
    const long order = ++received[next];
    const long value = reset ? 1 : order, prev = reset ? 0 : order - 1;
    if (me == holder) {
      if (with_data) {
        const long v = val(seg, h, 77);
        shmem_long_put(&tok_data[seg], &v, 1, next);
        shmem_fence();
      }
      if (failed_cswap) flag_failed_cswap(flag, next, prev, name);
      flag_write(type, flag, next, wr, value, prev, name, order);
    }
    if (me == next) {
      flag_wait(type, flag, wt, value, prev, name, order);
      if (with_data) check("token data", *(volatile long *)&tok_data[seg], val(seg, h, 77));
      if (reset) {
        if (type == T_SHORT) *(volatile short *)flag = 0;
        else if (type == T_INT) *(volatile int *)flag = 0;
        else *(volatile long *)flag = 0;
      }
    }
    holder = next;
  }
}

/* ---- Segment: writer -> waiter pairs -------------------------------------- */

static void seg_pairs(long seg) {
  int how[MAX_PES][MAX_PES];   /* write method + 1, 0: no pair */
  int type[MAX_PES][MAX_PES], wt[MAX_PES][MAX_PES], data[MAX_PES][MAX_PES];
  int fails[MAX_PES][MAX_PES];
  long value[MAX_PES][MAX_PES];
  for (int w = 0; w < n; ++w)
    for (int x = 0; x < n; ++x) {
      how[w][x] = chance(35) ? 1 + pick(12) : 0;
      type[w][x] = chance(50) ? T_LONG : T_INT;
      wt[w][x] = pick(6);
      data[w][x] = chance(30);
      fails[w][x] = type[w][x] == T_LONG && chance(20);
      value[w][x] = 1 + pick(1000);
    }
  int order[MAX_PES][MAX_PES]; /* each waiter's order of its writers */
  for (int x = 0; x < n; ++x) {
    for (int i = 0; i < n; ++i) order[x][i] = i;
    for (int i = n - 1; i > 0; --i) {
      const int j = pick(i + 1), t = order[x][i];
      order[x][i] = order[x][j];
      order[x][j] = t;
    }
  }
  char name[48];
  for (int x = 0; x < n; ++x) {
    if (!how[me][x]) continue;
    const long at = seg * MAX_PES + me;
    snprintf(name, sizeof name, "pair.%ld.%d", seg, me);
    if (data[me][x]) {
      const long v = val(seg, me, x);
      shmem_long_put(&pair_data[at], &v, 1, x);
      shmem_fence();
    }
    void *flag = type[me][x] == T_LONG ? (void *)&pair_l[at] : (void *)&pair_i[at];
    if (fails[me][x]) flag_failed_cswap(flag, x, 0, name);
    flag_write(type[me][x], flag, x, how[me][x] - 1, value[me][x], 0, name, 1);
  }
  for (int i = 0; i < n; ++i) {
    const int w = order[me][i];
    if (!how[w][me]) continue;
    const long at = seg * MAX_PES + w;
    snprintf(name, sizeof name, "pair.%ld.%d", seg, w);
    void *flag = type[w][me] == T_LONG ? (void *)&pair_l[at] : (void *)&pair_i[at];
    flag_wait(type[w][me], flag, wt[w][me], value[w][me], 0, name, 1);
    if (data[w][me]) check("pair data", *(volatile long *)&pair_data[at], val(seg, w, me));
  }
}

/* ---- Segment: counters ---------------------------------------------------- */

static void seg_counter(long seg) {
  const int ncounters = 1 + pick(2);
  int target[2], down[2];
  long total[2];
  int steps[2][MAX_PES][3], methods[2][MAX_PES][3], nsteps[2][MAX_PES];
  for (int c = 0; c < ncounters; ++c) {
    target[c] = pick(n);
    down[c] = chance(40);
    total[c] = 0;
    for (int r = 0; r < n; ++r) {
      nsteps[c][r] = chance(60) ? 1 + pick(3) : 0;
      for (int k = 0; k < nsteps[c][r]; ++k) {
        methods[c][r][k] = pick(5);
        const int unit = !down[c] && (methods[c][r][k] == 1 || methods[c][r][k] == 3);
        steps[c][r][k] = unit ? 1 : 1 + pick(3);
        total[c] += steps[c][r][k];
      }
    }
  }
  char name[48];
  for (int c = 0; c < ncounters; ++c) {
    long *flag = &cnt[seg * 2 + c];
    snprintf(name, sizeof name, "cnt.%ld.%d", seg, c);
    for (int k = 0; k < nsteps[c][me]; ++k) {
      const long inc = down[c] ? -steps[c][me][k] : steps[c][me][k];
      const int t = target[c];
      long f;
      const char *call;
      switch (down[c] ? 0 : methods[c][me][k]) {
        case 1: f = shmem_long_atomic_fetch_inc(flag, t); call = "shmem_long_atomic_fetch_inc"; break;
        case 2: f = shmem_long_fadd(flag, inc, t); call = "shmem_long_fadd"; break;
        case 3: f = shmem_long_finc(flag, t); call = "shmem_long_finc"; break;
        case 4:
          f = shmem_ctx_long_atomic_fetch_add(SHMEM_CTX_DEFAULT, flag, inc, t);
          call = "shmem_ctx_long_atomic_fetch_add";
          break;
        default: f = shmem_long_atomic_fetch_add(flag, inc, t); call = "shmem_long_atomic_fetch_add"; break;
      }
      const long stored = f + inc;
      sgt_flag_write(call, name, t, down[c] ? "down" : "up", stored, down[c] ? -stored : stored);
    }
  }
  for (int c = 0; c < ncounters; ++c) {
    const int how = pick(3);
    if (target[c] != me || total[c] == 0) continue;
    long *flag = &cnt[seg * 2 + c];
    snprintf(name, sizeof name, "cnt.%ld.%d", seg, c);
    const long want = down[c] ? -total[c] : total[c];
    const char *call;
    long tests = 0;
    if (how == 0) {
      shmem_long_wait_until(flag, SHMEM_CMP_EQ, want);
      call = "shmem_long_wait_until";
    } else if (how == 1) {
      shmem_long_wait_until(flag, down[c] ? SHMEM_CMP_LE : SHMEM_CMP_GE, want);
      call = "shmem_long_wait_until";
    } else {
      while (!shmem_long_test(flag, SHMEM_CMP_EQ, want)) {
        sgt_unclocked("shmem_long_test");
        if (++tests > 100) usleep(50);
      }
      call = "shmem_long_test";
    }
    const long got = *(volatile long *)flag;
    sgt_flag_wait(call, name, got, total[c]);
    check(name, got, want);
  }
}

/* ---- Segment: annotated polling ------------------------------------------- */

static void seg_annot(long seg) {
  int kind[MAX_PES][MAX_PES]; /* 0: none, 1: process, 2: resource, 3: both */
  int queue[MAX_PES][MAX_PES], setter[MAX_PES][MAX_PES], tick[MAX_PES];
  for (int w = 0; w < n; ++w) {
    tick[w] = chance(25);
    for (int x = 0; x < n; ++x) {
      kind[w][x] = (w != x && chance(40)) ? 1 + pick(3) : 0;
      queue[w][x] = pick(NQUEUES);
      setter[w][x] = pick(3);
    }
  }
  int poll_order[MAX_PES];
  for (int i = 0; i < n; ++i) poll_order[i] = i;
  for (int i = n - 1; i > 0; --i) {
    const int j = pick(i + 1), t = poll_order[i];
    poll_order[i] = poll_order[j];
    poll_order[j] = t;
  }
  const long resource = 1000 + seg;
  char qname[32], rname[32];
  snprintf(rname, sizeof rname, "res.%ld", seg);
  if (tick[me]) {
    vcx_annotate_shmem_tick();
    sgt_annot_tick();
  }
  for (int x = 0; x < n; ++x) {
    const int k = kind[me][x];
    if (!k) continue;
    if (k & 1) {
      vcx_annotate_shmem_process_signal(x, queue[me][x]);
      snprintf(qname, sizeof qname, "%d", queue[me][x]);
      sgt_annot_signal(x, qname);
    }
    if (k & 2) {
      int ordinal = 0;
      for (int w = 0; w < me; ++w) ordinal += (kind[w][x] & 2) != 0;
      vcx_annotate_shmem_resource_signal(resource, x);
      sgt_annot_deposit(rname, x, ordinal);
    }
    const long at = seg * MAX_PES + me, v = val(seg, me, x);
    shmem_long_put(&poll_data[at], &v, 1, x);
    shmem_fence();
    switch (setter[me][x]) {
      case 0: shmem_long_p(&poll_f[at], 1, x); break;
      case 1: shmem_long_atomic_add(&poll_f[at], 1, x); break;
      default: shmem_long_atomic_inc(&poll_f[at], x); break;
    }
  }
  int deposits = 0;
  for (int i = 0; i < n; ++i) {
    const int w = poll_order[i], k = kind[w][me];
    if (!k) continue;
    const long at = seg * MAX_PES + w;
    long polls = 0;
    while (shmem_long_g(&poll_f[at], me) != 1)
      if (++polls > 100) usleep(50);
    check("polled data", *(volatile long *)&poll_data[at], val(seg, w, me));
    if (k & 1) {
      vcx_annotate_shmem_process_wait(w, queue[w][me]);
      snprintf(qname, sizeof qname, "%d", queue[w][me]);
      sgt_annot_wait(w, qname);
    }
    if (k & 2) ++deposits;
  }
  if (deposits) {
    vcx_annotate_shmem_resource_wait(resource, me);
    sgt_annot_fetch(rname, me, deposits);
  }
}

/* ---- The script ------------------------------------------------------------ */

static unsigned long parse_number(const char *s, const char *what) {
  char *end;
  unsigned long v = strtoul(s, &end, 10);
  if (!*s || *end) {
    if (me == 0)
      fprintf(stderr, "vcx: shmem fuzz runner: %s must be a number, got '%s'\n", what, s);
    shmem_global_exit(2);
  }
  return v;
}

int main(int argc, char **argv) {
  shmem_init();
  sgt_init();
  me = shmem_my_pe();
  n = shmem_n_pes();
  if (argc != 3) {
    if (me == 0) fprintf(stderr, "vcx: usage: %s SEED ROUNDS\n", argv[0]);
    shmem_global_exit(2);
  }
  const unsigned long seed = parse_number(argv[1], "SEED");
  const unsigned long rounds_arg = parse_number(argv[2], "ROUNDS");
  if (n > MAX_PES || rounds_arg > MAX_ROUNDS) {
    if (me == 0)
      fprintf(stderr, "vcx: shmem fuzz runner: at most %d PEs and %d rounds\n", MAX_PES,
              MAX_ROUNDS);
    shmem_global_exit(2);
  }
  const int rounds = (int)rounds_arg;
  rng_state = seed;

  for (int p = 0; p < NPSYNC; ++p)
    for (int i = 0; i < SYNC_LEN; ++i) psync[p][i] = SHMEM_SYNC_VALUE;
  const size_t segs = (size_t)rounds * SEGS_PER_ROUND + 1;
  cl_src = sym_calloc(NPSYNC * CBUF, sizeof(long));
  cl_dst = sym_calloc(NPSYNC * CBUF, sizeof(long));
  ci_src = sym_calloc(NPSYNC * CBUF, sizeof(int));
  ci_dst = sym_calloc(NPSYNC * CBUF, sizeof(int));
  cd_src = sym_calloc(NPSYNC * CBUF, sizeof(double));
  cd_dst = sym_calloc(NPSYNC * CBUF, sizeof(double));
  slots = sym_calloc(2 * MAX_PES * SLOTW, sizeof(long));
  acc = sym_calloc(2, sizeof(long));
  pub = sym_calloc(PUBW, sizeof(long));
  lock_heap = sym_calloc(NLOCKS, sizeof(long));
  lock_ctr = sym_calloc(NLOCKS, sizeof(long));
  gt_lock_ctr = sym_calloc(SGT_MAX_LOCKS, sizeof(long));
  sgt_lock_counters(gt_lock_ctr);
  tok_s = sym_calloc(segs, sizeof(short));
  tok_i = sym_calloc(segs, sizeof(int));
  tok_l = sym_calloc(segs, sizeof(long));
  tok_data = sym_calloc(segs, sizeof(long));
  pair_i = sym_calloc(segs * MAX_PES, sizeof(int));
  pair_l = sym_calloc(segs * MAX_PES, sizeof(long));
  pair_data = sym_calloc(segs * MAX_PES, sizeof(long));
  cnt = sym_calloc(segs * 2, sizeof(long));
  poll_f = sym_calloc(segs * MAX_PES, sizeof(long));
  poll_data = sym_calloc(segs * MAX_PES, sizeof(long));
  for (int i = 0; i < PUBW; ++i) pub[i] = 100000L * me + i;
  /* The pSync initialisation and pub are complete everywhere. */
  barrier_all();

  long seg = 0;
  int counts[8] = {0};
  for (int round = 0; round < rounds; ++round) {
    const int nseg = 1 + pick(SEGS_PER_ROUND);
    for (int k = 0; k < nseg; ++k, ++seg) {
      const int kind = pick(100);
      if (kind < 12) {
        seg_barrier();
        ++counts[0];
      } else if (kind < 30) {
        seg_coll();
        ++counts[1];
      } else if (kind < 44) {
        seg_data();
        ++counts[2];
      } else if (kind < 56) {
        seg_lock();
        ++counts[3];
      } else if (kind < 70) {
        seg_token(seg);
        ++counts[4];
      } else if (kind < 82) {
        seg_pairs(seg);
        ++counts[5];
      } else if (kind < 92) {
        seg_counter(seg);
        ++counts[6];
      } else {
        seg_annot(seg);
        ++counts[7];
      }
    }
  }

  barrier_all();
  for (int id = 0; id < NLOCKS; ++id)
    if (id % n == me) check("lock counter", *(volatile long *)&lock_ctr[id], lock_expect[id]);
  printf("PE %d: seed %lu rounds %d digest %lu segments %d %d %d %d %d %d %d %d\n", me, seed,
         rounds, digest, counts[0], counts[1], counts[2], counts[3], counts[4], counts[5],
         counts[6], counts[7]);

  sym_free(poll_data);
  sym_free(poll_f);
  sym_free(cnt);
  sym_free(pair_data);
  sym_free(pair_l);
  sym_free(pair_i);
  sym_free(tok_data);
  sym_free(tok_l);
  sym_free(tok_i);
  sym_free(tok_s);
  sym_free(gt_lock_ctr);
  sym_free(lock_ctr);
  sym_free(lock_heap);
  sym_free(pub);
  sym_free(acc);
  sym_free(slots);
  sym_free(cd_dst);
  sym_free(cd_src);
  sym_free(ci_dst);
  sym_free(ci_src);
  sym_free(cl_dst);
  sym_free(cl_src);
  sgt_finalize();
  shmem_finalize();
  return 0;
}
