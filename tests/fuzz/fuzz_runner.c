/* Random MPI programs for exactness testing: one interpreter of random
 * scripts.
 *
 *   vcx-fuzz-runner SEED ROUNDS
 *
 * Every rank derives the same script from SEED with the same generator and
 * draws every choice, also those that concern other ranks, so all ranks
 * agree on it without communicating. The script is ROUNDS rounds, each
 * chosen so that it cannot deadlock:
 *
 *   p2p    on world or a live split communicator, a random pairing of
 *          the ranks of each part (one sits out when a part is odd); in
 *          each pair both directions carry 0..3 messages with random
 *          modes (standard, synchronous, buffered, ready), sizes (some
 *          large enough for the rendezvous protocol), blocking or
 *          non-blocking sends and receives (a quarter of the non-blocking
 *          ones persistent: MPI_*send_init / MPI_Recv_init, MPI_Start,
 *          MPI_Request_free once complete), and receives naming the source,
 *          MPI_ANY_SOURCE with the tag, or the source with MPI_ANY_TAG
 *          (both wildcards where the pair are their part's only members);
 *          blocking receives may first find their message with MPI_Probe
 *          or MPI_Mprobe (then MPI_Mrecv), with the same wildcards.
 *          The first rank of a pair sends first, the second receives
 *          first. Ready sends only go to a rank that pre-posted its
 *          receives before sending the message the ready sender received.
 *          Some pairs also annotate: the first rank signals the second on
 *          an annotation queue before its messages, the second waits for
 *          it after its receives (vcx/annotate.h).
 *   fanin  (one round in FANIN_PCT percent, with 3 or more ranks) one
 *          receiver and a random set of 2 or more other members of its
 *          part of world or of a live split; each sender sends it one
 *          message of the round's size (standard, synchronous or
 *          buffered; blocking, or non-blocking and waited for at once),
 *          and the receiver takes them all with MPI_ANY_SOURCE: blocking
 *          MPI_Recv (with the tag or MPI_ANY_TAG), MPI_Irecv completed by
 *          MPI_Waitall, an MPI_Waitany loop or MPI_Testsome polling, or
 *          some MPI_Irecv, then blocking receives for the rest, then the
 *          wait. Each receive could take any sender's message not yet
 *          taken, so these are the receives with alternative matches. A
 *          round with an MPI_ANY_TAG receive ends with a barrier. Other
 *          ranks sit the round out.
 *   coll   a collective on world or on a live split communicator: Barrier,
 *          Bcast, Reduce, Allreduce, Scan, Alltoall, or Ibarrier, Ibcast,
 *          Iallreduce;
 *   split  MPI_Comm_split of world with random colours and keys;
 *   lock   per rank an exclusive or shared lock epoch on a random target,
 *          or (one rank at most) an MPI_Win_lock_all epoch, adding 1
 *          atomically; a round with a lock_all ends with a barrier;
 *   fence  a fence epoch on the same window: every rank adds 1 to a random
 *          target between two MPI_Win_fence calls;
 *   pscw   on a second window, a random pairing of the ranks into origin
 *          and target: MPI_Win_post/MPI_Win_wait at the target,
 *          MPI_Win_start, an accumulate of 1, MPI_Win_complete at the origin;
 *          the round ends with a barrier (MPICH's posts, see round_pscw).
 *
 * Non-blocking requests stay pending across rounds: after each round every
 * rank completes all of its pending requests or not, with a random
 * completion call (Waitall, Waitany, Testall loops, ...). Every request is
 * complete before the end.
 *
 * Why a p2p round's receives always get the message the script meant:
 * tags are unique per round and message (whatever the communicator), a
 * rank has one partner per round, and its receives for the messages of a
 * sender are posted in the order that sender sends them, so by MPI's
 * non-overtaking rule the k-th receive for a sender matches its k-th
 * message, wildcards included. A probe sees only messages no earlier
 * receive claimed, so it finds the same message as the receive would. The
 * ground truth logs the match MPI made anyway (the message id travels in
 * the payload), and the payload checks fail if the script's reasoning
 * were wrong.
 *
 * A fan-in round's receives are meant to race: each takes one of the
 * round's messages not taken yet, whichever MPI matches, and the receiver
 * checks that it got every sender's message exactly once. The tag is the
 * round's, so no other receive can take them, and every receive of the
 * round is complete before the round ends. Every message to the receiver
 * from an earlier round has its receive posted before the fan-in's, and
 * MPI matches posted receives in posting order, so an MPI_ANY_TAG receive
 * of the round cannot take it; a message of a later round could, from a
 * sender or an idle rank that went ahead, so a round with an MPI_ANY_TAG
 * receive ends with a barrier on world. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_rng.h"
#include "gt.h"
#include "vcx/annotate.h"

static const MPI_Comm W = MPI_COMM_WORLD;

#define MAX_RANKS 16
#define MAX_MSGS 3        /* per direction and round */
#define MAX_SPLITS 4      /* live split communicators */
#define PENDING_LIMIT 40  /* complete everything beyond this many requests */
#define LARGE_COUNT 20000 /* ints: beyond MPICH's eager limit */
#define BSEND_BYTES (8 << 20)

