/* MPI's non-overtaking rule for receives: when a process posted receive A
 * and later receive B, and both could match message m, B cannot take m
 * while A is pending. So if B got a synchronous message m_B while an
 * earlier-posted, still pending receive A that could also have matched m_B
 * got m_A, m_A was there before m_B was matched: the answer to m_B's sender
 * carries the clock of m_A's send (transitively, through every such A).
 *
 * Rank 1 receives; ranks 0, 2 (and 3) send synchronously, all with the same
 * tag unless a phase says otherwise. Every phase posts rank 1's receives,
 * then a logged MPI_Barrier, so all of them are posted before any message
 * of the phase is sent; rank 1 completes all of them before it posts the
 * next phase's, so no message strays into another phase.
 *
 *   a. two Irecv(ANY_SOURCE), completed by MPI_Waitall; senders 0, then 2;
 *   b. the same completed by MPI_Waitany (until none is left), and by
 *      MPI_Testsome polling;
 *   c. Irecv(ANY_SOURCE), then Irecv(source 2); senders 0, then 2 (rank 0's
 *      message can only go to the first: rank 2's must come after it, or it
 *      would take the first receive and leave rank 0's none);
 *   d. two Recv_init(ANY_SOURCE) started by one MPI_Startall (the first of
 *      its array is posted first), completed by MPI_Waitall;
 *   e. Irecv(ANY_SOURCE), then after the barrier a blocking
 *      MPI_Recv(ANY_SOURCE, ANY_TAG) that gets rank 2's message; then
 *      MPI_Wait on the Irecv, which got rank 0's;
 *   f. Irecv(ANY_SOURCE) gets rank 0's message; MPI_Mprobe(ANY_SOURCE)
 *      then finds rank 2's and MPI_Mrecv receives it; then the Irecv is
 *      waited for;
 *   g. (4 ranks or more) a chain: three Irecv(ANY_SOURCE), senders 0, 2, 3
 *      in that order: 3's answer carries the sends of 0 and 2;
 *   h. no edge, the first receive could not have taken the second's
 *      message: (1) Irecv(ANY_SOURCE, tag X), Irecv(ANY_SOURCE, tag Y),
 *      rank 0 sends on X, then rank 2 on Y; (2) Irecv(source 0),
 *      Irecv(ANY_SOURCE), senders 0, then 2;
 *   i. no edge, the other order: as h(1), but rank 2 sends first, while
 *      the first receive has matched nothing yet, then rank 0 (so the
 *      answer to rank 2 must not wait for the first receive's match).
 * Phases a-f, h and i need 3 ranks, g 4; with fewer every rank skips them
 * (the barriers stay, the same on every rank).
 *
 * Why each match is deterministic. Receives are matched in posting order,
 * so a message that arrives while two posted receives could both take it
 * goes to the earlier one. The first sender (rank 0; rank 2 in i) sends at
 * once; the next sender sends only once the previous sender's message has
 * been matched, which is known in one of two ways (all phases run once
 * with each):
 *   by the senders:  the previous sender's MPI_Ssend (or MPI_Issend, waited
 *     for) returned, so its message was matched; it then passes a token
 *     (MPI_Send / MPI_Recv, logged) to the next sender. This is how a
 *     program would do it, but the token carries the first sender's clock,
 *     so the edge changes no clock here: it only must not confuse the tool;
 *   by the receiver: rank 1 polls the request that gets the previous
 *     sender's message with MPI_Request_get_status (logged; it completes
 *     nothing and merges nothing) until MPI reports it done, then passes the
 *     token to the next sender itself. Rank 1 has not merged that message
 *     yet, so the next sender learns of the previous send only through the
 *     edge: its clock shows whether the tool drew it (and, in h and i, that
 *     it drew none).
 * Either way a later message can only take a receive the earlier ones left.
 * In e and f the blocking MPI_Recv / MPI_Mprobe is a later receive than
 * the pending Irecv, which takes rank 0's message even if that arrives
 * while rank 1 already waits there. Tokens have a tag of their own and
 * never go to rank 1, so no receive of a phase can take one. Every
 * receive checks its payload and that it got the sender this comment
 * promises. */
