/* Race-free twin of race_shmem_local_heap.c: a shmem_barrier_all between
 * A's puts and T's local accesses completes the puts and orders them before
 * T's loads and stores. The controls are those of race_shmem_local_heap.c.
 * No races.
 *
 * Open MPI 4.1.4's shmem_calloc zeroes the block after its internal
 * barrier: a shmem_barrier_all after the allocations keeps the zeroing from
 * overwriting A's puts. PEs: A = 0 puts into the symmetric heap of T = 1;
 * other PEs only call the barriers and the symmetric heap calls. */
#include <shmem.h>
#include <stdio.h>

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (n < 2) {
    fprintf(stderr, "race_free_shmem_local_heap: needs at least 2 PEs\n");
    shmem_global_exit(2);
  }
  const int A = 0, T = 1;
  int *h = shmem_malloc(8 * sizeof(int));
  long *c = shmem_calloc(4, sizeof(long));
  int *al = shmem_align(64, 8 * sizeof(int));
  int *k = shmem_calloc(8, sizeof(int));
  if (!h || !c || !al || !k) {
    fprintf(stderr, "race_free_shmem_local_heap: symmetric allocation failed\n");
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
    shmem_int_put(&h[2], two, 2, T);
    shmem_long_p(&c[1], 5, T);
    shmem_int_p(&al[6], 1, T);
    shmem_int_put(&k[0], four, 4, T);
  }
  /* The barrier race_shmem_local_heap.c lacks. */
  shmem_barrier_all();
  /* T's accesses. */
  if (me == T) {
    for (int i = 0; i < 8; ++i) sum += h[i];
    c[1] = 9;
    for (int i = 0; i < 8; ++i) al[i] = i;
    k[1] += 1;
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