static int me, n;
static unsigned long digest; /* of every received message */

static void check_rc(int rc, const char *what) {
  if (rc != MPI_SUCCESS) gt_fail("%s returned %d", what, rc);
}

/* ---- Pending requests and the buffers they use ------------------------ */

static gt_reqs pending;
static void *held[4 * GT_SET_MAX];
static int nheld;

static void *hold(size_t bytes) {
  if (nheld >= (int)(sizeof held / sizeof held[0])) gt_fail("fuzz: too many held buffers");
  void *p = calloc(1, bytes ? bytes : 1);
  if (!p) gt_fail("fuzz: out of memory");
  held[nheld++] = p;
  return p;
}

/* Persistent requests started this round: inactive once complete, freed
 * then. */
static MPI_Request persistent[2 * GT_SET_MAX];
static gt_req persistent_info[2 * GT_SET_MAX];
static int npersistent;

static void keep_persistent(MPI_Request r, const gt_req *info) {
  if (npersistent >= (int)(sizeof persistent / sizeof persistent[0]))
    gt_fail("fuzz: too many persistent requests");
  persistent[npersistent] = r;
  persistent_info[npersistent++] = *info;
}

static void complete_all(gt_method m) {
  gt_complete(&pending, m);
  digest += pending.digest;
  gt_reqs_init(&pending);
  for (int i = 0; i < npersistent; ++i) {
    check_rc(MPI_Request_free(&persistent[i]), "MPI_Request_free");
    gt_begin("MPI_Request_free");
    gt_op_free(persistent_info[i].name);
    gt_end();
  }
  npersistent = 0;
  for (int i = 0; i < nheld; ++i) free(held[i]);
  nheld = 0;
}

/* ---- Communicators and collectives ------------------------------------ */

typedef struct {
  MPI_Comm comm; /* this rank's part */
  int colour[MAX_RANKS];
} split_comm;

static split_comm splits[MAX_SPLITS];
static int nsplits;

static void round_split(int index) {
  if (nsplits == MAX_SPLITS) return;
  split_comm *s = &splits[nsplits++];
  int key[MAX_RANKS];
  int ncolours = 1 + pick(3);
  for (int r = 0; r < n; ++r) {
    s->colour[r] = pick(ncolours);
    key[r] = pick(100) - 50;
  }
  check_rc(MPI_Comm_split(W, s->colour[me], key[me], &s->comm), "MPI_Comm_split");
  char name[48];
  snprintf(name, sizeof name, "split%d.c%d", index, s->colour[me]);
  gt_comm_add(s->comm, name);
}

/* Sum of (world rank + 1) over the members of this rank's part. */
static int member_sum(MPI_Comm c, const split_comm *s) {
  if (c == W) return n * (n + 1) / 2;
  int sum = 0;
  for (int r = 0; r < n; ++r)
    if (s->colour[r] == s->colour[me]) sum += r + 1;
  return sum;
}

/* ---- Point-to-point rounds ---------------------------------------------- */

/* RECV_ANY_BOTH only where the pair are the only members of their part. */
typedef enum { RECV_EXACT, RECV_ANY_SOURCE, RECV_ANY_TAG, RECV_ANY_BOTH } recv_kind;
typedef enum { FIND_NONE, FIND_PROBE, FIND_MPROBE } recv_find; /* blocking receives only */

typedef struct {
  int count;
  const char *mode;
  int send_nb, recv_nb;
  int send_persistent, recv_persistent; /* made by *_init and started once */
  recv_kind rk;
  recv_find find;
  int tag;
} msg_plan;

typedef struct {
  int nmsg;
  int preposted; /* the receiver posts all receives before its own sends */
  msg_plan m[MAX_MSGS];
} dir_plan;

/* ready: the receiver is known to have posted every receive. alone: the
 * pair are the only members of their communicator's part, so a receive
 * with both wildcards can only match the partner's next message. */
