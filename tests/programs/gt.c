/* Ground-truth logging for the vcx integration test programs; see gt.h. */
#include "gt.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GT_MAX_COMMS 64
#define GT_MAX_WINS 32

typedef struct {
  MPI_Comm comm;
  char name[48];
  int size;
  int *members; /* world ranks, communicator-rank order (local group) */
  int inter;    /* intercommunicator: the remote group follows */
  int rsize;
  int *rmembers;
} gt_comm_entry;

static int g_rank = -1;
static int g_size = 0;
static FILE *g_out = NULL;
static int g_msg_counter = 0;
static int g_req_counter = 0;
static int g_handle_counter = 0;
static gt_comm_entry g_comms[GT_MAX_COMMS];

typedef struct {
  MPI_Win win;
  char name[48];
  int size;
  int *members;       /* world ranks, window-rank order; NULL: slot unused */
  MPI_Aint slot;      /* lock counter displacement (disp units); -1: no counter */
  long long *counter; /* this rank's own counter */
  int *post;          /* open exposure epoch: its origins (world ranks) */
  int npost;          /* < 0: none open */
  int *start;         /* open access epoch: its targets (world ranks) */
  int nstart;
} gt_win_entry;

static gt_win_entry g_wins[GT_MAX_WINS];

/* The line under construction; only written out by gt_end so that a line is
 * never half-written when a rank aborts. */
static char *g_line = NULL;
static size_t g_len = 0;
static size_t g_cap = 0;
static int g_nops = 0;
static int g_open = 0;

/* Pending matching context (gt_match) for the next send/recv/post/mprobe
 * op. A receive's wanted source is translated when the op logs it (a send
 * ignores peer, which then need not be a valid rank). */
static struct {
  int set;
  MPI_Comm comm;
  char name[48];
  int peer; /* communicator rank of the wanted source, or MPI_ANY_SOURCE */
  int tag;
} g_match;

void gt_fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "[rank %d] test failure: ", g_rank);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}

static void append(const char *fmt, ...) {
  va_list ap;
  for (;;) {
    size_t room = g_cap - g_len;
    va_start(ap, fmt);
    int n = vsnprintf(g_line ? g_line + g_len : NULL, room, fmt, ap);
    va_end(ap);
    if (n < 0) gt_fail("gt: formatting failed");
    if ((size_t)n < room) {
      g_len += (size_t)n;
      return;
    }
    size_t cap = g_cap ? g_cap : 256;
    while (cap - g_len <= (size_t)n) cap *= 2;
    char *p = realloc(g_line, cap);
    if (!p) gt_fail("gt: out of memory");
    g_line = p;
    g_cap = cap;
  }
}

/* Names come from the programs themselves, but escape anyway so a bad name
 * shows up as a wrong name rather than as unparsable JSON. */
static void append_str(const char *s) {
  append("\"");
  for (; *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      append("\\%c", c);
    else if (c < 0x20)
      append("\\u%04x", c);
    else
      append("%c", c);
  }
  append("\"");
}

void gt_init(void) {
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const char *dir = getenv("VCX_TEST_GT_DIR");
  if (dir && *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/gt-%d.jsonl", dir, g_rank);
    g_out = fopen(path, "w");
    if (!g_out) gt_fail("gt: cannot open %s", path);
  }
  gt_comm_add(MPI_COMM_WORLD, "world");
}

void gt_finalize(void) {
  if (g_open) gt_fail("gt: line for a call left open at finalize");
  if (g_match.set) gt_fail("gt: gt_match context never used");
  if (g_out) {
    if (fclose(g_out) != 0) gt_fail("gt: cannot close the log");
    g_out = NULL;
  }
  for (int i = 0; i < GT_MAX_COMMS; ++i) {
    free(g_comms[i].members);
    free(g_comms[i].rmembers);
    g_comms[i].members = NULL;
    g_comms[i].rmembers = NULL;
    g_comms[i].comm = MPI_COMM_NULL;
  }
  for (int i = 0; i < GT_MAX_WINS; ++i) {
    free(g_wins[i].members);
    free(g_wins[i].post);
    free(g_wins[i].start);
    g_wins[i].members = g_wins[i].post = g_wins[i].start = NULL;
  }
  free(g_line);
  g_line = NULL;
  g_cap = g_len = 0;
}

FILE *gt_log_stream(void) { return g_out; }

int gt_rank(void) { return g_rank; }
int gt_size(void) { return g_size; }

gt_msgid gt_stamp(int *buf) {
  gt_msgid id = {g_rank, g_msg_counter++};
  buf[0] = id.src;
  buf[1] = id.cnt;
  return id;
}

gt_msgid gt_read(const int *buf) {
  gt_msgid id = {buf[0], buf[1]};
  if (id.src < 0 || id.src >= g_size || id.cnt < 0)
    gt_fail("gt: received buffer carries no message id (%d.%d)", id.src, id.cnt);
  return id;
}

static void name_req(gt_req *r) {
  snprintf(r->name, sizeof r->name, "r%d", g_req_counter++);
  r->cancel = r->cancelled = 0;
}

void gt_req_send(gt_req *r) {
  name_req(r);
  r->rbuf = NULL;
}

void gt_req_recv(gt_req *r, const int *rbuf) {
  name_req(r);
  r->rbuf = rbuf;
}

void gt_unmark(int *rbuf) { rbuf[0] = rbuf[1] = -1; }

void gt_mhandle_new(gt_mhandle *h) { snprintf(h->name, sizeof h->name, "m%d", g_handle_counter++); }

static gt_comm_entry *find_comm(MPI_Comm comm) {
  for (int i = 0; i < GT_MAX_COMMS; ++i)
    if (g_comms[i].members && g_comms[i].comm == comm) return &g_comms[i];
  return NULL;
}

