/* Point-to-point synchronisation through memory, which vcx recognises by
 * itself (docs/clock-rules.md, "Flags"), checked against the oracle:
 *
 *   A  a flag written with shmem_int_p: PE 0 and every other PE play
 *      ping-pong, ROUNDS rounds each; the flag carries the round number
 *      (a static variable), the data before it a one-element put after
 *      shmem_fence; waits are shmem_int_wait_until(EQ).
 *   B  a flag written with a one-element shmem_long_put, always 1: a token
 *      goes round the ring of PEs ROUNDS times; each holder waits until its
 *      flag is 1 (shmem_long_wait_until) and clears it with a plain store.
 *   C  an atomic set, polled with shmem_long_test: every PE but 0 first
 *      tries a compare-and-swap that fails (it writes nothing), then sets
 *      its flag at PE 0; PE 0 polls each flag with shmem_long_test and
 *      answers with a swap, which the PE waits for with the legacy
 *      shmem_long_wait; PE 0 also writes its own flag and waits for it.
 *      (long, not int: Open MPI 4.1.4's 4-byte compare-and-swap writes 8
 *      bytes into its result and smashes the caller's stack.)
 *   D  a counter stepped up with shmem_long_atomic_fetch_add and
 *      fetch_inc by every PE, waited for with wait_until(GE) at PE 0.
 *   E  a counter stepped down with fetch_add(-1), waited for with
 *      wait_until(EQ, 0).
 *   F  (3 PEs or more) only the store of the value read: PE 1 stores 1
 *      into a flag at PE 0; PE 2 polls the flag with shmem_long_g (no
 *      synchronisation) until it sees 1, then stores 2; PE 0 waits for 2.
 *      Its clock learns of PE 2 but not of PE 1, whose store was
 *      registered before but stored another value.
 *
 * Each write's position in its flag's modification order is known by
 * construction (a round, a counter's value); shmem_gt.c logs it. Prints
 * what arrived, the same with and without vcx. */
#include <shmem.h>
#include <stdio.h>
#include <unistd.h>

#include "shmem_gt.h"
#include "vcx/annotate_shmem.h"

#define ROUNDS 3
#define MAX_PES 64

static int flag_a[MAX_PES];  /* symmetric: globals */
static int ack_a;
static long count_d;

static void barrier(void) {
  shmem_barrier_all();
  sgt_world("shmem_barrier_all");
}

/* B: wait for the token of the order-th write to this PE's flag. */
static void take_token(long *flag, long order) {
  shmem_long_wait_until(flag, SHMEM_CMP_EQ, 1);
  sgt_flag_wait("shmem_long_wait_until", "B", *(volatile long *)flag, order);
  *(volatile long *)flag = 0;
}