static void plan_direction(dir_plan *d, int round, int dir, int ready, int alone) {
  d->nmsg = pick(MAX_MSGS + 1);
  d->preposted = ready;
  for (int i = 0; i < d->nmsg; ++i) {
    msg_plan *m = &d->m[i];
    int large = chance(10);
    m->count = large ? LARGE_COUNT : GT_HDR + pick(30);
    static const char *modes[] = {"std", "sync", "buffered", "ready"};
    int nmodes = ready ? 4 : 3;
    m->mode = modes[pick(nmodes)];
    /* Large buffered messages would only test the attached buffer's size. */
    if (large && !strcmp(m->mode, "buffered")) m->mode = "std";
    m->send_nb = chance(50);
    m->recv_nb = ready ? 1 : chance(50);
    m->send_persistent = m->send_nb && chance(25);
    m->recv_persistent = m->recv_nb && chance(25);
    m->rk = (recv_kind)pick(alone ? 4 : 3);
    m->find = chance(25) ? (chance(50) ? FIND_PROBE : FIND_MPROBE) : FIND_NONE;
    m->tag = (round * 2 + dir) * MAX_MSGS + i;
  }
}

/* A persistent send of m (MPI_Send_init and its kin), started at once; it
 * completes with the round's other requests. */
static void start_persistent_send(const msg_plan *m, int dest, MPI_Comm c) {
  int *buf = hold(sizeof(int) * (size_t)m->count);
  gt_req info;
  gt_req_send(&info);
  MPI_Request r;
  const char *call;
  int rc;
  if (!strcmp(m->mode, "std")) {
    call = "MPI_Send_init";
    rc = MPI_Send_init(buf, m->count, MPI_INT, dest, m->tag, c, &r);
  } else if (!strcmp(m->mode, "buffered")) {
    call = "MPI_Bsend_init";
    rc = MPI_Bsend_init(buf, m->count, MPI_INT, dest, m->tag, c, &r);
  } else if (!strcmp(m->mode, "ready")) {
    call = "MPI_Rsend_init";
    rc = MPI_Rsend_init(buf, m->count, MPI_INT, dest, m->tag, c, &r);
  } else {
    call = "MPI_Ssend_init";
    rc = MPI_Ssend_init(buf, m->count, MPI_INT, dest, m->tag, c, &r);
  }
  check_rc(rc, call);
  gt_begin(call);
  gt_op_init(info.name, "send");
  gt_end();
  /* The line is assembled before the start: the message id must be in the
   * buffer when the send starts. */
  gt_begin("MPI_Start");
  gt_msgid id = gt_stamp(buf);
  gt_fill(buf, m->count);
  gt_match(c, dest, m->tag);
  gt_op_send(m->mode, id, gt_world_of(c, dest), info.name);
  check_rc(MPI_Start(&r), "MPI_Start");
  gt_end();
  gt_reqs_add(&pending, r, &info, 0, 0);
  keep_persistent(r, &info);
}

/* A persistent receive (MPI_Recv_init), started at once. */
static void start_persistent_recv(const msg_plan *m, int s, int t, MPI_Comm c) {
  int *buf = hold(sizeof(int) * (size_t)m->count);
  gt_req info;
  gt_req_recv(&info, buf);
  MPI_Request r;
  check_rc(MPI_Recv_init(buf, m->count, MPI_INT, s, t, c, &r), "MPI_Recv_init");
  gt_begin("MPI_Recv_init");
  gt_op_init(info.name, "recv");
  gt_end();
  gt_begin("MPI_Start");
  gt_unmark(buf);
  gt_match(c, s, t);
  gt_op_post(info.name);
  check_rc(MPI_Start(&r), "MPI_Start");
  gt_end();
  gt_reqs_add(&pending, r, &info, m->count, 1);
  keep_persistent(r, &info);
}

/* dest and src are ranks of c. */
static void send_all(const dir_plan *d, int dest, MPI_Comm c) {
  for (int i = 0; i < d->nmsg; ++i) {
    const msg_plan *m = &d->m[i];
    if (m->send_persistent) {
      start_persistent_send(m, dest, c);
    } else if (m->send_nb) {
      int *buf = hold(sizeof(int) * (size_t)m->count);
      gt_isend(&pending, m->mode, buf, m->count, dest, m->tag, c);
    } else {
      int *buf = malloc(sizeof(int) * (size_t)m->count);
      if (!buf) gt_fail("fuzz: out of memory");
      gt_send(m->mode, buf, m->count, dest, m->tag, c);
      free(buf);
    }
  }
}

static void expect_match(const MPI_Status *st, int src, int tag, const char *what) {
  if (st->MPI_SOURCE != src || st->MPI_TAG != tag)
    gt_fail("fuzz: %s matched source %d tag %d, expected %d tag %d", what, st->MPI_SOURCE,
            st->MPI_TAG, src, tag);
}