/* World ranks of a group's members, in group-rank order. */
static int *group_to_world(MPI_Group group, int *size_out) {
  MPI_Group world_group;
  int size;
  MPI_Group_size(group, &size);
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  /* +1: an empty group still gets an allocation. */
  int *ranks = malloc(sizeof(int) * (size_t)(size + 1));
  int *members = malloc(sizeof(int) * (size_t)(size + 1));
  if (!ranks || !members) gt_fail("gt: out of memory");
  for (int i = 0; i < size; ++i) ranks[i] = i;
  if (size > 0) MPI_Group_translate_ranks(group, size, ranks, world_group, members);
  MPI_Group_free(&world_group);
  free(ranks);
  *size_out = size;
  return members;
}

void gt_comm_add(MPI_Comm comm, const char *name) {
  if (comm == MPI_COMM_NULL) gt_fail("gt: registering MPI_COMM_NULL as %s", name);
  if (find_comm(comm)) gt_fail("gt: communicator %s registered twice", name);
  gt_comm_entry *e = NULL;
  for (int i = 0; i < GT_MAX_COMMS && !e; ++i)
    if (!g_comms[i].members) e = &g_comms[i];
  if (!e) gt_fail("gt: too many communicators");

  int inter = 0;
  MPI_Comm_test_inter(comm, &inter);
  MPI_Group group;
  MPI_Comm_group(comm, &group);
  e->members = group_to_world(group, &e->size);
  MPI_Group_free(&group);
  e->inter = inter;
  e->rsize = 0;
  e->rmembers = NULL;
  if (inter) {
    MPI_Comm_remote_group(comm, &group);
    e->rmembers = group_to_world(group, &e->rsize);
    MPI_Group_free(&group);
  }
  e->comm = comm;
  snprintf(e->name, sizeof e->name, "%s", name);
}

void gt_comm_remove(MPI_Comm comm) {
  gt_comm_entry *e = find_comm(comm);
  if (!e) gt_fail("gt: removing an unregistered communicator");
  free(e->members);
  free(e->rmembers);
  e->members = NULL;
  e->rmembers = NULL;
  e->comm = MPI_COMM_NULL;
}

static gt_comm_entry *need_comm(MPI_Comm comm) {
  gt_comm_entry *e = find_comm(comm);
  if (!e) gt_fail("gt: communicator not registered");
  return e;
}

int gt_world_of(MPI_Comm comm, int comm_rank) {
  gt_comm_entry *e = need_comm(comm);
  if (!e->inter) return gt_local_world_of(comm, comm_rank);
  if (comm_rank < 0 || comm_rank >= e->rsize)
    gt_fail("gt: remote rank %d out of range for %s", comm_rank, e->name);
  return e->rmembers[comm_rank];
}

int gt_local_world_of(MPI_Comm comm, int comm_rank) {
  gt_comm_entry *e = need_comm(comm);
  if (comm_rank < 0 || comm_rank >= e->size)
    gt_fail("gt: rank %d out of range for %s", comm_rank, e->name);
  return e->members[comm_rank];
}

void gt_begin(const char *call) {
  if (g_open) gt_fail("gt: line opened twice (%s)", call);
  g_open = 1;
  g_len = 0;
  g_nops = 0;
  append("{\"call\":");
  append_str(call);
  append(",\"ops\":[");
}

void gt_match(MPI_Comm comm, int peer, int tag) {
  if (g_match.set) gt_fail("gt: gt_match twice without a send/recv/post/mprobe op between");
  gt_comm_entry *e = need_comm(comm);
  g_match.set = 1;
  g_match.comm = comm;
  snprintf(g_match.name, sizeof g_match.name, "%s", e->name);
  g_match.peer = peer;
  g_match.tag = tag;
}

/* Ops that take a matching context; any other op must not find one. */
static int takes_match(const char *op) {
  return !strcmp(op, "send") || !strcmp(op, "recv") || !strcmp(op, "post") ||
         !strcmp(op, "mprobe");
}

static void op_start(const char *op) {
  if (!g_open) gt_fail("gt: op %s outside a line", op);
  if (g_match.set && !takes_match(op)) gt_fail("gt: gt_match context before a %s op", op);
  append("%s{\"op\":\"%s\"", g_nops++ ? "," : "", op);
}

/* Appends the pending matching context, if any, and clears it: comm and
 * tag, and for a receive the wanted source as a world rank. Wildcards are
 * logged as "any". */
static void append_match(int receive) {
  if (!g_match.set) return;
  g_match.set = 0;
  append(",\"comm\":");
  append_str(g_match.name);
  if (receive) {
    if (g_match.peer == MPI_ANY_SOURCE)
      append(",\"src\":\"any\"");
    else
      append(",\"src\":%d", gt_world_of(g_match.comm, g_match.peer));
  }
  if (receive && g_match.tag == MPI_ANY_TAG)
    append(",\"tag\":\"any\"");
  else if (g_match.tag < 0)
    gt_fail("gt: %s tag %d", receive ? "receive" : "send", g_match.tag);
  else
    append(",\"tag\":%d", g_match.tag);
}

void gt_op_send(const char *mode, gt_msgid msg, int dest_world, const char *req) {
  op_start("send");
  append(",\"mode\":\"%s\",\"msg\":\"%d.%d\",\"dest\":%d", mode, msg.src, msg.cnt, dest_world);
  if (req) {
    append(",\"req\":");
    append_str(req);
  }
  append_match(0);
  append("}");
}

void gt_op_recv(gt_msgid msg) {
  op_start("recv");
  append(",\"msg\":\"%d.%d\"", msg.src, msg.cnt);
  append_match(1);
  append("}");
}

void gt_op_post(const char *req) {
  op_start("post");
  append(",\"req\":");
  append_str(req);
  append_match(1);
  append("}");
}

void gt_op_complete(const gt_req *r) {
  op_start("complete");
  append(",\"req\":");
  append_str(r->name);
  if (r->cancelled) {
    append(",\"cancelled\":true");
  } else if (r->rbuf) {
    gt_msgid id = gt_read(r->rbuf);
    append(",\"msg\":\"%d.%d\"", id.src, id.cnt);
  }
  append("}");
}

