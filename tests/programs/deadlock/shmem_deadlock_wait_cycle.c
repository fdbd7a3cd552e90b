/* Each PE waits for its flag before it sets the next PE's: nobody starts
   the ring, and every PE waits for a write no PE can make. */
#include <shmem.h>

static int flag = 0;

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  shmem_int_wait_until(&flag, SHMEM_CMP_EQ, 1); /* deadlock: all */
  shmem_int_p(&flag, 1, (me + 1) % n);
  shmem_finalize();
  return 0;
}
