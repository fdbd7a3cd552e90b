/* PE 0 waits for a flag that PE 1 was to set, but PE 1 finishes without
   setting it: no PE is left to write it. */
#include <shmem.h>

static long flag = 0;

int main(void) {
  shmem_init();
  if (shmem_my_pe() == 0) shmem_long_wait_until(&flag, SHMEM_CMP_GT, 0); /* deadlock: 0 */
  shmem_finalize();
  return 0;
}