/* A blocking receive of m, found first by a matched probe: MPI_Mprobe,
 * MPI_Mrecv. */
static void recv_mprobed(const msg_plan *m, int *buf, int s, int t, int src, MPI_Comm c) {
  MPI_Message msg;
  MPI_Status st;
  gt_mhandle h;
  check_rc(MPI_Mprobe(s, t, c, &msg, &st), "MPI_Mprobe");
  expect_match(&st, src, m->tag, "MPI_Mprobe");
  gt_mhandle_new(&h);
  gt_begin("MPI_Mprobe");
  gt_match(c, s, t);
  gt_op_mprobe(&h);
  gt_end();
  check_rc(MPI_Mrecv(buf, m->count, MPI_INT, &msg, &st), "MPI_Mrecv");
  gt_begin("MPI_Mrecv");
  gt_op_mrecv(&h, gt_read(buf));
  gt_end();
  digest += gt_check(buf, m->count);
}

static void recv_one(const msg_plan *m, int src, int force_blocking, MPI_Comm c) {
  int s = m->rk == RECV_ANY_SOURCE || m->rk == RECV_ANY_BOTH ? MPI_ANY_SOURCE : src;
  int t = m->rk == RECV_ANY_TAG || m->rk == RECV_ANY_BOTH ? MPI_ANY_TAG : m->tag;
  if (m->recv_nb && !force_blocking && m->recv_persistent) {
    start_persistent_recv(m, s, t, c);
    return;
  }
  if (m->recv_nb && !force_blocking) {
    int *buf = hold(sizeof(int) * (size_t)m->count);
    gt_irecv(&pending, buf, m->count, s, t, c);
    return;
  }
  int *buf = malloc(sizeof(int) * (size_t)m->count);
  if (!buf) gt_fail("fuzz: out of memory");
  MPI_Status st;
  if (m->find == FIND_MPROBE) {
    recv_mprobed(m, buf, s, t, src, c);
  } else {
    if (m->find == FIND_PROBE) {
      /* A plain probe is not clocked: logged as a call that does nothing. */
      check_rc(MPI_Probe(s, t, c, &st), "MPI_Probe");
      gt_begin("MPI_Probe");
      gt_end();
      expect_match(&st, src, m->tag, "MPI_Probe");
      s = st.MPI_SOURCE;
      t = st.MPI_TAG;
    }
    digest += gt_recv(buf, m->count, s, t, c, &st);
    expect_match(&st, src, m->tag, "receive");
  }
  free(buf);
}

/* Annotation queue of the pairs that annotate. */
#define ANNOTATION_QUEUE 5

static void annotate_signal(int dest_world) {
  vcx_annotate_process_signal(dest_world, ANNOTATION_QUEUE);
  gt_log_annot_signal(dest_world, "world/5");
}

static void annotate_wait(int origin_world) {
  vcx_annotate_process_wait(origin_world, ANNOTATION_QUEUE);
  gt_log_annot_wait(origin_world, "world/5");
}

/* The rank of world rank w in c (this rank's part of it). */
static int rank_in(MPI_Comm c, int w) {
  if (c == W) return w;
  MPI_Group wg, cg;
  int r;
  MPI_Comm_group(W, &wg);
  MPI_Comm_group(c, &cg);
  MPI_Group_translate_ranks(wg, 1, &w, cg, &r);
  MPI_Group_free(&wg);
  MPI_Group_free(&cg);
  if (r == MPI_UNDEFINED) gt_fail("fuzz: world rank %d is not in the partner's communicator", w);
  return r;
}

/* A's messages to B, then B's to A, on the communicator of the round (the
 * pairs are drawn within each part of a split). When B sends ready, A posts
 * its receives first and B blocks on A's first message, which A sends only
 * after posting. */