static void append_ranks(const char *key, const int *r, int n) {
  append(",\"%s\":[", key);
  for (int i = 0; i < n; ++i) append("%s%d", i ? "," : "", r[i]);
  append("]");
}

static void append_req(const char *req) {
  if (req) {
    append(",\"req\":");
    append_str(req);
  }
}

/* The part every coll op shares: kind, communicator, its groups. */
static gt_comm_entry *coll_head(const char *kind, MPI_Comm comm) {
  gt_comm_entry *e = need_comm(comm);
  op_start("coll");
  append(",\"kind\":\"%s\",\"comm\":", kind);
  append_str(e->name);
  if (e->inter) {
    append_ranks("local", e->members, e->size);
    append_ranks("remote", e->rmembers, e->rsize);
  } else {
    append_ranks("members", e->members, e->size);
  }
  return e;
}

void gt_op_coll_req(const char *kind, MPI_Comm comm, int root_world, const char *req) {
  coll_head(kind, comm);
  if (root_world < 0)
    append(",\"root\":null");
  else
    append(",\"root\":%d", root_world);
  append_req(req);
  append("}");
}

void gt_op_coll(const char *kind, MPI_Comm comm, int root_comm_rank) {
  if (need_comm(comm)->inter) gt_fail("gt: gt_op_coll on an intercommunicator");
  gt_op_coll_req(kind, comm, root_comm_rank < 0 ? -1 : gt_world_of(comm, root_comm_rank), NULL);
}

void gt_op_neighbor(MPI_Comm comm, const char *req) {
  int topo, me, in[64], out[64], nin = 0, nout = 0;
  MPI_Topo_test(comm, &topo);
  MPI_Comm_rank(comm, &me);
  if (topo == MPI_CART) {
    /* Per dimension the negative-direction neighbour, then the positive
     * one; the same list for receiving and sending. */
    int ndims;
    MPI_Cartdim_get(comm, &ndims);
    if (2 * ndims > 64) gt_fail("gt: too many dimensions");
    for (int d = 0; d < ndims; ++d) {
      int lo, hi;
      MPI_Cart_shift(comm, d, 1, &lo, &hi);
      if (lo != MPI_PROC_NULL) in[nin++] = lo;
      if (hi != MPI_PROC_NULL) in[nin++] = hi;
    }
    nout = nin;
    for (int i = 0; i < nin; ++i) out[i] = in[i];
  } else if (topo == MPI_GRAPH) {
    MPI_Graph_neighbors_count(comm, me, &nin);
    if (nin > 64) gt_fail("gt: too many neighbours");
    MPI_Graph_neighbors(comm, me, nin, in);
    nout = nin;
    for (int i = 0; i < nin; ++i) out[i] = in[i];
  } else if (topo == MPI_DIST_GRAPH) {
    int weighted, win[64], wout[64];
    MPI_Dist_graph_neighbors_count(comm, &nin, &nout, &weighted);
    if (nin > 64 || nout > 64) gt_fail("gt: too many neighbours");
    MPI_Dist_graph_neighbors(comm, nin, in, weighted ? win : MPI_UNWEIGHTED, nout, out,
                             weighted ? wout : MPI_UNWEIGHTED);
  } else {
    gt_fail("gt: neighbourhood collective on a communicator without topology");
  }
  /* Skip MPI_PROC_NULL (graph kinds cannot have it; kept general). */
  int k = 0;
  for (int i = 0; i < nin; ++i)
    if (in[i] != MPI_PROC_NULL) in[k++] = gt_world_of(comm, in[i]);
  nin = k;
  k = 0;
  for (int i = 0; i < nout; ++i)
    if (out[i] != MPI_PROC_NULL) out[k++] = gt_world_of(comm, out[i]);
  nout = k;
  coll_head("neighbor", comm);
  append_ranks("in", in, nin);
  append_ranks("out", out, nout);
  append(",\"root\":null");
  append_req(req);
  append("}");
}

void gt_op_init(const char *req, const char *type) {
  op_start("init");
  append(",\"req\":");
  append_str(req);
  append(",\"type\":\"%s\"}", type);
}

void gt_op_init_coll(const char *req, MPI_Comm comm) {
  gt_comm_entry *e = need_comm(comm);
  op_start("init");
  append(",\"req\":");
  append_str(req);
  append(",\"type\":\"coll\",\"comm\":");
  append_str(e->name);
  append("}");
}

static void op_req_only(const char *op, const char *req) {
  op_start(op);
  append(",\"req\":");
  append_str(req);
  append("}");
}

void gt_op_free(const char *req) { op_req_only("free", req); }
void gt_op_cancel(const char *req) { op_req_only("cancel", req); }
void gt_op_status(const char *req) { op_req_only("status", req); }

void gt_op_mprobe(const gt_mhandle *h) {
  op_start("mprobe");
  append(",\"handle\":");
  append_str(h->name);
  append_match(1);
  append("}");
}

void gt_op_mrecv(const gt_mhandle *h, gt_msgid msg) {
  op_start("mrecv");
  append(",\"handle\":");
  append_str(h->name);
  append(",\"msg\":\"%d.%d\"}", msg.src, msg.cnt);
}

void gt_op_imrecv(const gt_mhandle *h, const char *req) {
  op_start("imrecv");
  append(",\"handle\":");
  append_str(h->name);
  append_req(req);
  append("}");
}

void gt_end(void) {
  if (!g_open) gt_fail("gt: gt_end without gt_begin");
  if (g_match.set) gt_fail("gt: gt_match context left unused at the end of a line");
  g_open = 0;
  append("]}\n");
  if (g_out) {
    if (fwrite(g_line, 1, g_len, g_out) != g_len || fflush(g_out) != 0)
      gt_fail("gt: writing the log failed");
  }
}

void gt_log_send(const char *call, const char *mode, gt_msgid msg, MPI_Comm comm, int dest) {
  gt_begin(call);
  gt_op_send(mode, msg, gt_world_of(comm, dest), NULL);
  gt_end();
}

