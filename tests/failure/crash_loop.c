/* Communicates in a loop and, if asked, lets one rank die in the middle.
 *
 *   vcx-failure-crash-loop HOW VICTIM ITERATION STEP ITERATIONS [STOPFILE]
 *
 * Each iteration makes the same calls in the same order (the steps):
 *   0 MPI_Bsend to the right neighbour (buffered: it does not wait for the
 *     receiver, which MPI promises only in that mode)
 *   1 MPI_Recv from the left neighbour
 *   2 MPI_Isend right, MPI_Irecv left, MPI_Waitall
 *   3 MPI_Allreduce of (rank + iteration)
 *   4 MPI_Bcast from rank (iteration mod size)
 * Every receive names its source and tag, so the matching, and with it every
 * vector clock, is the same in every run. All calls are logged with the
 * ground-truth library (gt.h, VCX_TEST_GT_DIR): one line per call, written
 * as soon as it returns, so the log of a rank that dies holds exactly the
 * calls it finished.
 *
 * HOW says how rank VICTIM ends, just before step STEP of iteration
 * ITERATION:
 *   none   it does not: every rank runs ITERATIONS iterations and finalizes
 *   kill   raise(SIGKILL)
 *   segv   a store through a null pointer
 *   abort  MPI_Abort(MPI_COMM_WORLD, 5)
 *   exit   exit(3) without MPI_Finalize
 *   annotate  nobody dies: the victim makes an annotation its tool must
 *          reject (a signal to a rank outside MPI_COMM_WORLD), so the tool
 *          stops the analysis; the loop runs on (until vcx ends the job)
 *   stop   nobody dies; the loop runs until the file STOPFILE exists (rank 0
 *          looks before each iteration and broadcasts what it saw), at most
 *          ITERATIONS iterations
 * Before dying the victim prints "rank R: dying (HOW) at iteration I step S"
 * on stderr. At the end each rank prints on stdout
 *   rank R: N iterations, allreduce sum X, SIGUSR1 handled K
 * where X is the sum over the iterations i < N of size*i + size*(size-1)/2.
 * The program installs a SIGUSR1 handler before MPI_Init, and rank 0 raises
 * SIGUSR1 at the start of iteration 1: K is 1 there (if it got that far), 0
 * elsewhere, however an interceptor chains the handler.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gt.h"
#include "vcx/annotate.h"

#define MSG 4

static const MPI_Comm W = MPI_COMM_WORLD;

static volatile sig_atomic_t g_usr1;
static volatile int g_annotations;
static void on_usr1(int sig) {
  (void)sig;
  ++g_usr1;
}

static const char *g_how = "none";
static int g_victim = -1, g_iteration = -1, g_step = -1;

static void maybe_die(int me, int iteration, int step) {
  if (me != g_victim || iteration != g_iteration || step != g_step) return;
  if (strcmp(g_how, "none") == 0 || strcmp(g_how, "stop") == 0) return;
  if (strcmp(g_how, "annotate") == 0) {
    fprintf(stderr, "rank %d: annotating a signal to rank %d at iteration %d step %d\n", me,
            gt_size() + 7, iteration, step);
    fflush(stderr);
    vcx_annotate_process_signal(gt_size() + 7, 0); /* the rejected call */
    ++g_annotations;  /* no tail call: the call site stays this line */
    return;
  }
  fprintf(stderr, "rank %d: dying (%s) at iteration %d step %d\n", me, g_how, iteration, step);
  fflush(stderr);
  if (strcmp(g_how, "kill") == 0) raise(SIGKILL);
  if (strcmp(g_how, "segv") == 0) {
    volatile int *nowhere = NULL;
    *nowhere = 1;
  }
  if (strcmp(g_how, "abort") == 0) MPI_Abort(W, 5);
  if (strcmp(g_how, "exit") == 0) exit(3);
  fprintf(stderr, "unknown way to die: %s\n", g_how);
  exit(2);
}

int main(int argc, char **argv) {
  struct sigaction usr1;
  memset(&usr1, 0, sizeof usr1);
  usr1.sa_handler = on_usr1;
  sigemptyset(&usr1.sa_mask);
  sigaction(SIGUSR1, &usr1, NULL);
  MPI_Init(&argc, &argv);
  gt_init();
  int me = gt_rank(), n = gt_size();
  // Room for a few step-0 messages in flight (one per iteration at most
  // until the receiver takes it; the allreduce of each iteration bounds it).
  static char bsend_space[8 * (MSG * sizeof(int) + MPI_BSEND_OVERHEAD)];
  MPI_Buffer_attach(bsend_space, sizeof bsend_space);
  if (argc < 6) {
    if (me == 0)
      fprintf(stderr, "usage: %s HOW VICTIM ITERATION STEP ITERATIONS [STOPFILE]\n", argv[0]);
    MPI_Abort(W, 2);
  }
  g_how = argv[1];
  g_victim = atoi(argv[2]);
  g_iteration = atoi(argv[3]);
  g_step = atoi(argv[4]);
  const int iterations = atoi(argv[5]);
  const char *stopfile = argc > 6 ? argv[6] : NULL;
  const int until_stop = strcmp(g_how, "stop") == 0;
  if (until_stop && !stopfile) {
    if (me == 0) fprintf(stderr, "stop needs STOPFILE\n");
    MPI_Abort(W, 2);
  }

  const int right = (me + 1) % n, left = (me - 1 + n) % n;
  long long sum = 0;
  int done = 0;
  for (; done < iterations; ++done) {
    const int i = done;
    if (until_stop) {
      int stop = me == 0 && access(stopfile, F_OK) == 0;
      MPI_Bcast(&stop, 1, MPI_INT, 0, W);
      gt_log_coll("MPI_Bcast", "one_to_all", W, 0);
      if (stop) break;
    }
    int out[MSG], in[MSG];
    if (me == 0 && i == 1) raise(SIGUSR1);

    maybe_die(me, i, 0);
    gt_send("buffered", out, MSG, right, 1, W);

    maybe_die(me, i, 1);
    MPI_Status status;
    gt_recv(in, MSG, left, 1, W, &status);

    maybe_die(me, i, 2);
    int out2[MSG], in2[MSG];
    gt_reqs reqs;
    gt_reqs_init(&reqs);
    gt_isend(&reqs, "std", out2, MSG, right, 2, W);
    gt_irecv(&reqs, in2, MSG, left, 2, W);
    gt_complete(&reqs, GT_WAITALL);

    maybe_die(me, i, 3);
    long long mine = me + i, total = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, W);
    gt_log_coll("MPI_Allreduce", "all_to_all", W, -1);
    sum += total;

    maybe_die(me, i, 4);
    int root = i % n, value = me == root ? i : -1;
    MPI_Bcast(&value, 1, MPI_INT, root, W);
    gt_log_coll("MPI_Bcast", "one_to_all", W, root);
    if (value != i) {
      fprintf(stderr, "rank %d: broadcast %d got %d\n", me, i, value);
      MPI_Abort(W, 2);
    }
  }

  printf("rank %d: %d iterations, allreduce sum %lld, SIGUSR1 handled %d\n", me, done, sum,
         (int)g_usr1);
  fflush(stdout);
  gt_finalize();
  void *detached;
  int detached_size;
  MPI_Buffer_detach(&detached, &detached_size);
  MPI_Finalize();
  return 0;
}
