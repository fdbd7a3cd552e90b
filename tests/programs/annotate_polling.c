/* Synchronisation through polling on a window location, which no MPI call
 * shows, made visible with resource annotations (the exchange paper's example).
 *
 * Rank 0 (B) exposes one flag per other rank. Each writer w (A):
 *   MPI_Win_lock(shared, B); vcx_annotate_resource_signal(100 + w, B);
 *   also deposits on resource 7 at the last rank (the same for all);
 *   MPI_Accumulate(1 -> flag w, MPI_REPLACE); MPI_Win_unlock(B).
 * B holds MPI_Win_lock_all and polls each flag with MPI_Fetch_and_op
 * (MPI_NO_OP) and MPI_Win_flush until it reads 1, then
 * vcx_annotate_resource_wait(100 + w, B); after the last flag it waits on
 * resource 7, merging every writer's deposit. All locks are shared, so
 * they order nothing: B's clock learns of the writers only through the
 * annotations. A resource nobody deposits on merges nothing.
 *
 * Each deposit is annotated before the write that announces it, so B
 * fetches only after the deposits it polled for, and no other deposit on
 * those resources exists. A barrier after B's MPI_Win_lock_all makes B
 * poll before the writers write: B then fetches as soon as it can, which
 * under delay injection (integration.chaos) races the deposits' own
 * messages to the deposition. */
#include <stdio.h>
#include <unistd.h>

#include "gt.h"
#include "vcx/annotate.h"

static const MPI_Comm W = MPI_COMM_WORLD;

static void check_rc(int rc, const char *what) {
  if (rc != MPI_SUCCESS) gt_fail("%s returned %d", what, rc);
}

static void barrier(void) {
  check_rc(MPI_Barrier(W), "MPI_Barrier");
  gt_log_coll("MPI_Barrier", "all_to_all", W, -1);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  gt_init();
  const int me = gt_rank(), n = gt_size();
  const int last = n - 1;
  char name[32];

  int *flags = NULL;
  MPI_Win win;
  gt_win_allocate((MPI_Aint)(n * sizeof(int)), sizeof(int), W, "flags", &flags, &win);
  for (int i = 0; i < n; ++i) flags[i] = 0;
  gt_win_fence(0, win);

  if (me == 0) {
    gt_win_lock_all(0, win);
    barrier();
    for (int w = 1; w < n; ++w) {
      long polls = 0;
      for (;;) {
        int zero = 0, v = -1;
        check_rc(MPI_Fetch_and_op(&zero, &v, MPI_INT, 0, w, MPI_NO_OP, win),
                 "MPI_Fetch_and_op");
        check_rc(MPI_Win_flush(0, win), "MPI_Win_flush");
        if (v == 1) break;
        if (v != 0) gt_fail("flag %d reads %d", w, v);
        if (++polls > 100) usleep(100);
      }
      vcx_annotate_resource_wait(100 + w, 0);
      snprintf(name, sizeof name, "flag%d", w);
      gt_log_annot_fetch(name, 0, 1);
    }
    vcx_annotate_resource_wait(7, last);
    gt_log_annot_fetch("all", last, n - 1);
    vcx_annotate_resource_wait(8, last); /* nobody deposits on 8 */
    gt_log_annot_fetch("none", last, 0);
    gt_win_unlock_all(win);
  } else {
    barrier();
    gt_win_lock(MPI_LOCK_SHARED, 0, 0, win);
    vcx_annotate_resource_signal(100 + me, 0);
    snprintf(name, sizeof name, "flag%d", me);
    gt_log_annot_deposit(name, 0, 0);
    vcx_annotate_resource_signal(7, last);
    gt_log_annot_deposit("all", last, me - 1);
    int one = 1;
    check_rc(MPI_Accumulate(&one, 1, MPI_INT, 0, me, 1, MPI_INT, MPI_REPLACE, win),
             "MPI_Accumulate");
    gt_win_unlock(0, win);
  }

  gt_win_free(&win);
  printf("annotate_polling rank %d done\n", me);
  gt_finalize();
  MPI_Finalize();
  return 0;
}
