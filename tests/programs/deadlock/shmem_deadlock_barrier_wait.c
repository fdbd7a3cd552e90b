/* PE 0 enters a barrier; the other PEs wait for a flag PE 0 sets only
   after it. */
#include <shmem.h>

static int flag = 0;

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (me == 0) {
    shmem_barrier_all(); /* deadlock: 0 */
    for (int pe = 1; pe < n; ++pe) shmem_int_p(&flag, 1, pe);
  } else {
    shmem_int_wait_until(&flag, SHMEM_CMP_NE, 0); /* deadlock: rest */
    shmem_barrier_all();
  }
  shmem_finalize();
  return 0;
}