static void round_p2p(int round) {
  int which = pick(nsplits + 1);
  MPI_Comm c = which == 0 ? W : splits[which - 1].comm;
  const split_comm *s = which == 0 ? NULL : &splits[which - 1];
  int perm[MAX_RANKS];
  for (int i = 0; i < n; ++i) perm[i] = i;
  for (int i = n - 1; i > 0; --i) {
    int j = pick(i + 1), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  /* Pairs are consecutive members of one part in the shuffled order. */
  int used[MAX_RANKS] = {0};
  for (int p = 0; p < n; ++p) {
    int a = perm[p];
    if (used[a]) continue;
    int b = -1;
    for (int q = p + 1; q < n && b < 0; ++q)
      if (!used[perm[q]] && (!s || s->colour[perm[q]] == s->colour[a])) b = perm[q];
    if (b < 0) continue;
    used[a] = used[b] = 1;
    int members = 0;
    for (int r = 0; r < n; ++r) members += !s || s->colour[r] == s->colour[a];
    dir_plan ab, ba;
    plan_direction(&ab, round, 0, 0, members == 2);
    int ready = ab.nmsg > 0 && chance(40);
    plan_direction(&ba, round, 1, ready, members == 2);
    int annotate = chance(15);
    if (me == a) {
      int pb = rank_in(c, b);
      if (annotate) annotate_signal(b);
      if (ba.preposted)
        for (int i = 0; i < ba.nmsg; ++i) recv_one(&ba.m[i], pb, 0, c);
      send_all(&ab, pb, c);
      if (!ba.preposted)
        for (int i = 0; i < ba.nmsg; ++i) recv_one(&ba.m[i], pb, 0, c);
    } else if (me == b) {
      int pa = rank_in(c, a);
      for (int i = 0; i < ab.nmsg; ++i) recv_one(&ab.m[i], pa, ba.preposted && i == 0, c);
      send_all(&ba, pa, c);
      if (annotate) annotate_wait(a);
    }
  }
}

static void round_coll(int round) {
  int which = pick(nsplits + 1);
  MPI_Comm c = which == 0 ? W : splits[which - 1].comm;
  const split_comm *s = which == 0 ? NULL : &splits[which - 1];
  int op = pick(9);
  int rootdraw = pick(MAX_RANKS);
  int size, crank;
  MPI_Comm_size(c, &size);
  MPI_Comm_rank(c, &crank);
  int root = rootdraw % size;
  int v = me + 1, out = -1;
  switch (op) {
  case 0:
    check_rc(MPI_Barrier(c), "MPI_Barrier");
    gt_log_coll("MPI_Barrier", "all_to_all", c, -1);
    break;
  case 1:
    out = crank == root ? round * 7 : -1;
    check_rc(MPI_Bcast(&out, 1, MPI_INT, root, c), "MPI_Bcast");
    gt_log_coll("MPI_Bcast", "one_to_all", c, root);
    if (out != round * 7) gt_fail("MPI_Bcast delivered %d, expected %d", out, round * 7);
    break;
  case 2:
    check_rc(MPI_Reduce(&v, &out, 1, MPI_INT, MPI_SUM, root, c), "MPI_Reduce");
    gt_log_coll("MPI_Reduce", "all_to_one", c, root);
    if (crank == root && out != member_sum(c, s))
      gt_fail("MPI_Reduce gave %d, expected %d", out, member_sum(c, s));
    break;
  case 3:
    check_rc(MPI_Allreduce(&v, &out, 1, MPI_INT, MPI_SUM, c), "MPI_Allreduce");
    gt_log_coll("MPI_Allreduce", "all_to_all", c, -1);
    if (out != member_sum(c, s))
      gt_fail("MPI_Allreduce gave %d, expected %d", out, member_sum(c, s));
    break;
  case 4:
    check_rc(MPI_Scan(&v, &out, 1, MPI_INT, MPI_SUM, c), "MPI_Scan");
    gt_log_coll("MPI_Scan", "prefix", c, -1);
    if (out < v) gt_fail("MPI_Scan gave %d", out);
    break;
  case 5: {
    int sb[MAX_RANKS], rb[MAX_RANKS];
    for (int i = 0; i < size; ++i) sb[i] = crank * 100 + i;
    check_rc(MPI_Alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, c), "MPI_Alltoall");
    gt_log_coll("MPI_Alltoall", "all_to_all", c, -1);
    for (int i = 0; i < size; ++i)
      if (rb[i] != i * 100 + crank) gt_fail("MPI_Alltoall slot %d holds %d", i, rb[i]);
    break;
  }
  default: {
    /* Non-blocking: completed with the rank's other pending requests. */
    gt_req r;
    gt_req_send(&r);
    MPI_Request req;
    int *buf = hold(2 * sizeof(int));
    buf[0] = v;
    if (op == 6) {
      check_rc(MPI_Ibarrier(c, &req), "MPI_Ibarrier");
      gt_log_icoll("MPI_Ibarrier", "all_to_all", c, -1, &r);
    } else if (op == 7) {
      check_rc(MPI_Ibcast(buf, 1, MPI_INT, root, c, &req), "MPI_Ibcast");
      gt_log_icoll("MPI_Ibcast", "one_to_all", c, root, &r);
    } else {
      check_rc(MPI_Iallreduce(buf, buf + 1, 1, MPI_INT, MPI_SUM, c, &req), "MPI_Iallreduce");
      gt_log_icoll("MPI_Iallreduce", "all_to_all", c, -1, &r);
    }
    gt_reqs_add(&pending, req, &r, 0, 0);
  }
  }
}

