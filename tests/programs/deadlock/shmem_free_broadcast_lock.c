/* At 3 PEs: PE 1 holds a lock and waits in a broadcast from PE 0, which is
   still computing, while PE 2 waits for the lock. PE 2 is not in the
   broadcast yet, but PE 1 needs only the root's data: once PE 0 broadcasts,
   PE 1 goes on and hands the lock over. Nobody is stuck while PE 0
   computes, whatever the library does with PE 2's part. */
#include <shmem.h>
#include <unistd.h>

static long lock = 0;
static long psync[SHMEM_BCAST_SYNC_SIZE];
static long source = 7, target = 0;

int main(void) {
  for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; ++i) psync[i] = SHMEM_SYNC_VALUE;
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (me == 1) shmem_set_lock(&lock);
  shmem_barrier_all();
  if (me == 0) sleep(2);
  if (me == 2) {
    shmem_set_lock(&lock);
    shmem_clear_lock(&lock);
  }
  shmem_broadcast64(&target, &source, 1, 0, 0, 0, n, psync);
  if (me == 1) shmem_clear_lock(&lock);
  shmem_barrier_all();
  shmem_finalize();
  return 0;
}