void gt_log_isend(const char *call, const char *mode, gt_msgid msg, MPI_Comm comm, int dest,
                  const gt_req *r) {
  gt_begin(call);
  gt_op_send(mode, msg, gt_world_of(comm, dest), r->name);
  gt_end();
}

void gt_log_recv(const char *call, const int *rbuf) {
  gt_begin(call);
  gt_op_recv(gt_read(rbuf));
  gt_end();
}

void gt_log_post(const char *call, const gt_req *r) {
  gt_begin(call);
  gt_op_post(r->name);
  gt_end();
}

void gt_log_coll(const char *call, const char *kind, MPI_Comm comm, int root_comm_rank) {
  gt_begin(call);
  gt_op_coll(kind, comm, root_comm_rank);
  gt_end();
}

void gt_log_icoll(const char *call, const char *kind, MPI_Comm comm, int root_comm_rank,
                  const gt_req *r) {
  gt_begin(call);
  gt_op_coll_req(kind, comm, root_comm_rank < 0 ? -1 : gt_world_of(comm, root_comm_rank),
                 r->name);
  gt_end();
}

void gt_log_completed(const char *call, const gt_req *info, const int *idx, int n) {
  gt_begin(call);
  for (int i = 0; i < n; ++i) gt_op_complete(&info[idx[i]]);
  gt_end();
}

/* ---- Conveniences ------------------------------------------------------ */

/* Upper bound on unsuccessful test calls before a completion loop falls back
 * to the blocking variant: keeps logs small and termination timing-free. */
#define GT_MAX_SPINS 200

static int payload_word(int src, int cnt, int i) {
  return (int)(((unsigned)src * 7919u + (unsigned)cnt * 104729u + (unsigned)i * 31u) & 0xffffu);
}

void gt_fill(int *buf, int count) {
  for (int i = GT_HDR; i < count; ++i) buf[i] = payload_word(buf[0], buf[1], i);
}

unsigned long gt_check(const int *buf, int count) {
  gt_msgid id = gt_read(buf);
  unsigned long d = (unsigned long)id.src * 1000003ul + (unsigned long)id.cnt * 7919ul;
  for (int i = GT_HDR; i < count; ++i) {
    if (buf[i] != payload_word(id.src, id.cnt, i))
      gt_fail("gt: message %d.%d corrupted at word %d", id.src, id.cnt, i);
    d += (unsigned long)buf[i];
  }
  return d;
}

static void check_rc(int rc, const char *what) {
  if (rc != MPI_SUCCESS) gt_fail("%s returned %d", what, rc);
}

static const char *send_call(const char *mode, int nonblocking) {
  if (!strcmp(mode, "std")) return nonblocking ? "MPI_Isend" : "MPI_Send";
  if (!strcmp(mode, "buffered")) return nonblocking ? "MPI_Ibsend" : "MPI_Bsend";
  if (!strcmp(mode, "ready")) return nonblocking ? "MPI_Irsend" : "MPI_Rsend";
  if (!strcmp(mode, "sync")) return nonblocking ? "MPI_Issend" : "MPI_Ssend";
  gt_fail("gt: unknown send mode %s", mode);
  return NULL;
}

static gt_msgid send_impl(const char *mode, int *buf, int count, int dest, int tag,
                          MPI_Comm comm, int fill) {
  gt_msgid id = gt_stamp(buf);
  if (fill) gt_fill(buf, count);
  const char *call = send_call(mode, 0);
  int rc;
  if (!strcmp(mode, "std"))
    rc = MPI_Send(buf, count, MPI_INT, dest, tag, comm);
  else if (!strcmp(mode, "buffered"))
    rc = MPI_Bsend(buf, count, MPI_INT, dest, tag, comm);
  else if (!strcmp(mode, "ready"))
    rc = MPI_Rsend(buf, count, MPI_INT, dest, tag, comm);
  else
    rc = MPI_Ssend(buf, count, MPI_INT, dest, tag, comm);
  check_rc(rc, call);
  gt_match(comm, dest, tag);
  gt_log_send(call, mode, id, comm, dest);
  return id;
}

gt_msgid gt_send(const char *mode, int *buf, int count, int dest, int tag, MPI_Comm comm) {
  return send_impl(mode, buf, count, dest, tag, comm, 1);
}

gt_msgid gt_send_raw(const char *mode, int *buf, int count, int dest, int tag, MPI_Comm comm) {
  return send_impl(mode, buf, count, dest, tag, comm, 0);
}

static void check_count(const MPI_Status *st, int count, const char *what) {
  int got = -1;
  MPI_Get_count(st, MPI_INT, &got);
  if (got != count) gt_fail("%s: received %d ints, expected %d", what, got, count);
}

void gt_recv_raw(int *buf, int count, int src, int tag, MPI_Comm comm, MPI_Status *st) {
  MPI_Status local;
  if (!st) st = &local;
  check_rc(MPI_Recv(buf, count, MPI_INT, src, tag, comm, st), "MPI_Recv");
  check_count(st, count, "MPI_Recv");
  gt_match(comm, src, tag);
  gt_log_recv("MPI_Recv", buf);
}

unsigned long gt_recv(int *buf, int count, int src, int tag, MPI_Comm comm, MPI_Status *st) {
  gt_recv_raw(buf, count, src, tag, comm, st);
  return gt_check(buf, count);
}

void gt_reqs_init(gt_reqs *s) {
  s->n = 0;
  s->digest = 0;
}

int gt_reqs_active(const gt_reqs *s) {
  int k = 0;
  for (int i = 0; i < s->n; ++i) k += s->req[i] != MPI_REQUEST_NULL;
  return k;
}

static int new_slot(gt_reqs *s) {
  if (s->n >= GT_SET_MAX) gt_fail("gt: request set full");
  return s->n++;
}

int gt_reqs_add(gt_reqs *s, MPI_Request req, const gt_req *info, int rcount, int verify) {
  int k = new_slot(s);
  s->req[k] = req;
  s->info[k] = *info;
  s->rcount[k] = rcount;
  s->verify[k] = verify;
  return k;
}