/* ---- Fan-in rounds ---------------------------------------------------------- */

/* One in FANIN_PCT percent of the rounds, with 3 or more ranks. */
#define FANIN_PCT 20

typedef enum { FANIN_RECV, FANIN_IRECV, FANIN_MIXED } fanin_style;

/* Two or more senders, each with one message, to one receiver, which takes
 * them with MPI_ANY_SOURCE (see the header comment). The receiver is a
 * random rank; the senders a random subset of the other members of its
 * part of world or of a random live split (world when that part has fewer
 * than 3 members). All messages of the round have one size: a wildcard receive
 * cannot know whose message it gets, and gt checks the received count. */
static void round_fanin(int round) {
  int which = pick(nsplits + 1);
  const split_comm *s = which == 0 ? NULL : &splits[which - 1];
  int recv = pick(n); /* world rank */
  int senders[MAX_RANKS], nothers = 0;
  for (int w = 0; w < n; ++w)
    if (w != recv && (!s || s->colour[w] == s->colour[recv])) senders[nothers++] = w;
  if (nothers < 2) {
    s = NULL;
    nothers = 0;
    for (int w = 0; w < n; ++w)
      if (w != recv) senders[nothers++] = w;
  }
  MPI_Comm c = s ? s->comm : W; /* only used by the receiver and the senders */
  for (int i = nothers - 1; i > 0; --i) {
    int j = pick(i + 1), t = senders[i];
    senders[i] = senders[j];
    senders[j] = t;
  }
  int nsend = 2 + pick(nothers - 1); /* the first nsend of the shuffled others */
  int tag = round * 2 * MAX_MSGS;    /* this round's p2p tags are free */
  int large = chance(10);
  int count = large ? LARGE_COUNT : GT_HDR + pick(30);
  static const char *modes[] = {"std", "sync", "buffered"};
  const char *mode[MAX_RANKS];
  int send_nb[MAX_RANKS];
  for (int i = 0; i < nsend; ++i) {
    mode[i] = modes[pick(3)];
    /* Large buffered messages would only test the attached buffer's size. */
    if (large && !strcmp(mode[i], "buffered")) mode[i] = "std";
    send_nb[i] = chance(50);
  }
  fanin_style style = (fanin_style)pick(3);
  int nirecv = style == FANIN_RECV ? 0 : style == FANIN_IRECV ? nsend : 1 + pick(nsend - 1);
  static const gt_method methods[] = {GT_WAITALL, GT_WAITANY, GT_TESTSOME};
  gt_method method = methods[pick(3)];
  /* MPI_ANY_TAG on some blocking receives: the round then ends with a
   * barrier, or a sender or idle rank already in a later round could send
   * the receiver a message such a receive would take. */
  int anytag_round = chance(30), barrier = 0;
  int anytag[MAX_RANKS] = {0};
  for (int i = nirecv; i < nsend; ++i) {
    anytag[i] = anytag_round && chance(50);
    barrier |= anytag[i];
  }

  for (int i = 0; i < nsend; ++i) {
    if (me != senders[i]) continue;
    int dest = rank_in(c, recv);
    int *buf = malloc(sizeof(int) * (size_t)count);
    if (!buf) gt_fail("fuzz: out of memory");
    if (send_nb[i]) {
      gt_reqs one;
      gt_reqs_init(&one);
      gt_isend(&one, mode[i], buf, count, dest, tag, c);
      gt_complete(&one, GT_WAIT_EACH);
    } else {
      gt_send(mode[i], buf, count, dest, tag, c);
    }
    free(buf);
  }

  if (me == recv) {
    int *bufs[MAX_RANKS];
    for (int i = 0; i < nsend; ++i) {
      bufs[i] = malloc(sizeof(int) * (size_t)count);
      if (!bufs[i]) gt_fail("fuzz: out of memory");
    }
    gt_reqs posted;
    gt_reqs_init(&posted);
    for (int i = 0; i < nirecv; ++i) gt_irecv(&posted, bufs[i], count, MPI_ANY_SOURCE, tag, c);
    MPI_Status st[MAX_RANKS];
    for (int i = nirecv; i < nsend; ++i)
      digest += gt_recv(bufs[i], count, MPI_ANY_SOURCE, anytag[i] ? MPI_ANY_TAG : tag, c, &st[i]);
    gt_complete(&posted, method);
    digest += posted.digest;
    /* Whose message each receive got is MPI's choice; every sender's
     * message must have arrived exactly once. */
    int got[MAX_RANKS] = {0};
    for (int i = 0; i < nsend; ++i) {
      gt_msgid id = gt_read(bufs[i]);
      int k = 0;
      while (k < nsend && senders[k] != id.src) ++k;
      if (k == nsend) gt_fail("fuzz: fan-in receive %d got a message of rank %d", i, id.src);
      if (got[k]++) gt_fail("fuzz: fan-in got two messages of rank %d", id.src);
      if (i >= nirecv) expect_match(&st[i], rank_in(c, id.src), tag, "fan-in receive");
      free(bufs[i]);
    }
  }

  if (barrier) {
    check_rc(MPI_Barrier(W), "MPI_Barrier");
    gt_log_coll("MPI_Barrier", "all_to_all", W, -1);
  }
}

