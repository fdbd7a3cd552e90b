/* The twin of shmem_deadlock_wait_cycle: PE 0 starts the ring, after a
   compute phase long enough for the others to be seen waiting on it (a
   slow PE is no deadlock). */
#include <shmem.h>
#include <unistd.h>

static int flag = 0;

int main(void) {
  shmem_init();
  const int me = shmem_my_pe(), n = shmem_n_pes();
  if (me == 0) {
    sleep(2);
    shmem_int_p(&flag, 1, 1 % n);
  }
  shmem_int_wait_until(&flag, SHMEM_CMP_EQ, 1);
  if (me != 0) shmem_int_p(&flag, 1, (me + 1) % n);
  shmem_finalize();
  return 0;
}
