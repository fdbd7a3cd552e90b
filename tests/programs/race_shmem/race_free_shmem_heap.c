/* Race-free twin of race_shmem_heap.c: a shmem_malloc, which is a barrier
 * over every PE, between the first and the second accesses completes A's
 * puts and atomics and orders them before B's accesses. The controls are
 * those of race_shmem_heap.c. No races.
 *
 * Open MPI completes remote operations on static symmetric memory only
 * while the target PE is inside a call that progresses: T is in a barrier
 * or a symmetric heap call meanwhile. PEs: A = 0 and B = 2 (1 with two PEs)
 * access the symmetric data of T = 1; every PE calls the barriers and the
 * symmetric heap calls. */
#include <shmem.h>
#include <stdio.h>

static int sx[8];
static long sl[4];
static int sw[4];

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (n < 2) {
    fprintf(stderr, "race_free_shmem_heap: needs at least 2 PEs\n");
    shmem_global_exit(2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  int *h = shmem_malloc(8 * sizeof(int));
  long *al = shmem_align(64, 4 * sizeof(long));
  if (!h || !al) {
    fprintf(stderr, "race_free_shmem_heap: symmetric allocation failed\n");
    shmem_global_exit(2);
  }

  int one = 1, got[4];
  long lone[2] = {1, 1}, lr[2];
  char bytes[4] = {'a', 'b', 'c', 'd'};

  /* First accesses. */
  if (me == A) {
    shmem_int_p(&sx[0], 1, T);
    shmem_long_atomic_add(&sl[0], 1, T);
    shmem_int_put(&h[0], &one, 1, T);
    shmem_long_p(&al[1], 1, T);
    shmem_putmem((char *)sw + 2, bytes, 4, T);
    shmem_int_p(&sx[1], 1, T);
    shmem_long_p(&sl[2], 1, T);
    shmem_putmem((char *)sw + 8, bytes, 4, T);
  }
  /* The barrier race_shmem_heap.c lacks: a symmetric heap call. */
  int *sep = shmem_malloc(4 * sizeof(int));
  /* Second accesses. */
  if (me == B) {
    shmem_int_p(&sx[0], 2, T);
    lr[0] = shmem_long_g(&sl[0], T);
    shmem_int_get(&got[0], &h[0], 1, T);
    shmem_long_put(&al[0], lone, 2, T);
    shmem_int_p(&sw[1], 7, T);
    shmem_int_p(&h[1], 2, T);
    shmem_long_p(&al[2], 2, T);
    shmem_int_p(&sw[3], 7, T);
  }
  shmem_barrier_all();

  /* Controls: symmetric heap calls between A's and B's accesses. */
  if (me == A) shmem_int_p(&h[2], 1, T);
  int *h2 = shmem_malloc(4 * sizeof(int));
  if (me == B) shmem_int_p(&h[2], 2, T);
  if (me == A) shmem_int_p(&sx[2], 1, T);
  shmem_free(h2);
  if (me == B) shmem_int_p(&sx[2], 2, T);
  if (me == A) shmem_int_p(&h[3], 1, T);
  h = shmem_realloc(h, 16 * sizeof(int));
  if (me == B) shmem_int_p(&h[3], 2, T);
  if (me == A) shmem_long_atomic_inc(&sl[3], T);
  long *l2 = shmem_calloc(2, sizeof(long));
  if (me == B) shmem_long_get(&lr[1], &sl[3], 1, T);
  int *h3 = shmem_malloc(4 * sizeof(int));
  if (me == A) shmem_int_p(&h3[0], 1, T);
  shmem_free(h3);
  int *h4 = shmem_malloc(4 * sizeof(int));
  if (me == B) shmem_int_p(&h4[0], 2, T);
  shmem_barrier_all();

  shmem_free(h4);
  shmem_free(sep);
  shmem_free(l2);
  shmem_free(al);
  shmem_free(h);
  shmem_finalize();
  return 0;
}
