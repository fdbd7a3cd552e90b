/* Race-free twin of race_shmem_put.c: a shmem_barrier_all between the first
 * and the second accesses (it completes A's puts and orders them before
 * B's), a shmem_quiet between each pair of one PE's own accesses and in
 * the loop, and a barrier between the turns of A and B on the line they
 * share. The controls are those of race_shmem_put.c. No races.
 *
 * PEs: A = 0 and B = 2 (1 with two PEs) access the symmetric heap of
 * T = 1; other PEs only call the barriers. */
#include <shmem.h>
#include <stdio.h>

#define SLOTS 16

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (n < 2) {
    fprintf(stderr, "race_free_shmem_put: needs at least 2 PEs\n");
    shmem_global_exit(2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  int *mem = shmem_calloc(SLOTS, sizeof(int));
  /* Open MPI 4.1.4's shmem_calloc zeroes the block after its barrier: this
   * barrier keeps the zeroing from overwriting other PEs' first writes. */
  shmem_barrier_all();

  int one = 1, two[2] = {2, 3}, got[4];
  char bytes[4] = {'a', 'b', 'c', 'd'};

  /* First accesses. */
  if (me == A) {
    shmem_int_put(&mem[0], &one, 1, T);
    shmem_int_put(&mem[1], two, 2, T);
    shmem_int_p(&mem[3], 1, T);
    shmem_putmem(&mem[5], bytes, 2, T);
    shmem_putmem(&mem[6], bytes, 3, T);
  }
  /* The barrier race_shmem_put.c lacks. */
  shmem_barrier_all();
  /* Second accesses. */
  if (me == B) {
    shmem_int_put(&mem[0], &two[0], 1, T);
    shmem_int_p(&mem[2], 2, T);
    shmem_int_p(&mem[4], 2, T);
    shmem_putmem((char *)&mem[5] + 2, bytes, 2, T);
    shmem_char_p((char *)&mem[6] + 2, 'x', T);
  }
  shmem_barrier_all();

  /* One PE's own accesses, each completed before the next. */
  if (me == A) {
    shmem_int_p(&mem[8], 1, T);
    shmem_quiet();
    shmem_int_p(&mem[8], 2, T);
    shmem_int_put_nbi(&mem[9], &one, 1, T);
    shmem_quiet();
    got[0] = shmem_int_g(&mem[9], T);
    shmem_int_put(&mem[10], &one, 1, T);
    shmem_quiet();
    shmem_int_get(&got[1], &mem[10], 1, T);
    for (int i = 0; i < 2; ++i) {
      shmem_int_put(&mem[11], &two[i], 1, T);
      shmem_quiet();
    }
    /* Controls: completed by shmem_quiet. */
    shmem_int_put(&mem[12], &one, 1, T);
    shmem_quiet();
    shmem_int_put(&mem[12], &two[0], 1, T);
    shmem_int_put_nbi(&mem[13], &one, 1, T);
    shmem_quiet();
    shmem_int_get(&got[2], &mem[13], 1, T);
  }
  shmem_barrier_all();

  /* One line, two PEs, in turns. */
  for (int turn = 0; turn < 2; ++turn) {
    if (me == (turn == 0 ? A : B)) {
      shmem_int_p(&mem[14], me, T);
    }
    shmem_barrier_all();
  }

  /* Control: the same int in consecutive barrier phases. */
  if (me == A) shmem_int_p(&mem[15], 1, T);
  shmem_barrier_all();
  if (me == B) shmem_int_p(&mem[15], 2, T);
  shmem_barrier_all();

  shmem_free(mem);
  shmem_finalize();
  return 0;
}