void gt_reqs_move(gt_reqs *dst, gt_reqs *src) {
  for (int i = 0; i < src->n; ++i) {
    if (src->req[i] == MPI_REQUEST_NULL) continue;
    int k = new_slot(dst);
    dst->req[k] = src->req[i];
    dst->info[k] = src->info[i];
    dst->rcount[k] = src->rcount[i];
    dst->verify[k] = src->verify[i];
  }
  dst->digest += src->digest;
  gt_reqs_init(src);
}

static int isend_impl(gt_reqs *s, const char *mode, int *buf, int count, int dest, int tag,
                      MPI_Comm comm, int fill) {
  int k = new_slot(s);
  gt_msgid id = gt_stamp(buf);
  if (fill) gt_fill(buf, count);
  gt_req_send(&s->info[k]);
  s->rcount[k] = 0;
  s->verify[k] = 0;
  const char *call = send_call(mode, 1);
  int rc;
  if (!strcmp(mode, "std"))
    rc = MPI_Isend(buf, count, MPI_INT, dest, tag, comm, &s->req[k]);
  else if (!strcmp(mode, "buffered"))
    rc = MPI_Ibsend(buf, count, MPI_INT, dest, tag, comm, &s->req[k]);
  else if (!strcmp(mode, "ready"))
    rc = MPI_Irsend(buf, count, MPI_INT, dest, tag, comm, &s->req[k]);
  else
    rc = MPI_Issend(buf, count, MPI_INT, dest, tag, comm, &s->req[k]);
  check_rc(rc, call);
  gt_match(comm, dest, tag);
  gt_log_isend(call, mode, id, comm, dest, &s->info[k]);
  return k;
}

int gt_isend(gt_reqs *s, const char *mode, int *buf, int count, int dest, int tag,
             MPI_Comm comm) {
  return isend_impl(s, mode, buf, count, dest, tag, comm, 1);
}

int gt_isend_raw(gt_reqs *s, const char *mode, int *buf, int count, int dest, int tag,
                 MPI_Comm comm) {
  return isend_impl(s, mode, buf, count, dest, tag, comm, 0);
}

static int irecv_impl(gt_reqs *s, int *buf, int count, int src, int tag, MPI_Comm comm,
                      int verify) {
  int k = new_slot(s);
  /* A recognisable non-id so that reading the header of an incomplete
   * receive fails loudly instead of logging a stale id. */
  gt_unmark(buf);
  gt_req_recv(&s->info[k], buf);
  s->rcount[k] = count;
  s->verify[k] = verify;
  check_rc(MPI_Irecv(buf, count, MPI_INT, src, tag, comm, &s->req[k]), "MPI_Irecv");
  gt_match(comm, src, tag);
  gt_log_post("MPI_Irecv", &s->info[k]);
  return k;
}

int gt_irecv(gt_reqs *s, int *buf, int count, int src, int tag, MPI_Comm comm) {
  return irecv_impl(s, buf, count, src, tag, comm, 1);
}

int gt_irecv_raw(gt_reqs *s, int *buf, int count, int src, int tag, MPI_Comm comm) {
  return irecv_impl(s, buf, count, src, tag, comm, 0);
}

void gt_log_cancel(MPI_Request *req, gt_req *r) {
  check_rc(MPI_Cancel(req), "MPI_Cancel");
  r->cancel = 1;
  gt_begin("MPI_Cancel");
  gt_op_cancel(r->name);
  gt_end();
}

void gt_cancel(gt_reqs *s, int k) {
  if (k < 0 || k >= s->n || s->req[k] == MPI_REQUEST_NULL)
    gt_fail("gt: cancelling slot %d, which holds no active request", k);
  gt_log_cancel(&s->req[k], &s->info[k]);
}

const char *gt_method_name(gt_method m) {
  static const char *names[GT_METHODS] = {"waitall", "waitany", "waitsome", "test",
                                          "testall", "testany", "testsome", "wait_each"};
  return (m >= 0 && m < GT_METHODS) ? names[m] : "?";
}

/* Bookkeeping after MPI reported the requests idx[0..n-1] complete: verify
 * received payloads and log the completion line. */
static void completed(gt_reqs *s, const char *call, const int *idx, const MPI_Status *st,
                      int n) {
  for (int i = 0; i < n; ++i) {
    int k = idx[i];
    if (k < 0 || k >= s->n) gt_fail("%s reported index %d", call, k);
    if (s->info[k].cancel) {
      int flag = 0;
      check_rc(MPI_Test_cancelled(&st[i], &flag), "MPI_Test_cancelled");
      s->info[k].cancelled = flag;
      if (flag) continue; /* received nothing */
    }
    if (s->info[k].rbuf) {
      check_count(&st[i], s->rcount[k], call);
      if (s->verify[k]) s->digest += gt_check(s->info[k].rbuf, s->rcount[k]);
    }
  }
  gt_log_completed(call, s->info, idx, n);
  /* MPI leaves a completed persistent request allocated and inactive; the
   * set's copy is retired so it is neither waited for nor logged again. */
  for (int i = 0; i < n; ++i) s->req[idx[i]] = MPI_REQUEST_NULL;
}

int gt_poll_status(gt_reqs *s, int rounds) {
  int done = 0;
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < s->n; ++i) {
      if (s->req[i] == MPI_REQUEST_NULL) continue;
      int flag;
      MPI_Status st;
      check_rc(MPI_Request_get_status(s->req[i], &flag, &st), "MPI_Request_get_status");
      gt_begin("MPI_Request_get_status");
      gt_op_status(s->info[i].name);
      gt_end();
      done += flag != 0;
    }
  }
  return done;
}

static int active_list(const gt_reqs *s, int *idx) {
  int k = 0;
  for (int i = 0; i < s->n; ++i)
    if (s->req[i] != MPI_REQUEST_NULL) idx[k++] = i;
  return k;
}

