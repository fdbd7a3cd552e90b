/* At 3 PEs: PE 0 enters a barrier over PEs 0 and 1, but PE 1 enters one
   over PEs 1 and 2 with PE 2, and then waits for a flag PE 0 sets after
   its barrier; PE 2 finishes. */
#include <shmem.h>

static long psync_01[SHMEM_BARRIER_SYNC_SIZE], psync_12[SHMEM_BARRIER_SYNC_SIZE];
static int flag = 0;

int main(void) {
  for (int i = 0; i < SHMEM_BARRIER_SYNC_SIZE; ++i) psync_01[i] = psync_12[i] = SHMEM_SYNC_VALUE;
  shmem_init();
  const int me = shmem_my_pe();
  shmem_barrier_all();
  if (me == 0) {
    shmem_barrier(0, 0, 2, psync_01); /* deadlock: 0 */
    shmem_int_p(&flag, 1, 1);
  } else if (me == 1) {
    shmem_barrier(1, 0, 2, psync_12);
    shmem_int_wait_until(&flag, SHMEM_CMP_EQ, 1); /* deadlock: 1 */
  } else if (me == 2) {
    shmem_barrier(1, 0, 2, psync_12);
  }
  shmem_finalize();
  return 0;
}
