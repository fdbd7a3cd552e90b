/* Local loads and stores of symmetric heap memory (shmem_malloc,
 * shmem_calloc, shmem_align) against OpenSHMEM puts into it. A put or p
 * into T's memory is complete at the putting PE's next shmem_quiet,
 * barrier or symmetric heap call (which includes a barrier); T's local
 * load or store of the same bytes races with it unless a synchronisation
 * orders them. A loop over an array on one line is one access line: it
 * races once with each put it overlaps.
 *
 * A puts into T's blocks while T accesses them, nothing between:
 *   a  A's two-element shmem_int_put into a shmem_malloc block, T's loop
 *      (on one line) loading every element of the block;
 *   b  A's shmem_long_p into a shmem_calloc block, T's store into the
 *      same long;
 *   c  A's shmem_int_p into element 6 of a shmem_align block, T's loop
 *      storing every element of the block;
 *   d  A's four-element shmem_int_put into a shmem_calloc block, T's
 *      read-modify-write (load and store on one line) of its element 1.
 * Unmarked controls: T's stores initialising the shmem_malloc and
 * shmem_align blocks, before the shmem_barrier_all that precedes A's puts;
 * T's store into the calloc'd long next to the one A writes; T's loop over
 * the second half of the block A puts four ints into the first half of;
 * and, after a shmem_malloc of another block (a barrier), T's loops over
 * every block.
 *
 * race_free_shmem_local_heap.c has a shmem_barrier_all between A's puts
 * and T's accesses. Open MPI 4.1.4's shmem_calloc zeroes the block after
 * its internal barrier: a shmem_barrier_all after the allocations keeps the
 * zeroing from overwriting A's puts. PEs: A = 0 puts into the symmetric
 * heap of T = 1; other PEs only call the barriers and the symmetric heap
 * calls. */
#include <shmem.h>
#include <stdio.h>

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (n < 2) {
    fprintf(stderr, "race_shmem_local_heap: needs at least 2 PEs\n");
    shmem_global_exit(2);
  }
  const int A = 0, T = 1;
  int *h = shmem_malloc(8 * sizeof(int));
  long *c = shmem_calloc(4, sizeof(long));
  int *al = shmem_align(64, 8 * sizeof(int));
  int *k = shmem_calloc(8, sizeof(int));
  if (!h || !c || !al || !k) {
    fprintf(stderr, "race_shmem_local_heap: symmetric allocation failed\n");
    shmem_global_exit(2);
  }
  /* Controls: T's initialisation, ordered before A's puts by the barrier. */
  if (me == T) {
    for (int i = 0; i < 8; ++i) h[i] = 0;
    for (int i = 0; i < 8; ++i) al[i] = 0;
  }
  /* Open MPI 4.1.4's shmem_calloc zeroes the block after its barrier: this
   * barrier keeps the zeroing from overwriting other PEs' first writes. */
  shmem_barrier_all();

  int two[2] = {2, 3}, four[4] = {4, 5, 6, 7}, sum = 0;

  /* A's puts. */
  if (me == A) {
    shmem_int_put(&h[2], two, 2, T); /* race: a */
    shmem_long_p(&c[1], 5, T); /* race: b */
    shmem_int_p(&al[6], 1, T); /* race: c */
    shmem_int_put(&k[0], four, 4, T); /* race: d */
  }
  /* T's accesses (race_free_shmem_local_heap.c has a barrier here). */
  if (me == T) {
    for (int i = 0; i < 8; ++i) sum += h[i]; /* race: a */
    c[1] = 9; /* race: b */
    for (int i = 0; i < 8; ++i) al[i] = i; /* race: c */
    k[1] += 1; /* race: d */
    c[2] = 1;
    for (int i = 4; i < 8; ++i) k[i] = i;
  }
  /* Control: a symmetric heap call completes A's puts and orders them. */
  int *sep = shmem_malloc(4 * sizeof(int));
  if (me == T) {
    for (int i = 0; i < 8; ++i) h[i] = sum;
    for (int i = 0; i < 4; ++i) sum += (int)c[i];
    for (int i = 0; i < 8; ++i) sum += al[i];
    for (int i = 0; i < 8; ++i) k[i] = 0;
  }
  shmem_barrier_all();

  (void)sum;
  shmem_free(sep);
  shmem_free(k);
  shmem_free(al);
  shmem_free(c);
  shmem_free(h);
  shmem_finalize();
  return 0;
}