static void do_waitall(gt_reqs *s) {
  int idx[GT_SET_MAX];
  MPI_Status all[GT_SET_MAX], st[GT_SET_MAX];
  int k = active_list(s, idx);
  check_rc(MPI_Waitall(s->n, s->req, all), "MPI_Waitall");
  for (int i = 0; i < k; ++i) st[i] = all[idx[i]];
  completed(s, "MPI_Waitall", idx, st, k);
}

static void do_waitany(gt_reqs *s) {
  while (gt_reqs_active(s)) {
    int i;
    MPI_Status st;
    check_rc(MPI_Waitany(s->n, s->req, &i, &st), "MPI_Waitany");
    if (i == MPI_UNDEFINED) gt_fail("MPI_Waitany found no active request");
    completed(s, "MPI_Waitany", &i, &st, 1);
  }
}

static void do_waitsome(gt_reqs *s) {
  while (gt_reqs_active(s)) {
    int out, idx[GT_SET_MAX];
    MPI_Status st[GT_SET_MAX];
    check_rc(MPI_Waitsome(s->n, s->req, &out, idx, st), "MPI_Waitsome");
    if (out == MPI_UNDEFINED || out < 1) gt_fail("MPI_Waitsome completed nothing");
    completed(s, "MPI_Waitsome", idx, st, out);
  }
}

static void do_test(gt_reqs *s) {
  int spins = 0;
  while (gt_reqs_active(s) && spins < GT_MAX_SPINS) {
    for (int i = 0; i < s->n; ++i) {
      if (s->req[i] == MPI_REQUEST_NULL) continue;
      int flag;
      MPI_Status st;
      check_rc(MPI_Test(&s->req[i], &flag, &st), "MPI_Test");
      completed(s, "MPI_Test", &i, &st, flag ? 1 : 0);
      if (!flag) ++spins;
    }
  }
  for (int i = 0; i < s->n; ++i) {
    if (s->req[i] == MPI_REQUEST_NULL) continue;
    MPI_Status st;
    check_rc(MPI_Wait(&s->req[i], &st), "MPI_Wait");
    completed(s, "MPI_Wait", &i, &st, 1);
  }
}

static void do_testall(gt_reqs *s) {
  if (!gt_reqs_active(s)) return;
  for (int spins = 0; spins < GT_MAX_SPINS; ++spins) {
    int idx[GT_SET_MAX], flag;
    MPI_Status all[GT_SET_MAX], st[GT_SET_MAX];
    int k = active_list(s, idx);
    check_rc(MPI_Testall(s->n, s->req, &flag, all), "MPI_Testall");
    if (flag) {
      for (int i = 0; i < k; ++i) st[i] = all[idx[i]];
      completed(s, "MPI_Testall", idx, st, k);
      return;
    }
    completed(s, "MPI_Testall", idx, all, 0);
  }
  do_waitall(s);
}

static void do_testany(gt_reqs *s) {
  int spins = 0;
  while (gt_reqs_active(s) && spins < GT_MAX_SPINS) {
    int i, flag;
    MPI_Status st;
    check_rc(MPI_Testany(s->n, s->req, &i, &flag, &st), "MPI_Testany");
    if (flag && i == MPI_UNDEFINED) gt_fail("MPI_Testany found no active request");
    completed(s, "MPI_Testany", &i, &st, flag ? 1 : 0);
    if (!flag) ++spins;
  }
  do_waitany(s);
}

static void do_testsome(gt_reqs *s) {
  int spins = 0;
  while (gt_reqs_active(s) && spins < GT_MAX_SPINS) {
    int out, idx[GT_SET_MAX];
    MPI_Status st[GT_SET_MAX];
    check_rc(MPI_Testsome(s->n, s->req, &out, idx, st), "MPI_Testsome");
    if (out == MPI_UNDEFINED) gt_fail("MPI_Testsome found no active request");
    completed(s, "MPI_Testsome", idx, st, out);
    if (out == 0) ++spins;
  }
  do_waitsome(s);
}

static void do_wait_each(gt_reqs *s) {
  for (int i = s->n - 1; i >= 0; --i) {
    if (s->req[i] == MPI_REQUEST_NULL) continue;
    MPI_Status st;
    check_rc(MPI_Wait(&s->req[i], &st), "MPI_Wait");
    completed(s, "MPI_Wait", &i, &st, 1);
  }
}

void gt_complete(gt_reqs *s, gt_method m) {
  if (!gt_reqs_active(s)) return;
  switch (m) {
    case GT_WAITALL: do_waitall(s); break;
    case GT_WAITANY: do_waitany(s); break;
    case GT_WAITSOME: do_waitsome(s); break;
    case GT_TEST: do_test(s); break;
    case GT_TESTALL: do_testall(s); break;
    case GT_TESTANY: do_testany(s); break;
    case GT_TESTSOME: do_testsome(s); break;
    case GT_WAIT_EACH: do_wait_each(s); break;
    default: gt_fail("gt: unknown completion method %d", (int)m);
  }
  if (gt_reqs_active(s)) gt_fail("gt: %s left requests active", gt_method_name(m));
}

/* ---- One-sided communication ------------------------------------------- */

static gt_win_entry *find_win(MPI_Win win) {
  for (int i = 0; i < GT_MAX_WINS; ++i)
    if (g_wins[i].members && g_wins[i].win == win) return &g_wins[i];
  return NULL;
}

static gt_win_entry *need_win(MPI_Win win) {
  gt_win_entry *e = find_win(win);
  if (!e) gt_fail("gt: window not registered");
  return e;
}

