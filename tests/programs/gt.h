/* Ground-truth logging for the vcx integration test programs.
 *
 * Each rank appends one JSON object per MPI call that the oracle
 * (tests/oracle/oracle.py) needs, in program order, right after the call
 * returns, to $VCX_TEST_GT_DIR/gt-<world rank>.jsonl. Without that variable
 * nothing is written, so the programs also run as plain MPI programs.
 *
 * Message identity travels in the payload: the first two ints of every
 * message buffer are (sender world rank, per-sender counter), see gt_stamp().
 * Receivers read the id back from the received buffer, so the log records the
 * match MPI actually made, including for wildcard receives.
 *
 * A line is built as: gt_begin(call); any number of gt_op_*(); gt_end().
 * Line: {"call": "<MPI name as called, e.g. MPI_Send_c>", "ops": [op, ...]}.
 * A line with no primitive op (an unsuccessful MPI_Test, a probe, an _init)
 * is allowed and is not clocked. Ranks are always world ranks; requests
 * ("r<k>") and message handles ("m<k>") are named per rank. Ops:
 *
 *   send     {mode, msg, dest[, req]}  a message leaves (signal); without req
 *            a blocking send (mode "sync": also waits for the answer), with
 *            req the initiation of Isend/.../a started persistent send
 *   recv     {msg}                     blocking receive of msg (wait); the
 *            answer to a sync message is this call's recorded clock
 *   post     {req}                     a receive request is posted here
 *            (MPI_Irecv, or MPI_Start(all) of a persistent receive): its
 *            answer clock is the clock at this call
 *   complete {req[, msg]}              request completed: a receive (msg it
 *            got) waits, a sync send waits for its answer, a collective
 *            request does its wait part, anything else does nothing
 *   init     {req, type}               persistent request created (type
 *            "send" | "recv" | "coll"); no primitive. Each later start logs
 *            the op of the non-blocking form (send / post / coll) with that
 *            req, so a started send carries a fresh msg id
 *   free     {req}                     MPI_Request_free; no primitive
 *   status   {req}                     MPI_Request_get_status; no primitive
 *   mprobe   {handle}                  MPI_Mprobe/MPI_Improbe found a message:
 *            the receive is posted and matched here (its answer clock)
 *   mrecv    {handle, msg}             MPI_Mrecv: waits for msg
 *   imrecv   {handle, req}             MPI_Imrecv: req receives the message
 *            of handle; completion as for a receive request
 *   coll     {kind, comm, members, root[, req]} on an intracommunicator:
 *            kind "all_to_all" | "one_to_all" | "all_to_one" | "prefix"
 *            (members in communicator-rank order) | "neighbor" (plus "in" and
 *            "out": this member's in-/out-neighbour lists in MPI's order,
 *            MPI_PROC_NULL skipped, repeats kept). Without req a blocking
 *            call; with req the initiation (non-blocking or persistent start)
 *            whose wait part the completion of req does.
 *   coll     {kind, comm, local, remote, root[, req]} on an
 *            intercommunicator: this member's own group and the other one.
 *            Rooted kinds name the root's world rank at every member; the
 *            root's group's other members (MPI_PROC_NULL) log the same op
 *            and take no part. "all_to_all" is the bipartite exchange.
 *
 * The k-th coll op on a communicator name (blocking, initiation or start)
 * is the k-th instance there at every member. Later kinds of
 * synchronisation extend the op list in the same style: a window is a
 * "comm" for fence-like collectives, and lock/PSCW epochs and MPI_Cancel
 * get ops of their own naming the window / request.
 */
#ifndef VCX_TEST_GT_H
#define VCX_TEST_GT_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Number of leading ints of a message buffer reserved for the message id. */
#define GT_HDR 2

typedef struct {
  int src; /* sender world rank */
  int cnt; /* per-sender counter */
} gt_msgid;

/* Program-side bookkeeping for one request: its log name and, for receive
 * requests, the buffer whose header identifies the message it got. */
typedef struct {
  char name[16];
  const int *rbuf; /* NULL for send requests */
} gt_req;

/* Call after MPI_Init / before MPI_Finalize. gt_init registers
 * MPI_COMM_WORLD under the name "world". */