/* ---- Lock epochs ----------------------------------------------------------- */

static MPI_Win win;
static int *winbuf;
static long long added[MAX_RANKS]; /* what this script adds to each rank */

/* Every rank adds 1 to a random target inside one fence epoch. */
static void round_fence(void) {
  int target[MAX_RANKS];
  for (int r = 0; r < n; ++r) {
    target[r] = pick(n);
    ++added[target[r]];
  }
  int one = 1;
  gt_win_fence(0, win);
  check_rc(MPI_Accumulate(&one, 1, MPI_INT, target[me], 0, 1, MPI_INT, MPI_SUM, win),
           "MPI_Accumulate");
  gt_win_fence(0, win);
}

/* Two MPI_Win_lock_all epochs at once can deadlock in MPICH: each takes the
 * targets' shared locks one by one, in its own order, and an exclusive
 * request queued at a target holds back later shared ones, so each can hold
 * a lock the other waits for behind an exclusive request. So at most one
 * rank locks all per round, and a round that has one ends with a barrier:
 * no lock_all epoch overlaps another, in this round or the next. Epochs on
 * one target never hold a lock while waiting for another. */
static void round_lock(void) {
  int lock_all_taken = 0;
  for (int r = 0; r < n; ++r) {
    int kind = pick(4); /* 0 exclusive, 1 shared, 2 lock_all, 3 nothing */
    int target = pick(n);
    if (kind == 2 && lock_all_taken) kind = 1;
    if (kind == 2) lock_all_taken = 1;
    if (kind == 2) {
      for (int t = 0; t < n; ++t) ++added[t];
    } else if (kind != 3) {
      ++added[target];
    }
    if (r != me || kind == 3) continue;
    int one = 1;
    if (kind == 2) {
      gt_win_lock_all(0, win);
      for (int t = 0; t < n; ++t)
        check_rc(MPI_Accumulate(&one, 1, MPI_INT, t, 0, 1, MPI_INT, MPI_SUM, win),
                 "MPI_Accumulate");
      gt_win_unlock_all(win);
    } else {
      gt_win_lock(kind == 0 ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, target, 0, win);
      check_rc(MPI_Accumulate(&one, 1, MPI_INT, target, 0, 1, MPI_INT, MPI_SUM, win),
               "MPI_Accumulate");
      gt_win_unlock(target, win);
    }
  }
  if (lock_all_taken) {
    check_rc(MPI_Barrier(W), "MPI_Barrier");
    gt_log_coll("MPI_Barrier", "all_to_all", W, -1);
  }
}

/* Generalized active target (post/start/complete/wait) on a window of its
 * own: a random pairing of the ranks, each pair one origin and one target.
 * The target exposes its window to the origin (MPI_Win_post, MPI_Win_wait),
 * the origin adds 1 inside an access epoch (MPI_Win_start, MPI_Win_complete);
 * each waits only for its partner. */
static MPI_Win pscw_win;
static int *pscw_buf;
static long long pscw_added;