/* Registers a new window and logs its creation line under `call`. */
static gt_win_entry *win_register(MPI_Win win, const char *name, const char *call) {
  if (find_win(win)) gt_fail("gt: window %s registered twice", name);
  gt_win_entry *e = NULL;
  for (int i = 0; i < GT_MAX_WINS && !e; ++i)
    if (!g_wins[i].members) e = &g_wins[i];
  if (!e) gt_fail("gt: too many windows");
  MPI_Group group;
  MPI_Win_get_group(win, &group);
  e->members = group_to_world(group, &e->size);
  MPI_Group_free(&group);
  e->win = win;
  snprintf(e->name, sizeof e->name, "%s", name);
  e->slot = -1;
  e->counter = NULL;
  e->post = malloc(sizeof(int) * (size_t)e->size);
  e->start = malloc(sizeof(int) * (size_t)e->size);
  if (!e->post || !e->start) gt_fail("gt: out of memory");
  e->npost = e->nstart = -1;

  gt_begin(call);
  op_start("win_create");
  append(",\"win\":");
  append_str(e->name);
  append_ranks("members", e->members, e->size);
  append("}");
  gt_end();
  return e;
}

static void op_win(const char *op, const gt_win_entry *e) {
  op_start(op);
  append(",\"win\":");
  append_str(e->name);
}

static void log_win_group(const char *call, const char *op, const gt_win_entry *e,
                          const int *group, int n) {
  gt_begin(call);
  op_win(op, e);
  append_ranks("group", group, n);
  append("}");
  gt_end();
}

static MPI_Aint gcd_aint(MPI_Aint a, MPI_Aint b) {
  while (b) {
    MPI_Aint t = a % b;
    a = b;
    b = t;
  }
  return a;
}

static MPI_Aint round_up(MPI_Aint x, MPI_Aint m) { return (x + m - 1) / m * m; }

typedef int (*alloc_fn)(MPI_Aint, int, MPI_Info, MPI_Comm, void *, MPI_Win *);

/* The counter goes right after the program's bytes, at an offset that is a
 * multiple of both disp_unit (so it has a displacement) and 8 (alignment). */
static void win_alloc(alloc_fn fn, const char *call, MPI_Aint size, int disp_unit,
                      MPI_Comm comm, const char *name, void *baseptr, MPI_Win *win) {
  if (size < 0 || disp_unit <= 0) gt_fail("gt: %s with size %ld, disp_unit %d", call,
                                          (long)size, disp_unit);
  MPI_Aint align = (MPI_Aint)disp_unit / gcd_aint(disp_unit, 8) * 8;
  MPI_Aint off = round_up(size, align);
  MPI_Aint total = round_up(off + (MPI_Aint)sizeof(long long), 64);
  char *base = NULL;
  check_rc(fn(total, disp_unit, MPI_INFO_NULL, comm, &base, win), call);
  gt_win_entry *e = win_register(*win, name, call);
  e->slot = off / disp_unit;
  e->counter = (long long *)(void *)(base + off);
  *e->counter = 0;
  *(void **)baseptr = base;
}

void gt_win_allocate(MPI_Aint size, int disp_unit, MPI_Comm comm, const char *name,
                     void *baseptr, MPI_Win *win) {
  win_alloc(MPI_Win_allocate, "MPI_Win_allocate", size, disp_unit, comm, name, baseptr, win);
}

void gt_win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Comm comm, const char *name,
                            void *baseptr, MPI_Win *win) {
  win_alloc(MPI_Win_allocate_shared, "MPI_Win_allocate_shared", size, disp_unit, comm, name,
            baseptr, win);
}

void gt_win_create(void *base, MPI_Aint size, int disp_unit, MPI_Comm comm, const char *name,
                   MPI_Win *win) {
  check_rc(MPI_Win_create(base, size, disp_unit, MPI_INFO_NULL, comm, win), "MPI_Win_create");
  win_register(*win, name, "MPI_Win_create");
}

int gt_win_world_of(MPI_Win win, int win_rank) {
  gt_win_entry *e = need_win(win);
  if (win_rank < 0 || win_rank >= e->size)
    gt_fail("gt: rank %d out of range for window %s", win_rank, e->name);
  return e->members[win_rank];
}

long long gt_win_counter(MPI_Win win) {
  gt_win_entry *e = need_win(win);
  if (!e->counter) gt_fail("gt: window %s has no lock counter", e->name);
  return *e->counter;
}

void gt_win_fence(int assert, MPI_Win win) {
  gt_win_entry *e = need_win(win);
  check_rc(MPI_Win_fence(assert, win), "MPI_Win_fence");
  gt_begin("MPI_Win_fence");
  op_win("win_fence", e);
  append("}");
  gt_end();
}

void gt_win_free(MPI_Win *win) {
  gt_win_entry *e = need_win(*win);
  if (e->npost >= 0 || e->nstart >= 0) gt_fail("gt: freeing window %s inside an epoch", e->name);
  check_rc(MPI_Win_free(win), "MPI_Win_free");
  gt_begin("MPI_Win_free");
  op_win("win_free", e);
  append("}");
  gt_end();
  /* Handles can be reused by later windows. */
  free(e->members);
  free(e->post);
  free(e->start);
  e->members = e->post = e->start = NULL;
  e->win = MPI_WIN_NULL;
}

/* World ranks of group into out (room for the window's size); returns
 * how many. */
static int group_into(const gt_win_entry *e, MPI_Group group, int *out) {
  int n;
  int *w = group_to_world(group, &n);
  if (n > e->size) gt_fail("gt: group of %d on window %s of %d", n, e->name, e->size);
  for (int i = 0; i < n; ++i) out[i] = w[i];
  free(w);
  return n;
}

void gt_win_post(MPI_Group group, int assert, MPI_Win win) {
  gt_win_entry *e = need_win(win);
  if (e->npost >= 0) gt_fail("gt: MPI_Win_post on %s inside an exposure epoch", e->name);
  int n = group_into(e, group, e->post);
  check_rc(MPI_Win_post(group, assert, win), "MPI_Win_post");
  e->npost = n;
  log_win_group("MPI_Win_post", "win_post", e, e->post, n);
}

void gt_win_start(MPI_Group group, int assert, MPI_Win win) {
  gt_win_entry *e = need_win(win);
  if (e->nstart >= 0) gt_fail("gt: MPI_Win_start on %s inside an access epoch", e->name);
  int n = group_into(e, group, e->start);
  check_rc(MPI_Win_start(group, assert, win), "MPI_Win_start");
  e->nstart = n;
  log_win_group("MPI_Win_start", "win_start", e, e->start, n);
}

