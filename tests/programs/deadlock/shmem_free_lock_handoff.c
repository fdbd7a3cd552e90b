/* The twin of shmem_deadlock_lock_barrier: PE 0 holds the lock through a
   long compute phase while the others wait for it, then hands it on; each
   PE takes it in turn before the barrier. */
#include <shmem.h>
#include <unistd.h>

static long lock = 0;
static int count = 0;

int main(void) {
  shmem_init();
  const int me = shmem_my_pe();
  if (me == 0) shmem_set_lock(&lock);
  shmem_barrier_all();
  if (me == 0) {
    sleep(2);
    shmem_int_atomic_inc(&count, 0);
    shmem_clear_lock(&lock);
  } else {
    shmem_set_lock(&lock);
    shmem_int_atomic_inc(&count, 0);
    shmem_clear_lock(&lock);
  }
  shmem_barrier_all();
  const int ok = shmem_int_atomic_fetch(&count, 0) == shmem_n_pes();
  shmem_finalize();
  return ok ? 0 : 1;
}
