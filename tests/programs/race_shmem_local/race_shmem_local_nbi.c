/* Local loads and stores of the local buffers of nonblocking calls. The
 * source buffer of a PE's shmem_TYPE_put_nbi (shmem_putmem_nbi) is read
 * until the PE's next shmem_quiet, the destination buffer of its
 * shmem_TYPE_get_nbi written until then: a local store into the source
 * before the quiet races with the put_nbi (a local load does not: two
 * reads), and a local load or store of the destination before the quiet
 * races with the get_nbi. The buffers of a blocking put or get are done
 * with when it returns, and after shmem_quiet those of the nbi calls too.
 *
 * A's own accesses, on its stack buffers:
 *   a  A's two-element shmem_int_put_nbi, its store into the second
 *      element of the source;
 *   b  A's two-element shmem_int_get_nbi, its load of the first element
 *      of the destination;
 *   c  the same get_nbi, its store into the second element of the
 *      destination;
 *   d  A's shmem_putmem_nbi of four bytes, its loop (on one line) storing
 *      every byte of the source.
 * Unmarked controls: A's load of the first element of the put_nbi's
 * source (two reads); its store into and its load of the elements next to
 * the buffers of a and b; its store into the source of a blocking
 * shmem_int_put and its load of the destination of a blocking
 * shmem_int_get; and, after shmem_quiet, its stores into and loads of all
 * the buffers of the nbi calls.
 *
 * race_free_shmem_local_nbi.c has A call shmem_quiet after each nbi call,
 * before its accesses of the buffers. PEs: A = 0 puts into and gets from
 * the symmetric heap of T = 1, which makes no local accesses; other PEs
 * only call the barriers. */
#include <shmem.h>
#include <stdio.h>

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (n < 2) {
    fprintf(stderr, "race_shmem_local_nbi: needs at least 2 PEs\n");
    shmem_global_exit(2);
  }
  const int A = 0, T = 1;
  int *mem = shmem_calloc(16, sizeof(int));
  /* Open MPI 4.1.4's shmem_calloc zeroes the block after its barrier: this
   * barrier keeps the zeroing from overwriting other PEs' first writes. */
  shmem_barrier_all();

  int src[4] = {1, 2, 3, 4}, dst[4] = {0, 0, 0, 0};
  int bsrc[2] = {5, 6}, bdst[2] = {0, 0}, v = 0;
  char csrc[4] = {'a', 'b', 'c', 'd'};

  if (me == A) {
    shmem_int_put_nbi(&mem[0], src, 2, T); /* race: a */
    v = src[0];
    src[1] = 7; /* race: a */
    src[2] = 8;
    shmem_int_get_nbi(dst, &mem[8], 2, T); /* race: b c */
    v += dst[0]; /* race: b */
    dst[1] = 9; /* race: c */
    v += dst[2];
    dst[3] = 1;
    shmem_putmem_nbi(&mem[4], csrc, 4, T); /* race: d */
    for (int i = 0; i < 4; ++i) csrc[i] = 'z'; /* race: d */
    /* Controls: blocking calls, done with their buffers on return. */
    shmem_int_put(&mem[10], bsrc, 2, T);
    bsrc[0] = 9;
    shmem_int_get(bdst, &mem[12], 2, T);
    v += bdst[1];
    /* (race_free_shmem_local_nbi.c has a shmem_quiet after each nbi call.) */
    shmem_quiet();
    /* Controls: after shmem_quiet. */
    src[0] = 9;
    src[1] = 10;
    v += dst[0];
    dst[1] = 11;
    for (int i = 0; i < 4; ++i) csrc[i] = 'q';
  }
  shmem_barrier_all();

  (void)v;
  shmem_free(mem);
  shmem_finalize();
  return 0;
}
