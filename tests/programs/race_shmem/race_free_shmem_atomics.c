/* Race-free twin of race_shmem_atomics.c: a shmem_barrier_all between the
 * first and the second accesses completes A's atomics and puts and orders
 * them before B's and before A's shmem_int_p. The controls are those of
 * race_shmem_atomics.c. No races.
 *
 * PEs: A = 0 and B = 2 (1 with two PEs) access the symmetric heap of
 * T = 1; other PEs only call the barriers. */
#include <shmem.h>
#include <stdio.h>

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (n < 2) {
    fprintf(stderr, "race_free_shmem_atomics: needs at least 2 PEs\n");
    shmem_global_exit(2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  int *im = shmem_calloc(8, sizeof(int));
  long *lm = shmem_calloc(8, sizeof(long));
  unsigned *um = shmem_calloc(4, sizeof(unsigned));
  /* Open MPI 4.1.4's shmem_calloc zeroes the block after its barrier: this
   * barrier keeps the zeroing from overwriting other PEs' first writes. */
  shmem_barrier_all();

  int one = 1, ir[8];
  long lone = 1, lr[8];
  unsigned ur[2];

  /* First accesses. */
  if (me == A) {
    shmem_int_atomic_add(&im[0], 1, T);
    shmem_int_atomic_inc(&im[1], T);
    ir[0] = shmem_int_atomic_fetch(&im[2], T);
    shmem_long_atomic_add(&lm[0], 1, T);
    lr[0] = shmem_long_atomic_swap(&lm[1], 7, T);
    lr[1] = shmem_long_atomic_compare_swap(&lm[2], 0, 1, T);
    shmem_uint_atomic_xor(&um[0], 1u, T);
    ir[1] = shmem_int_atomic_fetch_add((int *)&lm[3], 1, T);
    lr[2] = shmem_long_atomic_compare_swap(&lm[4], 0, 1, T);
    shmem_long_atomic_set(&lm[5], 3, T);
    ir[2] = shmem_int_atomic_fetch(&im[4], T);
    ur[0] = shmem_uint_atomic_fetch_or(&um[1], 2u, T);
    for (int i = 0; i < 2; ++i) {
      shmem_int_atomic_inc(&im[5], T);
    }
    shmem_int_atomic_add((int *)&lm[6] + 1, 1, T);
    ir[3] = shmem_int_atomic_fetch_add(&im[6], 1, T);
    shmem_int_p(&im[6], 0, T);
    shmem_int_atomic_add(&im[3], 1, T);
  }
  /* The barrier race_shmem_atomics.c lacks. */
  shmem_barrier_all();
  /* Second accesses. */
  if (me == B) {
    ir[4] = shmem_int_atomic_fetch_inc(&im[0], T);
    shmem_int_put(&im[1], &one, 1, T);
    shmem_int_p(&im[2], 5, T);
    shmem_int_atomic_add((int *)&lm[0] + 1, 1, T);
    shmem_long_get(&lr[3], &lm[1], 1, T);
    shmem_long_put(&lm[2], &lone, 1, T);
    ur[1] = shmem_uint_g(&um[0], T);
    lr[4] = shmem_long_atomic_fetch(&lm[3], T);
    lr[5] = shmem_long_atomic_fetch_add(&lm[4], 1, T);
    lr[6] = shmem_long_atomic_swap(&lm[5], 4, T);
    ir[5] = shmem_int_g(&im[4], T);
    shmem_uint_atomic_and(&um[1], 1u, T);
    shmem_long_atomic_add(&lm[7], 1, T);
  }
  if (me == A) {
    shmem_int_p(&im[3], 0, T);
  }
  shmem_barrier_all();

  (void)ir;
  (void)lr;
  (void)ur;
  shmem_free(um);
  shmem_free(lm);
  shmem_free(im);
  shmem_finalize();
  return 0;
}
