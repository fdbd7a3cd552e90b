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
 * A line is built as: gt_begin(call); one or more gt_op_*(); gt_end().
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

/* Request names: gt_req_send / gt_req_recv give `r` a fresh per-rank name. */
void gt_req_send(gt_req *r);
void gt_req_recv(gt_req *r, const int *rbuf);

/* Communicator registry: maps handles to run-unique names and caches the
 * members as world ranks in communicator-rank order. Register right after
 * creation and drop before MPI_Comm_free (handles can be reused). */
void gt_comm_add(MPI_Comm comm, const char *name);
void gt_comm_remove(MPI_Comm comm);
int gt_world_of(MPI_Comm comm, int comm_rank); /* comm rank -> world rank */

/* Low-level line building. `mode` is "std", "buffered", "ready" or "sync";
 * `req` may be NULL for blocking calls. */
void gt_begin(const char *call);
void gt_op_send(const char *mode, gt_msgid msg, int dest_world, const char *req);
void gt_op_recv(gt_msgid msg);
void gt_op_post(const char *req);
void gt_op_complete(const gt_req *r); /* msg id read from r->rbuf if a receive */
/* `kind` is "all_to_all", "one_to_all" or "all_to_one"; root_comm_rank < 0
 * logs a null root. */
void gt_op_coll(const char *kind, MPI_Comm comm, int root_comm_rank);
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
