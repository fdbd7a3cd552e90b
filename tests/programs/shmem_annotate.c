/* Synchronisation through memory that no OpenSHMEM call shows, made
 * visible with vcx/annotate_shmem.h (annotate_polling.c for OpenSHMEM).
 *
 * Every PE ticks once. Then each PE w > 0 deposits on resource "flag<w>"
 * at PE 0 and on resource "all" at the last PE, puts a value into
 * data[w] at PE 0 and, after shmem_fence, sets flag[w] at PE 0 with
 * shmem_int_p. PE 0 polls each flag with plain loads, fetches the flag's
 * resource and checks the data; after the last flag it fetches "all",
 * which merges every writer's deposit, and "none", on which nobody
 * deposits. Each deposit is annotated before the write that announces it,
 * so PE 0 fetches only after the deposits it polled for. Then a token
 * goes round the ring of PEs: each PE announces it with a process signal
 * on queue 3 and sets the next PE's token flag; the next PE polls its flag
 * with plain loads and waits for the signal. No OpenSHMEM call orders any
 * of this: the clocks learn of it only through the annotations.
 *
 * Prints what arrived, the same with and without vcx. */
#include <shmem.h>
#include <stdio.h>
#include <unistd.h>

#include "shmem_gt.h"
#include "vcx/annotate_shmem.h"

#define RING_QUEUE 3

static void poll_until_set(volatile int *p) {
  long polls = 0;
  while (*p == 0)
    if (++polls > 1000) usleep(50);
}

int main(void) {
  shmem_init();
  sgt_init();
  const int me = shmem_my_pe(), npes = shmem_n_pes();
  const int last = npes - 1;
  /* On the symmetric heap: Open MPI updates static symmetric variables of a
   * PE only while that PE is inside an OpenSHMEM call, which plain loads
   * never are. */
  int *data = shmem_calloc((size_t)npes, sizeof(int));
  sgt_world("shmem_calloc");
  int *flag = shmem_calloc((size_t)npes, sizeof(int));
  sgt_world("shmem_calloc");
  int *token = shmem_calloc(1, sizeof(int));
  sgt_world("shmem_calloc");
  char name[32];

  vcx_annotate_shmem_tick();
  sgt_annot_tick();

  if (me != 0) {
    vcx_annotate_shmem_resource_signal(100 + me, 0);
    snprintf(name, sizeof name, "flag%d", me);
    sgt_annot_deposit(name, 0, 0);
    vcx_annotate_shmem_resource_signal(7, last);
    sgt_annot_deposit("all", last, me - 1);
    const int v = 1000 + me;
    shmem_int_put(&data[me], &v, 1, 0);
    shmem_fence();
    shmem_int_p(&flag[me], 1, 0);
  } else {
    for (int w = 1; w < npes; ++w) {
      poll_until_set(&flag[w]);
      vcx_annotate_shmem_resource_wait(100 + w, 0);
      snprintf(name, sizeof name, "flag%d", w);
      sgt_annot_fetch(name, 0, 1);
      printf("PE 0: data from PE %d: %d\n", w, ((volatile int *)data)[w]);
    }
    vcx_annotate_shmem_resource_wait(7, last);
    sgt_annot_fetch("all", last, npes - 1);
    vcx_annotate_shmem_resource_wait(8, last); /* nobody deposits on 8 */
    sgt_annot_fetch("none", last, 0);
  }
  shmem_barrier_all();
  sgt_world("shmem_barrier_all");

  /* The token ring: PE 0 starts it and ends with the token back. */
  const int next = (me + 1) % npes, prev = (me + npes - 1) % npes;
  if (me != 0) {
    poll_until_set(token);
    vcx_annotate_shmem_process_wait(prev, RING_QUEUE);
    sgt_annot_wait(prev, "ring");
  }
  vcx_annotate_shmem_process_signal(next, RING_QUEUE);
  sgt_annot_signal(next, "ring");
  shmem_int_p(token, 1, next);
  if (me == 0) {
    poll_until_set(token);
    vcx_annotate_shmem_process_wait(prev, RING_QUEUE);
    sgt_annot_wait(prev, "ring");
  }
  printf("PE %d: the token came from PE %d\n", me, prev);

  shmem_barrier_all();
  sgt_world("shmem_barrier_all");
  shmem_free(token);
  sgt_world("shmem_free");
  shmem_free(flag);
  sgt_world("shmem_free");
  shmem_free(data);
  sgt_world("shmem_free");
  sgt_finalize();
  shmem_finalize();
  return 0;
}