void gt_init(void);
void gt_finalize(void);

int gt_rank(void); /* world rank */
int gt_size(void); /* world size */

/* Message ids. */
gt_msgid gt_stamp(int *buf);     /* writes a fresh id into buf[0..1] */
gt_msgid gt_read(const int *buf); /* id found in a received buffer */

/* Request names: gt_req_send / gt_req_recv give `r` a fresh per-rank name
 * (gt_req_send also serves collective requests: they receive no message). */
void gt_req_send(gt_req *r);
void gt_req_recv(gt_req *r, const int *rbuf);
/* Marks a receive buffer as holding no message yet, so that logging a
 * request that did not receive anything fails loudly. */
void gt_unmark(int *rbuf);

/* Matched-probe message handles get names of their own. */
typedef struct {
  char name[16];
} gt_mhandle;
void gt_mhandle_new(gt_mhandle *h);

/* Communicator registry: maps handles to run-unique names and caches the
 * members as world ranks in communicator-rank order (for an
 * intercommunicator: the local and the remote group). Register right after
 * creation and drop before MPI_Comm_free (handles can be reused); the name
 * must be the same at every member. */
void gt_comm_add(MPI_Comm comm, const char *name);
void gt_comm_remove(MPI_Comm comm);
/* comm rank -> world rank, as point-to-point uses ranks: on an
 * intercommunicator the rank is one of the remote group. */
int gt_world_of(MPI_Comm comm, int comm_rank);
/* Rank of the local group -> world rank (same as gt_world_of on an
 * intracommunicator). */
int gt_local_world_of(MPI_Comm comm, int comm_rank);

/* Low-level line building. `mode` is "std", "buffered", "ready" or "sync";
 * `req` may be NULL for blocking calls. */
void gt_begin(const char *call);
void gt_op_send(const char *mode, gt_msgid msg, int dest_world, const char *req);
void gt_op_recv(gt_msgid msg);
void gt_op_post(const char *req);
void gt_op_complete(const gt_req *r); /* msg id read from r->rbuf if a receive */
/* `kind` is "all_to_all", "one_to_all", "all_to_one" or "prefix";
 * root_comm_rank < 0 logs a null root. Intracommunicators only. */
void gt_op_coll(const char *kind, MPI_Comm comm, int root_comm_rank);
/* Any communicator; the root as a world rank (< 0: none); req NULL for a
 * blocking call, else the request of the initiation or start. */
void gt_op_coll_req(const char *kind, MPI_Comm comm, int root_world, const char *req);
/* Neighbourhood collective on a Cartesian, graph or distributed-graph
 * communicator: the neighbour lists are read from the topology. */
void gt_op_neighbor(MPI_Comm comm, const char *req);
void gt_op_init(const char *req, const char *type);
void gt_op_free(const char *req);
void gt_op_status(const char *req);
void gt_op_mprobe(const gt_mhandle *h);
void gt_op_mrecv(const gt_mhandle *h, gt_msgid msg);
void gt_op_imrecv(const gt_mhandle *h, const char *req);
void gt_end(void);

/* One-op conveniences; `comm`/`dest` are given as the program used them and
 * translated to world ranks here. */
void gt_log_send(const char *call, const char *mode, gt_msgid msg, MPI_Comm comm,
                 int dest);
void gt_log_isend(const char *call, const char *mode, gt_msgid msg, MPI_Comm comm,
                  int dest, const gt_req *r);
void gt_log_recv(const char *call, const int *rbuf);
void gt_log_post(const char *call, const gt_req *r);
void gt_log_coll(const char *call, const char *kind, MPI_Comm comm, int root_comm_rank);
/* Non-blocking collective initiation on an intracommunicator. */
void gt_log_icoll(const char *call, const char *kind, MPI_Comm comm, int root_comm_rank,
                  const gt_req *r);
/* Completion line for the requests info[idx[0..n-1]] (n may be 0). */
void gt_log_completed(const char *call, const gt_req *info, const int *idx, int n);

/* ---- Conveniences that make the MPI call and log it ------------------- */

/* Fill buf[GT_HDR..count-1] with a payload derived from the id in buf[0..1];
 * gt_check verifies a received buffer against its id and returns a digest.
 * Sums of digests do not depend on the order in which messages arrived. */