#include <sched.h>
#include <stdio.h>
#include <time.h>

#include "gt.h"

#define MSG 8
#define R 1 /* the receiving rank */
#define TAG_GO 9
#define MAXS 3 /* senders in a phase */

enum { BY_SENDERS, BY_RECEIVER, ORDERS };

static const MPI_Comm W = MPI_COMM_WORLD;
static int me, n, by;
static unsigned long sum;
static int rb[MAXS][MSG], sb[MSG], tok[MSG];

static void check_rc(int rc, const char *what) {
  if (rc != MPI_SUCCESS) gt_fail("%s returned %d", what, rc);
}

static void barrier(void) {
  check_rc(MPI_Barrier(W), "MPI_Barrier");
  gt_log_coll("MPI_Barrier", "all_to_all", W, -1);
}

static int is_in(int rank, const int *who, int nw) {
  for (int i = 0; i < nw; ++i)
    if (who[i] == rank) return 1;
  return 0;
}

static void expect_from(const int *buf, int world, const char *what) {
  gt_msgid id = gt_read(buf);
  if (id.src != world)
    gt_fail("receive_order: %s got message %d.%d, expected one from rank %d", what, id.src,
            id.cnt, world);
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

/* Rank 1, ordering by the receiver: once MPI reports slot k of s done (the
 * previous sender's message arrived), let `next` send. Nothing by the
 * senders. */
static void let_next(gt_reqs *s, int k, int next) {
  if (by != BY_RECEIVER) return;
  int flag = 0, spins = 0;
  for (;;) {
    MPI_Status st;
    check_rc(MPI_Request_get_status(s->req[k], &flag, &st), "MPI_Request_get_status");
    gt_begin("MPI_Request_get_status");
    gt_op_status(s->info[k].name);
    gt_end();
    if (flag) break;
    backoff(&spins);
  }
  gt_send("std", tok, MSG, next, TAG_GO, W);
}

/* A sender's part: senders who[0..nw-1] send to rank 1 in this order, on
 * tags[i]. Each but the first waits for its token (from its predecessor or
 * from rank 1), sends synchronously (rank 0 always with MPI_Ssend, the others
 * with MPI_Issend completed by MPI_Wait when `nb`), and when ordering by the
 * senders, passes the token on once its send completed. */
static void send_turn(const int *who, const int *tags, int nw, int nb) {
  int i = 0;
  while (i < nw && who[i] != me) ++i;
  if (i == nw) return;
  if (i > 0) sum += gt_recv(tok, MSG, by == BY_SENDERS ? who[i - 1] : R, TAG_GO, W, NULL);
  if (nb && me != 0) {
    gt_reqs q;
    gt_reqs_init(&q);
    gt_isend(&q, "sync", sb, MSG, R, tags[i], W);
    gt_complete(&q, GT_WAIT_EACH);
  } else {
    gt_send("sync", sb, MSG, R, tags[i], W);
  }
  if (by == BY_SENDERS && i + 1 < nw) gt_send("std", tok, MSG, who[i + 1], TAG_GO, W);
}

/* Phases where rank 1 posts nw Irecvs (sources srcs[i], tags rtags[i]),
 * lets the senders go in order (the receive of who[i]'s message is slot
 * got[i]), completes them all by `how`, and checks who got what. */
static void irecv_phase(int tag_base, const int *who, const int *stags, int nw, const int *srcs,
                        const int *rtags, const int *got, gt_method how, int nb) {
  int need = 0;
  for (int i = 0; i < nw; ++i)
    if (who[i] > need) need = who[i];
  if (n <= need) {
    barrier();
    return;
  }
  int st[MAXS], rt[MAXS];
  for (int i = 0; i < nw; ++i) {
    st[i] = tag_base + stags[i];
    rt[i] = tag_base + rtags[i];
  }
  gt_reqs s;
  gt_reqs_init(&s);
  if (me == R)
    for (int i = 0; i < nw; ++i) gt_irecv(&s, rb[i], MSG, srcs[i], rt[i], W);
  barrier();
  if (me == R) {
    for (int i = 0; i + 1 < nw; ++i) let_next(&s, got[i], who[i + 1]);
    gt_complete(&s, how);
    sum += s.digest;
    for (int i = 0; i < nw; ++i) expect_from(rb[got[i]], who[i], "an Irecv");
  } else if (is_in(me, who, nw)) {
    send_turn(who, st, nw, nb);
  }
}

/* d: two persistent wildcard receives started together. */
static void persistent_phase(int tag) {
  static const int who[2] = {0, 2};
  const int tags[2] = {tag, tag};
  if (n < 3) {
    barrier();
    return;
  }
  gt_reqs s;
  gt_reqs_init(&s);
  MPI_Request p[2];
  gt_req info[2];
  if (me == R) {
    for (int k = 0; k < 2; ++k) {
      gt_req_recv(&info[k], rb[k]);
      check_rc(MPI_Recv_init(rb[k], MSG, MPI_INT, MPI_ANY_SOURCE, tag, W, &p[k]),
               "MPI_Recv_init");
      gt_begin("MPI_Recv_init");
      gt_op_init(info[k].name, "recv");
      gt_end();
    }
    /* The line is assembled before the call and written once it returned,
     * the postings in the order of the array. */
    gt_begin("MPI_Startall");
    for (int k = 0; k < 2; ++k) {
      gt_unmark(rb[k]);
      gt_match(W, MPI_ANY_SOURCE, tag);
      gt_op_post(info[k].name);
    }
    check_rc(MPI_Startall(2, p), "MPI_Startall");
    gt_end();
    for (int k = 0; k < 2; ++k) gt_reqs_add(&s, p[k], &info[k], MSG, 1);
  }
  barrier();
  if (me == R) {
    let_next(&s, 0, 2);
    gt_complete(&s, GT_WAITALL);
    sum += s.digest;
    expect_from(rb[0], 0, "the first persistent receive");
    expect_from(rb[1], 2, "the second persistent receive");
    for (int k = 0; k < 2; ++k) {
      check_rc(MPI_Request_free(&p[k]), "MPI_Request_free");
      gt_begin("MPI_Request_free");
      gt_op_free(info[k].name);
      gt_end();
    }
  } else {
    send_turn(who, tags, 2, 1);
  }
}

/* e: a blocking wildcard MPI_Recv after a pending wildcard Irecv. */
static void blocking_phase(int tag) {
  static const int who[2] = {0, 2};
  const int tags[2] = {tag, tag};
  if (n < 3) {
    barrier();
    return;
  }
  gt_reqs s;
  gt_reqs_init(&s);
  if (me == R) gt_irecv(&s, rb[0], MSG, MPI_ANY_SOURCE, tag, W);
  barrier();
  if (me == R) {
    let_next(&s, 0, 2);
    MPI_Status st;
    sum += gt_recv(rb[1], MSG, MPI_ANY_SOURCE, MPI_ANY_TAG, W, &st);
    if (st.MPI_SOURCE != 2 || st.MPI_TAG != tag)
      gt_fail("receive_order: MPI_Recv got source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    expect_from(rb[1], 2, "the blocking MPI_Recv");
    gt_complete(&s, GT_WAIT_EACH);
    sum += s.digest;
    expect_from(rb[0], 0, "the Irecv before MPI_Recv");
  } else {
    send_turn(who, tags, 2, 0);
  }
}

/* f: MPI_Mprobe + MPI_Mrecv after a pending wildcard Irecv. */
static void mprobe_phase(int tag) {
  static const int who[2] = {0, 2};
  const int tags[2] = {tag, tag};
  if (n < 3) {
    barrier();
    return;
  }
  gt_reqs s;
  gt_reqs_init(&s);
  if (me == R) gt_irecv(&s, rb[0], MSG, MPI_ANY_SOURCE, tag, W);
  barrier();
  if (me == R) {
    let_next(&s, 0, 2);
    MPI_Message m;
    MPI_Status st;
    gt_mhandle h;
    check_rc(MPI_Mprobe(MPI_ANY_SOURCE, tag, W, &m, &st), "MPI_Mprobe");
    gt_mhandle_new(&h);
    gt_begin("MPI_Mprobe");
    gt_match(W, MPI_ANY_SOURCE, tag);
    gt_op_mprobe(&h);
    gt_end();
    if (st.MPI_SOURCE != 2) gt_fail("receive_order: MPI_Mprobe found source %d", st.MPI_SOURCE);
    check_rc(MPI_Mrecv(rb[1], MSG, MPI_INT, &m, &st), "MPI_Mrecv");
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    if (count != MSG) gt_fail("receive_order: MPI_Mrecv got %d ints", count);
    gt_begin("MPI_Mrecv");
    gt_op_mrecv(&h, gt_read(rb[1]));
    gt_end();
    sum += gt_check(rb[1], MSG);
    expect_from(rb[1], 2, "MPI_Mrecv");
    gt_complete(&s, GT_WAIT_EACH);
    sum += s.digest;
    expect_from(rb[0], 0, "the Irecv before MPI_Mprobe");
  } else {
    send_turn(who, tags, 2, 1);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  gt_init();
  me = gt_rank();
  n = gt_size();

  static const int two[2] = {0, 2}, three[3] = {0, 2, 3}, rev[2] = {2, 0};
  static const int same[3] = {0, 0, 0}, xy[2] = {0, 1}, yx[2] = {1, 0};
  static const int any[3] = {MPI_ANY_SOURCE, MPI_ANY_SOURCE, MPI_ANY_SOURCE};
  static const int any_then_2[2] = {MPI_ANY_SOURCE, 2}, zero_then_any[2] = {0, MPI_ANY_SOURCE};
  static const int in_order[3] = {0, 1, 2}, reversed[2] = {1, 0};

  for (by = 0; by < ORDERS; ++by) {
    const int t = 100 + 100 * by; /* each phase its own tags: t + 10 .. t + 95 */
    /* a */
    irecv_phase(t + 10, two, same, 2, any, same, in_order, GT_WAITALL, 0);
    /* b */
    irecv_phase(t + 20, two, same, 2, any, same, in_order, GT_WAITANY, 1);
    irecv_phase(t + 30, two, same, 2, any, same, in_order, GT_TESTSOME, 0);
    /* c */
    irecv_phase(t + 40, two, same, 2, any_then_2, same, in_order, GT_WAITALL, 1);
    /* d */
    persistent_phase(t + 50);
    /* e */
    blocking_phase(t + 60);
    /* f */
    mprobe_phase(t + 70);
    /* g */
    irecv_phase(t + 80, three, same, 3, any, same, in_order, GT_WAITANY, 1);
    /* h: rank 0 on tag X (+0), rank 2 on tag Y (+1); then sources 0, any */
    irecv_phase(t + 90, two, xy, 2, any, xy, in_order, GT_WAITALL, 0);
    irecv_phase(t + 92, two, same, 2, zero_then_any, same, in_order, GT_TESTSOME, 1);
    /* i: rank 2 (tag Y) first, its message goes to the second receive */
    irecv_phase(t + 94, rev, yx, 2, any, xy, reversed, GT_WAITALL, 1);
  }

  barrier();
  printf("receive_order rank %d sum %lu\n", me, sum);
  gt_finalize();
  MPI_Finalize();
  return 0;
}
