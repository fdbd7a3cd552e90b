/* Race-free twin of race_shmem_local_put.c: a shmem_barrier_all between
 * A's puts and T's local accesses completes the puts and orders them before
 * T's loads and stores. The controls are those of race_shmem_local_put.c.
 * No races.
 *
 * PEs: A = 0 and B = 2 (1 with two PEs) put into the static variables of
 * T = 1; other PEs only call the barriers. */
#include <shmem.h>
#include <stdio.h>

static int gi;
static int ga[4];
static char gc[4];
static long gl;
static int gs;

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (n < 2) {
    fprintf(stderr, "race_free_shmem_local_put: needs at least 2 PEs\n");
    shmem_global_exit(2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  shmem_barrier_all();

  int two[2] = {2, 3}, v = 0;
  long lv = 0;
  char bytes[2] = {'a', 'b'};

  /* A's puts (and B's). */
  if (me == A) {
    shmem_int_p(&gi, 1, T);
    shmem_int_put(&ga[0], two, 2, T);
    shmem_putmem(&gc[0], bytes, 2, T);
    shmem_long_p(&gl, 1, T);
    shmem_quiet();
    gi = 5;
  }
  if (me == B) {
    shmem_int_p(&ga[3], 4, T);
  }
  /* The barrier race_shmem_local_put.c lacks. */
  shmem_barrier_all();
  /* T's accesses. */
  if (me == T) {
    gi = 7;
    v = ga[1];
    ga[0] = 9;
    gc[1] = 'x';
    lv = gl;
    v += ga[2];
    ga[2] = 1;
    gc[2] = 'y';
    gs = 1;
  }
  shmem_barrier_all();

  /* Controls: ordered by the barrier. */
  if (me == A) {
    shmem_int_p(&gs, 2, T);
  }
  if (me == T) {
    gi = 8;
    v += ga[0];
    ga[1] = 1;
    v += ga[3];
    gc[1] = 'z';
    gl = 2;
  }
  shmem_barrier_all();

  (void)v;
  (void)lv;
  shmem_finalize();
  return 0;
}
