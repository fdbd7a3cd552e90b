/* MPI_THREAD_MULTIPLE: on every rank two worker threads do point-to-point
 * at the same time, each on a communicator of its own, while the main
 * thread runs collectives on a third.
 *
 *   worker 0  ring: Irecv from the left, Isend (even rounds) or Issend (odd
 *             rounds) to the right, completions by MPI_Wait;
 *   worker 1  wildcards: rank 0 takes one message from every other rank
 *             through MPI_ANY_SOURCE/MPI_ANY_TAG receives (synchronous in
 *             odd rounds) completed by MPI_Testany loops, and answers each
 *             with a standard send received with MPI_ANY_TAG through
 *             MPI_Test loops;
 *   main      MPI_Iallreduce rounds and one blocking MPI_Allreduce, between
 *             blocking barriers on the world before and after the workers.
 *
 * Ground truth. vcx gives a process one clock, and its program order is the
 * order in which its threads' calls entered the channel (docs/clock-rules.md,
 * "Threads"). The oracle reads each rank's log as that order, so the log
 * must list the calls whose position changes a clock in the order the
 * channel got them. Those are every clocked call and every posting a
 * synchronous send can match (the answer is the clock at the posting). No
 * program can see the channel's order from outside, so this one fixes it:
 * such a call is made, and its line written, while the thread holds the
 * rank's `order` mutex. Everything else runs without it, concurrently in
 * MPI and in the interceptor: postings for standard messages, completions
 * of standard sends (neither is clocked, so where their lines fall does not
 * matter), and the MPI_Request_get_status polls that wait for a request to
 * be ready. Such a completion frees a handle that another thread's next
 * request may get before the completion is reported, which the interceptor
 * must tell apart (request ids, docs/architecture.md). gt.c itself is not
 * thread-safe, so every gt call holds `log_mutex` (taken inside `order`
 * when both are needed).
 *
 * No thread ever waits while it holds `order`: it only makes calls that
 * return without waiting for another process (initiations, a completion of
 * a request MPI already reported complete, Test calls), except the blocking
 * MPI_Allreduce, which waits only for the other main threads, which get
 * `order` in turn. Under vcx with --stall waits the interceptor may still
 * hold such a call until its tool has merged the clock; everything that
 * merge needs is in the channels already (a completion at MPI level means
 * the partner's initiation returned, and initiations enter the channel
 * before their thread lets go of `order`). Every wait is bounded only by
 * the peers' progress, never by timing. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gt.h"

#define MSG 8
#define ROUNDS 10
#define MAIN_ROUNDS 6
#define MAX_PEERS 8

static pthread_mutex_t order = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t log_mutex = PTHREAD_MUTEX_INITIALIZER;
static int me, n;

static void lock(pthread_mutex_t *m) {
  if (pthread_mutex_lock(m) != 0) gt_fail("pthread_mutex_lock failed");
}
static void unlock(pthread_mutex_t *m) {
  if (pthread_mutex_unlock(m) != 0) gt_fail("pthread_mutex_unlock failed");
}

static void check(int rc, const char *what) {
  if (rc != MPI_SUCCESS) gt_fail("%s returned %d", what, rc);
}

/* Between polls: give the core away, after a while for longer. */
static void backoff(int *spins) {
  if (++*spins < 50) {
    sched_yield();
  } else {
    struct timespec ts = {0, 50 * 1000};
    nanosleep(&ts, NULL);
  }
}

/* Returns once MPI reports the request complete, without completing it. */
static void wait_ready(MPI_Request req) {
  int flag = 0, spins = 0;
  for (;;) {
    check(MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE), "MPI_Request_get_status");
    if (flag) return;
    backoff(&spins);
  }
}

/* MPI_Irecv. `ordered`: a synchronous send may match it, so its position
 * fixes the answer clock. */
static void post(MPI_Request *req, gt_req *info, int *buf, int src, int tag, MPI_Comm c,
                 int ordered) {
  if (ordered) lock(&order);
  gt_unmark(buf);
  lock(&log_mutex);
  gt_req_recv(info, buf);
  unlock(&log_mutex);
  check(MPI_Irecv(buf, MSG, MPI_INT, src, tag, c, req), "MPI_Irecv");
  lock(&log_mutex);
  gt_match(c, src, tag);
  gt_log_post("MPI_Irecv", info);
  unlock(&log_mutex);
  if (ordered) unlock(&order);
}

