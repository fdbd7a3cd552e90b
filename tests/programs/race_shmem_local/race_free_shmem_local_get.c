/* Race-free twin of race_shmem_local_get.c: a shmem_barrier_all between
 * A's gets and T's local accesses orders the gets (and completes the
 * get_nbi) before T's loads and stores. The controls are those of
 * race_shmem_local_get.c. No races.
 *
 * PEs: A = 0 and B = 2 (1 with two PEs) get from the symmetric memory of
 * T = 1; other PEs only call the barriers. */
#include <shmem.h>
#include <stdio.h>

static int gy;

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (n < 2) {
    fprintf(stderr, "race_free_shmem_local_get: needs at least 2 PEs\n");
    shmem_global_exit(2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  int *mem = shmem_calloc(8, sizeof(int));
  char *cm = shmem_calloc(8, 1);
  /* Open MPI 4.1.4's shmem_calloc zeroes the block after its barrier: this
   * barrier keeps the zeroing from overwriting other PEs' first writes. */
  shmem_barrier_all();

  int got[8], v = 0;
  char buf[4], cv = 0;

  /* A's gets (and B's). */
  if (me == A) {
    shmem_int_get(got, &mem[0], 2, T);
    got[2] = shmem_int_g(&gy, T);
    shmem_getmem(buf, &cm[1], 3, T);
    shmem_int_get_nbi(&got[3], &mem[4], 1, T);
    shmem_quiet();
    shmem_int_get(&got[4], &mem[5], 1, T);
  }
  if (me == B) {
    shmem_int_get(&got[5], &mem[6], 1, T);
  }
  /* The barrier race_shmem_local_get.c lacks. */
  shmem_barrier_all();
  /* T's accesses. */
  if (me == T) {
    mem[1] = 5;
    v = mem[0];
    gy = 3;
    v += gy;
    cm[3] = 'x';
    cv = cm[2];
    cm[4] = 'y';
    mem[4] = 1;
    v += mem[5];
    v += mem[6];
    mem[7] = 2;
  }
  shmem_barrier_all();

  /* Controls: ordered by the barrier. */
  if (me == A) {
    got[6] = shmem_int_g(&mem[7], T);
  }
  if (me == T) {
    mem[0] = 6;
    mem[1] = 7;
    gy = 4;
    cm[1] = 'z';
    mem[4] = 3;
    mem[5] = 4;
    mem[6] = 5;
  }
  shmem_barrier_all();

  (void)v;
  (void)cv;
  shmem_free(cm);
  shmem_free(mem);
  shmem_finalize();
  return 0;
}
