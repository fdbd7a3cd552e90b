/* PE 0 takes the lock and enters a barrier; the other PEs wait for the
   lock before they enter it: PE 0 waits for them, they wait for PE 0. */
#include <shmem.h>

static long lock = 0;

int main(void) {
  shmem_init();
  const int me = shmem_my_pe();
  if (me == 0) shmem_set_lock(&lock);
  shmem_barrier_all();
  if (me != 0) shmem_set_lock(&lock); /* deadlock: rest */
  shmem_barrier_all(); /* deadlock: 0 */
  shmem_clear_lock(&lock);
  shmem_finalize();
  return 0;
}