/* MPI_Isend ("std") or MPI_Issend ("sync"): clocked, so ordered. */
static void isend(MPI_Request *req, gt_req *info, int *buf, const char *mode, int dest, int tag,
                  MPI_Comm c) {
  int sync = strcmp(mode, "sync") == 0;
  lock(&order);
  lock(&log_mutex);
  gt_msgid id = gt_stamp(buf);
  gt_req_send(info);
  unlock(&log_mutex);
  gt_fill(buf, MSG);
  if (sync)
    check(MPI_Issend(buf, MSG, MPI_INT, dest, tag, c, req), "MPI_Issend");
  else
    check(MPI_Isend(buf, MSG, MPI_INT, dest, tag, c, req), "MPI_Isend");
  lock(&log_mutex);
  gt_match(c, dest, tag);
  gt_log_isend(sync ? "MPI_Issend" : "MPI_Isend", mode, id, c, dest, info);
  unlock(&log_mutex);
  unlock(&order);
}

static void log_completed(const char *call, const gt_req *info, int k) {
  lock(&log_mutex);
  gt_log_completed(call, info, &k, 1);
  unlock(&log_mutex);
}

/* Completion that merges something (a receive, a synchronous send, a
 * collective): waits outside `order` until it is ready, then completes it
 * in order. */
static void complete_ordered(MPI_Request *req, const gt_req *info, MPI_Status *st) {
  wait_ready(*req);
  lock(&order);
  check(MPI_Wait(req, st), "MPI_Wait");
  log_completed("MPI_Wait", info, 0);
  unlock(&order);
}

/* A standard send's completion is not clocked: no `order`. */
static void complete_unordered(MPI_Request *req, const gt_req *info) {
  check(MPI_Wait(req, MPI_STATUS_IGNORE), "MPI_Wait");
  log_completed("MPI_Wait", info, 0);
}

/* What a worker received: message ids (and so gt's digests) depend on how
 * the threads interleave, so the output sums only senders and rounds. */
typedef struct {
  MPI_Comm comm;
  long received;
} worker;

static void account(worker *w, const int *buf, int round) {
  gt_check(buf, MSG);
  w->received += (long)(gt_read(buf).src + 1) * (round + 1);
}

