/* Symmetric data objects of both kinds: static (global) variables, and
 * symmetric heap blocks from shmem_malloc and shmem_align. The symmetric
 * heap calls (shmem_malloc, shmem_calloc, shmem_align, shmem_realloc,
 * shmem_free) are barriers over every PE: they complete the calling PE's
 * puts and order everything before them before everything after them.
 *
 * A makes its first accesses while B makes its own, nothing between:
 *   a  shmem_int_p into a static int against shmem_int_p into it;
 *   b  shmem_long_atomic_add on a static long against shmem_long_g of it;
 *   c  shmem_int_put into a shmem_malloc block against shmem_int_get of the
 *      same element;
 *   d  shmem_long_p into element 1 of a shmem_align block against a
 *      two-element shmem_long_put into elements 0 and 1;
 *   e  shmem_putmem of four bytes at byte 2 of a static int array against
 *      shmem_int_p into its int 1 (bytes 4 to 7).
 * Unmarked controls: the same index of a static array and of a heap block;
 * adjacent bytes of the static int array (putmem of bytes 8 to 11, p into
 * int 3); and, in the second part (the same in both programs), accesses of
 * A and B to one element with a symmetric heap call between: shmem_malloc,
 * shmem_free, shmem_realloc (B accesses the reallocated block),
 * shmem_calloc, and a block freed and allocated again (A accesses the
 * freed one, B the new one, which may have its address).
 *
 * race_free_shmem_heap.c has a shmem_malloc (a barrier) between the first
 * and the second accesses. Open MPI completes remote operations on static
 * symmetric memory only while the target PE is inside a call that
 * progresses: T is in a barrier or a symmetric heap call meanwhile.
 * PEs: A = 0 and B = 2 (1 with two PEs) access the symmetric data of T = 1;
 * every PE calls the barriers and the symmetric heap calls. */
#include <shmem.h>
#include <stdio.h>

static int sx[8];
static long sl[4];
static int sw[4];

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (n < 2) {
    fprintf(stderr, "race_shmem_heap: needs at least 2 PEs\n");
    shmem_global_exit(2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  int *h = shmem_malloc(8 * sizeof(int));
  long *al = shmem_align(64, 4 * sizeof(long));
  if (!h || !al) {
    fprintf(stderr, "race_shmem_heap: symmetric allocation failed\n");
    shmem_global_exit(2);
  }

  int one = 1, got[4];
  long lone[2] = {1, 1}, lr[2];
  char bytes[4] = {'a', 'b', 'c', 'd'};

  /* First accesses. */
  if (me == A) {
    shmem_int_p(&sx[0], 1, T); /* race: a */
    shmem_long_atomic_add(&sl[0], 1, T); /* race: b */
    shmem_int_put(&h[0], &one, 1, T); /* race: c */
    shmem_long_p(&al[1], 1, T); /* race: d */
    shmem_putmem((char *)sw + 2, bytes, 4, T); /* race: e */
    shmem_int_p(&sx[1], 1, T);
    shmem_long_p(&sl[2], 1, T);
    shmem_putmem((char *)sw + 8, bytes, 4, T);
  }
  /* Second accesses (race_free_shmem_heap.c has a shmem_malloc here). */
  if (me == B) {
    shmem_int_p(&sx[0], 2, T); /* race: a */
    lr[0] = shmem_long_g(&sl[0], T); /* race: b */
    shmem_int_get(&got[0], &h[0], 1, T); /* race: c */
    shmem_long_put(&al[0], lone, 2, T); /* race: d */
    shmem_int_p(&sw[1], 7, T); /* race: e */
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
  shmem_free(l2);
  shmem_free(al);
  shmem_free(h);
  shmem_finalize();
  return 0;
}