void gt_win_complete(MPI_Win win) {
  gt_win_entry *e = need_win(win);
  if (e->nstart < 0) gt_fail("gt: MPI_Win_complete on %s without MPI_Win_start", e->name);
  check_rc(MPI_Win_complete(win), "MPI_Win_complete");
  log_win_group("MPI_Win_complete", "win_complete", e, e->start, e->nstart);
  e->nstart = -1;
}

void gt_win_wait(MPI_Win win) {
  gt_win_entry *e = need_win(win);
  if (e->npost < 0) gt_fail("gt: MPI_Win_wait on %s without MPI_Win_post", e->name);
  check_rc(MPI_Win_wait(win), "MPI_Win_wait");
  log_win_group("MPI_Win_wait", "win_wait", e, e->post, e->npost);
  e->npost = -1;
}

int gt_win_test(MPI_Win win) {
  gt_win_entry *e = need_win(win);
  if (e->npost < 0) gt_fail("gt: MPI_Win_test on %s without MPI_Win_post", e->name);
  int flag = 0;
  check_rc(MPI_Win_test(win, &flag), "MPI_Win_test");
  if (flag) {
    log_win_group("MPI_Win_test", "win_wait", e, e->post, e->npost);
    e->npost = -1;
  } else {
    gt_begin("MPI_Win_test");
    gt_end();
  }
  return flag;
}

static gt_win_entry *need_counter(MPI_Win win, int rank) {
  gt_win_entry *e = need_win(win);
  if (e->slot < 0) gt_fail("gt: window %s has no lock counter (use gt_win_allocate)", e->name);
  if (rank < 0 || rank >= e->size) gt_fail("gt: lock target %d on window %s", rank, e->name);
  return e;
}

/* The counter access of an epoch: add one (exclusive) or read (shared),
 * atomically, and complete it before going on. Returns the old value. */
static long long count_epoch(gt_win_entry *e, int rank, int exclusive) {
  long long one = 1, old = -1;
  check_rc(MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, rank, e->slot,
                            exclusive ? MPI_SUM : MPI_NO_OP, e->win),
           "MPI_Fetch_and_op");
  check_rc(MPI_Win_flush(rank, e->win), "MPI_Win_flush");
  if (old < 0) gt_fail("gt: lock counter of rank %d on %s reads %lld", rank, e->name, old);
  return old;
}

void gt_win_lock(int lock_type, int rank, int assert, MPI_Win win) {
  gt_win_entry *e = need_counter(win, rank);
  int exclusive = lock_type == MPI_LOCK_EXCLUSIVE;
  if (!exclusive && lock_type != MPI_LOCK_SHARED) gt_fail("gt: lock type %d", lock_type);
  check_rc(MPI_Win_lock(lock_type, rank, assert, win), "MPI_Win_lock");
  long long count = count_epoch(e, rank, exclusive);
  gt_begin("MPI_Win_lock");
  op_win("win_lock", e);
  append(",\"target\":%d,\"type\":\"%s\",\"count\":%lld}", e->members[rank],
         exclusive ? "exclusive" : "shared", count);
  gt_end();
}

void gt_win_unlock(int rank, MPI_Win win) {
  gt_win_entry *e = need_counter(win, rank);
  check_rc(MPI_Win_unlock(rank, win), "MPI_Win_unlock");
  gt_begin("MPI_Win_unlock");
  op_win("win_unlock", e);
  append(",\"target\":%d}", e->members[rank]);
  gt_end();
}

void gt_win_lock_all(int assert, MPI_Win win) {
  gt_win_entry *e = need_counter(win, 0);
  check_rc(MPI_Win_lock_all(assert, win), "MPI_Win_lock_all");
  gt_begin("MPI_Win_lock_all");
  op_win("win_lock_all", e);
  append(",\"counts\":[");
  for (int r = 0; r < e->size; ++r) append("%s%lld", r ? "," : "", count_epoch(e, r, 0));
  append("]}");
  gt_end();
}

void gt_win_unlock_all(MPI_Win win) {
  gt_win_entry *e = need_counter(win, 0);
  check_rc(MPI_Win_unlock_all(win), "MPI_Win_unlock_all");
  gt_begin("MPI_Win_unlock_all");
  op_win("win_unlock_all", e);
  append("}");
  gt_end();
}

/* ---- User annotations ---------------------------------------------------- */

void gt_log_annot_tick(void) {
  gt_begin("vcx_annotate_tick");
  op_start("annot_tick");
  append("}");
  gt_end();
}

static void log_annot_queue(const char *call, const char *op, const char *peer_key, int peer,
                            const char *queue) {
  gt_begin(call);
  op_start(op);
  append(",\"%s\":%d,\"queue\":", peer_key, peer);
  append_str(queue);
  append("}");
  gt_end();
}

void gt_log_annot_signal(int dest_world, const char *queue) {
  log_annot_queue("vcx_annotate_process_signal", "annot_signal", "dest", dest_world, queue);
}

void gt_log_annot_wait(int origin_world, const char *queue) {
  log_annot_queue("vcx_annotate_process_wait", "annot_wait", "origin", origin_world, queue);
}

static void log_annot_resource(const char *call, const char *op, const char *resource,
                               int deposition, const char *count_key, int count) {
  gt_begin(call);
  op_start(op);
  append(",\"resource\":");
  append_str(resource);
  append(",\"deposition\":%d,\"%s\":%d}", deposition, count_key, count);
  gt_end();
}

void gt_log_annot_deposit(const char *resource, int deposition_world, int ordinal) {
  log_annot_resource("vcx_annotate_resource_signal", "annot_deposit", resource,
                     deposition_world, "ordinal", ordinal);
}

void gt_log_annot_fetch(const char *resource, int deposition_world, int seen) {
  log_annot_resource("vcx_annotate_resource_wait", "annot_fetch", resource, deposition_world,
                     "seen", seen);
}