void gt_fill(int *buf, int count);
unsigned long gt_check(const int *buf, int count);

/* Blocking sends: stamp + fill buf, call MPI_Send/Bsend/Rsend/Ssend by mode
 * ("std", "buffered", "ready", "sync"), log. Returns the message id. */
gt_msgid gt_send(const char *mode, int *buf, int count, int dest, int tag, MPI_Comm comm);
/* MPI_Recv and log; returns the digest of the received message. */
unsigned long gt_recv(int *buf, int count, int src, int tag, MPI_Comm comm, MPI_Status *st);
/* Variants for programs that carry their own data after the header: only
 * the id is stamped, the payload is neither filled nor checked. */
gt_msgid gt_send_raw(const char *mode, int *buf, int count, int dest, int tag, MPI_Comm comm);
void gt_recv_raw(int *buf, int count, int src, int tag, MPI_Comm comm, MPI_Status *st);

/* A set of outstanding requests with their bookkeeping. Completed slots hold
 * MPI_REQUEST_NULL until the set is reset. */
#define GT_SET_MAX 64
typedef struct {
  int n;
  MPI_Request req[GT_SET_MAX];
  gt_req info[GT_SET_MAX];
  int rcount[GT_SET_MAX];          /* receive buffer length, for gt_check */
  int verify[GT_SET_MAX];          /* check the payload of this receive */
  unsigned long digest;            /* sum of digests of completed receives */
} gt_reqs;

void gt_reqs_init(gt_reqs *s);
int gt_reqs_active(const gt_reqs *s);
/* Adds a request the program made itself (a collective, a started
 * persistent request, an MPI_Imrecv); rcount/verify as for receives, 0 for
 * the others. A persistent request is copied: the set marks its slot done
 * when it completes, the program keeps its handle to start it again. */
int gt_reqs_add(gt_reqs *s, MPI_Request req, const gt_req *info, int rcount, int verify);
/* Move the still-active requests of src to the end of dst; src is reset. */
void gt_reqs_move(gt_reqs *dst, gt_reqs *src);

/* MPI_Isend/Ibsend/Irsend/Issend by mode, logged; returns the slot. */
int gt_isend(gt_reqs *s, const char *mode, int *buf, int count, int dest, int tag,
             MPI_Comm comm);
/* MPI_Irecv, logged; returns the slot. */
int gt_irecv(gt_reqs *s, int *buf, int count, int src, int tag, MPI_Comm comm);
/* Same without filling / checking the payload (see gt_send_raw). */
int gt_isend_raw(gt_reqs *s, const char *mode, int *buf, int count, int dest, int tag,
                 MPI_Comm comm);
int gt_irecv_raw(gt_reqs *s, int *buf, int count, int src, int tag, MPI_Comm comm);

/* Calls MPI_Request_get_status on every active request of the set, `rounds`
 * times, logging each call; completes nothing. Returns how many calls
 * reported a complete request. */
int gt_poll_status(gt_reqs *s, int rounds);

/* Ways to complete every active request of a set. The test-based ones spin
 * a bounded number of times, then finish with the matching wait call, so
 * they never depend on timing to terminate. */
typedef enum {
  GT_WAITALL,
  GT_WAITANY,   /* MPI_Waitany until none is left */
  GT_WAITSOME,  /* MPI_Waitsome until none is left */
  GT_TEST,      /* MPI_Test round robin, then MPI_Wait */
  GT_TESTALL,   /* MPI_Testall until true, then MPI_Waitall */
  GT_TESTANY,   /* MPI_Testany until none is left, then MPI_Waitany */
  GT_TESTSOME,  /* MPI_Testsome until none is left, then MPI_Waitsome */
  GT_WAIT_EACH, /* MPI_Wait on each, last slot first */
  GT_METHODS
} gt_method;
const char *gt_method_name(gt_method m);
void gt_complete(gt_reqs *s, gt_method m);

/* Abort the whole job with a message (test programs treat every MPI error
 * and every unexpected payload as fatal). */
void gt_fail(const char *fmt, ...);

#ifdef __cplusplus
}
#endif

#endif