static void *ring(void *arg) {
  worker *w = arg;
  int right = (me + 1) % n, left = (me - 1 + n) % n;
  int sbuf[MSG], rbuf[MSG];
  for (int r = 0; r < ROUNDS; ++r) {
    int sync = r % 2;
    MPI_Request rr, sr;
    gt_req ri, si;
    MPI_Status st;
    post(&rr, &ri, rbuf, left, r, w->comm, sync);
    isend(&sr, &si, sbuf, sync ? "sync" : "std", right, r, w->comm);
    complete_ordered(&rr, &ri, &st);
    if (st.MPI_SOURCE != left || st.MPI_TAG != r)
      gt_fail("ring: got source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    account(w, rbuf, r);
    if (sync)
      complete_ordered(&sr, &si, &st);
    else
      complete_unordered(&sr, &si);
  }
  return NULL;
}

/* Rank 0's side of a wildcard round: every other rank's message, then an
 * answer to each. */
static void wildcard_hub(worker *w, int r) {
  static int rbuf[MAX_PEERS][MSG], sbuf[MAX_PEERS][MSG];
  MPI_Request req[MAX_PEERS];
  gt_req info[MAX_PEERS];
  for (int k = 0; k < n - 1; ++k)
    post(&req[k], &info[k], rbuf[k], MPI_ANY_SOURCE, MPI_ANY_TAG, w->comm, 1);
  int pending = n - 1, spins = 0;
  while (pending > 0) {
    int idx = MPI_UNDEFINED, flag = 0;
    MPI_Status st;
    lock(&order);
    check(MPI_Testany(n - 1, req, &idx, &flag, &st), "MPI_Testany");
    if (flag && idx != MPI_UNDEFINED) log_completed("MPI_Testany", info, idx);
    unlock(&order);
    if (!flag) {
      backoff(&spins);
      continue;
    }
    if (idx == MPI_UNDEFINED) gt_fail("MPI_Testany found no active request");
    gt_msgid id = gt_read(rbuf[idx]);
    if (st.MPI_SOURCE != id.src || st.MPI_TAG != 1000 * r + id.src)
      gt_fail("wildcard: status source %d tag %d for a message of rank %d", st.MPI_SOURCE,
              st.MPI_TAG, id.src);
    account(w, rbuf[idx], r);
    --pending;
  }
  for (int k = 1; k < n; ++k) isend(&req[k - 1], &info[k - 1], sbuf[k - 1], "std", k, r, w->comm);
  for (int k = 1; k < n; ++k) complete_unordered(&req[k - 1], &info[k - 1]);
}

static void wildcard_spoke(worker *w, int r) {
  int sbuf[MSG], rbuf[MSG];
  MPI_Request sr, rr;
  gt_req si, ri;
  MPI_Status st;
  int sync = r % 2;
  isend(&sr, &si, sbuf, sync ? "sync" : "std", 0, 1000 * r + me, w->comm);
  /* The answer is a standard message: the posting's place does not matter. */
  post(&rr, &ri, rbuf, 0, MPI_ANY_TAG, w->comm, 0);
  if (sync)
    complete_ordered(&sr, &si, &st);
  else
    complete_unordered(&sr, &si);
  int flag = 0, spins = 0;
  while (!flag) {
    lock(&order);
    check(MPI_Test(&rr, &flag, &st), "MPI_Test");
    if (flag) log_completed("MPI_Test", &ri, 0);
    unlock(&order);
    if (!flag) backoff(&spins);
  }
  if (st.MPI_TAG != r) gt_fail("wildcard answer: tag %d in round %d", st.MPI_TAG, r);
  account(w, rbuf, r);
}

static void *wildcards(void *arg) {
  worker *w = arg;
  for (int r = 0; r < ROUNDS; ++r) {
    if (me == 0)
      wildcard_hub(w, r);
    else
      wildcard_spoke(w, r);
  }
  return NULL;
}

static void barrier_world(void) {
  check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  gt_log_coll("MPI_Barrier", "all_to_all", MPI_COMM_WORLD, -1);
}

int main(int argc, char **argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  gt_init();
  if (provided != MPI_THREAD_MULTIPLE)
    gt_fail("MPI_Init_thread provided level %d, not MPI_THREAD_MULTIPLE", provided);
  me = gt_rank();
  n = gt_size();
  if (n > MAX_PEERS) gt_fail("at most %d processes", MAX_PEERS);

  static const char *names[3] = {"ring", "wildcards", "main"};
  MPI_Comm comms[3];
  for (int i = 0; i < 3; ++i) {
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]), "MPI_Comm_dup");
    gt_comm_add(comms[i], names[i]);
  }
  barrier_world();

  worker workers[2] = {{comms[0], 0}, {comms[1], 0}};
  pthread_t threads[2];
  if (pthread_create(&threads[0], NULL, ring, &workers[0]) != 0 ||
      pthread_create(&threads[1], NULL, wildcards, &workers[1]) != 0)
    gt_fail("pthread_create failed");

  /* Collectives from the main thread while the workers run. */
  long reduced = 0;
  for (int r = 0; r < MAIN_ROUNDS; ++r) {
    long v = me + 1 + r, sum = 0;
    MPI_Request req;
    gt_req info;
    lock(&order);
    check(MPI_Iallreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, comms[2], &req), "MPI_Iallreduce");
    lock(&log_mutex);
    gt_req_send(&info);
    gt_log_icoll("MPI_Iallreduce", "all_to_all", comms[2], -1, &info);
    unlock(&log_mutex);
    unlock(&order);
    complete_ordered(&req, &info, MPI_STATUS_IGNORE);
    reduced += sum;
    if (r == MAIN_ROUNDS / 2) {
      lock(&order);
      check(MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_MAX, comms[2]), "MPI_Allreduce");
      lock(&log_mutex);
      gt_log_coll("MPI_Allreduce", "all_to_all", comms[2], -1);
      unlock(&log_mutex);
      unlock(&order);
      reduced += sum;
    }
  }

  for (int i = 0; i < 2; ++i)
    if (pthread_join(threads[i], NULL) != 0) gt_fail("pthread_join failed");
  barrier_world();

  for (int i = 0; i < 3; ++i) {
    gt_comm_remove(comms[i]);
    MPI_Comm_free(&comms[i]);
  }
  printf("threads rank %d ring %ld wildcards %ld reduced %ld\n", me, workers[0].received,
         workers[1].received, reduced);
  gt_finalize();
  MPI_Finalize();
  return 0;
}
