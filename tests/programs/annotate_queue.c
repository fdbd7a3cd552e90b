/* User annotations on process queues (vcx/annotate.h): ticks, a ring of
 * annotated signals and waits on a world queue, several signals on one
 * queue (taken in order), and the MPI forms on the communicators of a
 * split, whose queue 3 must stay apart from world's queue 3. An annotation
 * to MPI_PROC_NULL does nothing. No MPI call synchronises the ranks until
 * the final barrier, so every merge before it comes from an annotation. */
#include <stdio.h>

#include "gt.h"
#include "vcx/annotate.h"

static const MPI_Comm W = MPI_COMM_WORLD;

static void tick(void) {
  vcx_annotate_tick();
  gt_log_annot_tick();
}

static void signal_q(int dest_world, int queue) {
  char name[32];
  vcx_annotate_process_signal(dest_world, queue);
  snprintf(name, sizeof name, "world/%d", queue);
  gt_log_annot_signal(dest_world, name);
}

static void wait_q(int origin_world, int queue) {
  char name[32];
  vcx_annotate_process_wait(origin_world, queue);
  snprintf(name, sizeof name, "world/%d", queue);
  gt_log_annot_wait(origin_world, name);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  gt_init();
  const int me = gt_rank(), n = gt_size();

  tick();
  tick();

  /* A ring: everybody signals first, so no wait waits for a waiter. */
  signal_q((me + 1) % n, 7);
  wait_q((me + n - 1) % n, 7);

  /* Two signals on one queue, a tick apart: the waits take them in order. */
  if (me == 0) {
    signal_q(1, 1);
    tick();
    signal_q(1, 1);
  } else if (me == 1) {
    wait_q(0, 1);
    tick();
    wait_q(0, 1);
  }

  /* The MPI forms on the halves of a split: each half's rank 0 signals the
   * other members on tag 3. World rank 0 also signals world rank 2 on world
   * queue 3, after its half's signal; rank 2 waits for the world one first,
   * which would take the wrong signal if the queues were one. */
  MPI_Comm half;
  char hname[16], qname[32];
  snprintf(hname, sizeof hname, "half%d", me % 2);
  MPI_Comm_split(W, me % 2, me, &half);
  gt_comm_add(half, hname);
  snprintf(qname, sizeof qname, "%s/3", hname);
  int hme, hn;
  MPI_Comm_rank(half, &hme);
  MPI_Comm_size(half, &hn);
  if (hme == 0) {
    for (int j = 1; j < hn; ++j) {
      vcx_annotate_mpi_process_signal(j, half, 3);
      gt_log_annot_signal(gt_world_of(half, j), qname);
    }
    if (me == 0 && n > 2) signal_q(2, 3);
  } else {
    if (me == 2) wait_q(0, 3);
    vcx_annotate_mpi_process_wait(0, half, 3);
    gt_log_annot_wait(gt_world_of(half, 0), qname);
  }
  vcx_annotate_mpi_process_signal(MPI_PROC_NULL, half, 3); /* does nothing */

  tick();
  MPI_Barrier(W);
  gt_log_coll("MPI_Barrier", "all_to_all", W, -1);

  gt_comm_remove(half);
  MPI_Comm_free(&half);
  printf("annotate_queue rank %d done\n", me);
  gt_finalize();
  MPI_Finalize();
  return 0;
}