static void round_pscw(void) {
  /* MPICH's MPI_Win_wait does not progress pending non-blocking
   * collectives (seed 3128 hangs natively: two targets wait while their
   * origins wait for an MPI_Ibcast those targets are root of): every rank
   * completes what it has pending first. */
  complete_all((gt_method)pick(GT_METHODS));
  int perm[MAX_RANKS];
  for (int i = 0; i < n; ++i) perm[i] = i;
  for (int i = n - 1; i > 0; --i) {
    int j = pick(i + 1), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  MPI_Group world;
  check_rc(MPI_Comm_group(W, &world), "MPI_Comm_group");
  for (int p = 0; p + 1 < n; p += 2) {
    int origin = perm[p], target = perm[p + 1];
    if (chance(50)) {
      int t = origin;
      origin = target;
      target = t;
    }
    if (me != origin && me != target) continue;
    int partner = me == origin ? target : origin;
    MPI_Group g;
    check_rc(MPI_Group_incl(world, 1, &partner, &g), "MPI_Group_incl");
    if (me == target) {
      gt_win_post(g, 0, pscw_win);
      gt_win_wait(pscw_win);
      ++pscw_added;
    } else {
      int one = 1;
      gt_win_start(g, 0, pscw_win);
      check_rc(MPI_Accumulate(&one, 1, MPI_INT, target, 0, 1, MPI_INT, MPI_SUM, pscw_win),
               "MPI_Accumulate");
      gt_win_complete(pscw_win);
    }
    check_rc(MPI_Group_free(&g), "MPI_Group_free");
  }
  check_rc(MPI_Group_free(&world), "MPI_Group_free");
  /* MPICH 4.0's MPI_Win_start waits until the number of posts the origin
   * received, from any rank, equals its group's size, then clears it: a
   * post for the origin's next access epoch that arrives before this start
   * returns makes the count pass the group's size, and the start never
   * returns (seed 7 at 3 ranks, under vcx-run about every second run). No
   * rank posts again before every rank is done with this round. */
  check_rc(MPI_Barrier(W), "MPI_Barrier");
  gt_log_coll("MPI_Barrier", "all_to_all", W, -1);
}

/* ---- The script ------------------------------------------------------------ */

static unsigned long parse_number(const char *s, const char *what) {
  char *end;
  unsigned long v = strtoul(s, &end, 10);
  if (!*s || *end) {
    if (me == 0) fprintf(stderr, "vcx: fuzz runner: %s must be a number, got '%s'\n", what, s);
    MPI_Abort(W, 2);
  }
  return v;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  gt_init();
  me = gt_rank();
  n = gt_size();
  if (argc != 3) {
    if (me == 0) fprintf(stderr, "vcx: usage: %s SEED ROUNDS\n", argv[0]);
    MPI_Abort(W, 2);
  }
  unsigned long seed = parse_number(argv[1], "SEED");
  int rounds = (int)parse_number(argv[2], "ROUNDS");
  if (n > MAX_RANKS) gt_fail("at most %d ranks", MAX_RANKS);
  if (rounds > 2000) gt_fail("at most 2000 rounds (tags must stay below 32767)");
  rng_state = seed;

  gt_reqs_init(&pending);
  void *bsend = malloc(BSEND_BYTES);
  if (!bsend) gt_fail("fuzz: out of memory");
  check_rc(MPI_Buffer_attach(bsend, BSEND_BYTES), "MPI_Buffer_attach");
  gt_win_allocate(4 * sizeof(int), sizeof(int), W, "locks", &winbuf, &win);
  winbuf[0] = 0;
  /* Makes the zeroed counters visible before any lock. */
  gt_win_fence(0, win);
  gt_win_allocate(sizeof(int), sizeof(int), W, "pscw", &pscw_buf, &pscw_win);
  pscw_buf[0] = 0;
  gt_win_fence(0, pscw_win);

  for (int round = 0; round < rounds; ++round) {
    int kind = n >= 3 && chance(FANIN_PCT) ? -1 : pick(100);
    if (kind < 0)
      round_fanin(round);
    else if (kind < 50)
      round_p2p(round);
    else if (kind < 75)
      round_coll(round);
    else if (kind < 83)
      round_split(round);
    else if (kind < 90)
      round_lock();
    else if (kind < 95)
      round_fence();
    else
      round_pscw();
    for (int r = 0; r < n; ++r) {
      int now = chance(35);
      gt_method m = (gt_method)pick(GT_METHODS);
      if (r == me && (now || pending.n > PENDING_LIMIT)) complete_all(m);
    }
  }
  complete_all((gt_method)pick(GT_METHODS));

  gt_win_fence(0, win);
  if (winbuf[0] != added[me])
    gt_fail("window counter %d, expected %lld", winbuf[0], added[me]);
  gt_win_free(&win);
  gt_win_fence(0, pscw_win);
  if (pscw_buf[0] != pscw_added)
    gt_fail("post/start window counter %d, expected %lld", pscw_buf[0], pscw_added);
  gt_win_free(&pscw_win);
  for (int i = 0; i < nsplits; ++i) {
    gt_comm_remove(splits[i].comm);
    check_rc(MPI_Comm_free(&splits[i].comm), "MPI_Comm_free");
  }
  int size;
  check_rc(MPI_Buffer_detach(&bsend, &size), "MPI_Buffer_detach");
  free(bsend);

  printf("rank %d: seed %lu rounds %d digest %lu locks %lld\n", me, seed, rounds, digest,
         added[me]);
  gt_finalize();
  MPI_Finalize();
  return 0;
}