int main(void) {
  shmem_init();
  sgt_init();
  const int me = shmem_my_pe(), npes = shmem_n_pes();
  if (npes > MAX_PES) {
    fprintf(stderr, "shmem_flags: at most %d PEs\n", MAX_PES);
    shmem_global_exit(2);
  }
  int *data = shmem_calloc((size_t)npes, sizeof(int));
  sgt_world("shmem_calloc");
  long *flag_b = shmem_calloc(1, sizeof(long));
  sgt_world("shmem_calloc");
  long *flag_c = shmem_calloc((size_t)npes, sizeof(long));
  sgt_world("shmem_calloc");
  long *answer_c = shmem_calloc(1, sizeof(long));
  sgt_world("shmem_calloc");
  long *count_e = shmem_calloc(1, sizeof(long));
  sgt_world("shmem_calloc");
  long *flag_f = shmem_calloc(1, sizeof(long));
  sgt_world("shmem_calloc");
  char name[32];

  /* A */
  if (me == 0) {
    int wrong = 0;
    for (int w = 1; w < npes; ++w) {
      snprintf(name, sizeof name, "A.flag%d", w);
      for (int r = 1; r <= ROUNDS; ++r) {
        shmem_int_wait_until(&flag_a[w], SHMEM_CMP_EQ, r);
        sgt_flag_wait("shmem_int_wait_until", name, ((volatile int *)flag_a)[w], r);
        if (((volatile int *)data)[w] != 1000 * w + r) ++wrong;
        shmem_int_p(&ack_a, r, w);
        sgt_flag_write("shmem_int_p", "A.ack", w, "store", r, r);
      }
    }
    printf("PE 0: A: %d rounds with each PE, %d wrong data\n", ROUNDS, wrong);
  } else {
    snprintf(name, sizeof name, "A.flag%d", me);
    for (int r = 1; r <= ROUNDS; ++r) {
      const int v = 1000 * me + r;
      shmem_int_put(&data[me], &v, 1, 0);
      shmem_fence();
      shmem_int_p(&flag_a[me], r, 0);
      sgt_flag_write("shmem_int_p", name, 0, "store", r, r);
      shmem_int_wait_until(&ack_a, SHMEM_CMP_EQ, r);
      sgt_flag_wait("shmem_int_wait_until", "A.ack", *(volatile int *)&ack_a, r);
    }
    printf("PE %d: A: %d rounds acknowledged\n", me, ROUNDS);
  }
  barrier();

  /* B: PE 0 starts each round; the r-th write to a PE's flag is its order. */
  const int next = (me + 1) % npes;
  const long one = 1;
  for (int r = 1; r <= ROUNDS; ++r) {
    if (me != 0)
      take_token(flag_b, r);
    else if (r > 1)
      take_token(flag_b, r - 1);
    shmem_long_put(flag_b, &one, 1, next);
    sgt_flag_write("shmem_long_put", "B", next, "store", 1, r);
  }
  if (me == 0) take_token(flag_b, ROUNDS);
  printf("PE %d: B: the token passed %d times\n", me, ROUNDS);
  barrier();

  /* C */
  if (me != 0) {
    snprintf(name, sizeof name, "C.flag%d", me);
    const long old = shmem_long_atomic_compare_swap(&flag_c[me], 55, 77, 0);
    sgt_flag_write("shmem_long_atomic_compare_swap", name, 0, "none", 77, 0);
    shmem_long_atomic_set(&flag_c[me], 100 + me, 0);
    sgt_flag_write("shmem_long_atomic_set", name, 0, "store", 100 + me, 1);
    shmem_long_wait(answer_c, 0);
    sgt_flag_wait("shmem_long_wait", "C.answer", *(volatile long *)answer_c, 1);
    printf("PE %d: C: compare-and-swap found %ld, answer %ld\n", me, old, *answer_c);
  } else {
    for (int w = 1; w < npes; ++w) {
      snprintf(name, sizeof name, "C.flag%d", w);
      long tests = 0;
      while (!shmem_long_test(&flag_c[w], SHMEM_CMP_EQ, 100 + w)) {
        sgt_unclocked("shmem_long_test");
        if (++tests > 100) usleep(50);
      }
      sgt_flag_wait("shmem_long_test", name, ((volatile long *)flag_c)[w], 1);
      (void)shmem_long_atomic_swap(answer_c, (long)w, w);
      sgt_flag_write("shmem_long_atomic_swap", "C.answer", w, "store", w, 1);
    }
    shmem_long_p(&flag_c[0], 7, 0);
    sgt_flag_write("shmem_long_p", "C.flag0", 0, "store", 7, 1);
    shmem_long_wait_until(&flag_c[0], SHMEM_CMP_EQ, 7);
    sgt_flag_wait("shmem_long_wait_until", "C.flag0", ((volatile long *)flag_c)[0], 1);
    printf("PE 0: C: every flag set\n");
  }
  barrier();

  /* D: the counter's values are the orders. */
  long f = shmem_long_atomic_fetch_add(&count_d, 2, 0);
  sgt_flag_write("shmem_long_atomic_fetch_add", "D", 0, "up", f + 2, f + 2);
  f = shmem_long_atomic_fetch_inc(&count_d, 0);
  sgt_flag_write("shmem_long_atomic_fetch_inc", "D", 0, "up", f + 1, f + 1);
  if (me == 0) {
    shmem_long_wait_until(&count_d, SHMEM_CMP_GE, 3L * npes);
    const long got = *(volatile long *)&count_d;
    sgt_flag_wait("shmem_long_wait_until", "D", got, got);
    printf("PE 0: D: counted %ld\n", got);
  }
  barrier();

  /* E: counting down from npes - 1; the k-th step stores npes - 1 - k. */
  if (me == 0) *count_e = npes - 1;
  barrier();
  if (me != 0) {
    f = shmem_long_atomic_fetch_add(count_e, -1, 0);
    sgt_flag_write("shmem_long_atomic_fetch_add", "E", 0, "down", f - 1, npes - 1 - (f - 1));
  } else {
    shmem_long_wait_until(count_e, SHMEM_CMP_EQ, 0);
    sgt_flag_wait("shmem_long_wait_until", "E", *(volatile long *)count_e, npes - 1);
    printf("PE 0: E: counted down to 0\n");
  }
  barrier();

  /* F: a tick each first, so that the clocks tell the writers apart. */
  if (npes >= 3 && (me == 1 || me == 2)) {
    vcx_annotate_shmem_tick();
    sgt_annot_tick();
  }
  if (npes >= 3 && me == 1) {
    shmem_long_p(flag_f, 1, 0);
    sgt_flag_write("shmem_long_p", "F", 0, "store", 1, 1);
  } else if (npes >= 3 && me == 2) {
    long polls = 0;
    while (shmem_long_g(flag_f, 0) != 1)
      if (++polls > 100) usleep(50);
    shmem_long_p(flag_f, 2, 0);
    sgt_flag_write("shmem_long_p", "F", 0, "store", 2, 2);
  } else if (npes >= 3 && me == 0) {
    shmem_long_wait_until(flag_f, SHMEM_CMP_EQ, 2);
    sgt_flag_wait("shmem_long_wait_until", "F", *(volatile long *)flag_f, 2);
    printf("PE 0: F: read 2\n");
  }
  barrier();

  shmem_free(flag_f);
  sgt_world("shmem_free");
  shmem_free(count_e);
  sgt_world("shmem_free");
  shmem_free(answer_c);
  sgt_world("shmem_free");
  shmem_free(flag_c);
  sgt_world("shmem_free");
  shmem_free(flag_b);
  sgt_world("shmem_free");
  shmem_free(data);
  sgt_world("shmem_free");
  sgt_finalize();
  shmem_finalize();
  return 0;
}
