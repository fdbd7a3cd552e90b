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
 *   send     {mode, msg, dest[, req][, comm, tag]}  a message leaves
 *            (signal); without req a blocking send (mode "sync": also waits
 *            for the answer), with req the initiation of Isend/.../a started
 *            persistent send
 *   recv     {msg[, comm, src, tag]}   blocking receive of msg (wait); the
 *            answer to a sync message is this call's recorded clock
 *   post     {req[, comm, src, tag]}   a receive request is posted here
 *            (MPI_Irecv, or MPI_Start(all) of a persistent receive): its
 *            answer clock is the clock at this call
 *   complete {req[, msg][, cancelled]} request completed: a receive (msg it
 *            got) waits, a sync send waits for its answer, a collective
 *            request does its wait part, anything else does nothing. With
 *            "cancelled": true (MPI_Test_cancelled said so) it matched
 *            nothing and waits for nothing; no msg
 *   cancel   {req}                     MPI_Cancel; no primitive
 *   init     {req, type[, comm]}       persistent request created (type
 *            "send" | "recv" | "coll"; a "coll" names its comm); no
 *            primitive. Each later start logs the op of the non-blocking
 *            form (send / post / coll) with that req, so a started send
 *            carries a fresh msg id
 *   free     {req}                     MPI_Request_free; no primitive
 *   status   {req}                     MPI_Request_get_status; no primitive
 *   mprobe   {handle[, comm, src, tag]}  MPI_Mprobe/MPI_Improbe found a
 *            message: the receive is posted and matched here (its answer
 *            clock)
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
 * Matching fields (optional, logged after gt_match): "comm" is the
 * communicator's registered name and "tag" the tag; on a receive (recv,
 * post, mprobe) "src" and "tag" are what it wants: the source as a world
 * rank or "any" (MPI_ANY_SOURCE), the tag or "any" (MPI_ANY_TAG). The
 * oracle needs them for MPI's non-overtaking rule: a receive that took a
 * synchronous message while an earlier receive of its rank, able to match
 * that message, was still pending, took it after that earlier one matched
 * its own message, so the answer also carries that message's send.
 *
 * The k-th coll op on a communicator name (blocking or initiation) is the
 * k-th instance there at every member. Starts of persistent collectives
 * match by their init instead: the j-th start of the i-th persistent
 * collective initialised on a communicator is the j-th start of the i-th
 * at every member, in whatever order members start them.
 *
 * One-sided synchronisation names windows ("win"); groups are world ranks.
 * RMA data calls are not logged (they are not clocked).
 *
 *   win_create     {win, members}  a window created over a communicator
 *                  (MPI_Win_allocate, _create, _allocate_shared): its group
 *                  in communicator-rank order; no primitive
 *   win_fence      {win}           MPI_Win_fence: all-to-all on the group
 *   win_free       {win}           MPI_Win_free: all-to-all on the group.
 *                  The k-th fence-or-free of a window is the k-th at every
 *                  member
 *   win_post       {win, group}    exposure epoch to the origins in group:
 *                  signals each
 *   win_start      {win, group}    access epoch to the targets in group:
 *                  waits for each target's post
 *   win_complete   {win, group}    ends the access epoch (group repeats the
 *                  start group): signals each target
 *   win_wait       {win, group}    MPI_Win_wait or an MPI_Win_test that
 *                  returned true (an unsuccessful one logs no op): ends the
 *                  exposure epoch (group repeats the post group), waits for
 *                  each origin's complete
 *   win_lock       {win, target, type, count}  MPI_Win_lock, type
 *                  "exclusive" | "shared"; count is what the program read
 *                  from the target's lock counter inside the epoch: an
 *                  exclusive epoch increments it and logs the old value, a
 *                  shared one reads it; either way the number of exclusive
 *                  epochs that held this lock before
 *   win_unlock     {win, target}   releases that lock
 *   win_lock_all   {win, counts}   MPI_Win_lock_all: a shared epoch on
 *                  every member's lock; counts[i] read from the member at
 *                  window rank i
 *   win_unlock_all {win}           releases them all
 *
 * User annotations (vcx/annotate.h; call names "vcx_annotate_tick",
 * "vcx_annotate_process_signal", ...). Queues and resources are named by
 * strings that must be the same at every rank that uses them:
 *
 *   annot_tick     {}                          ticks; no exchange
 *   annot_signal   {dest, queue}               signals dest on queue
 *   annot_wait     {origin, queue}             waits for the next signal of
 *                  origin on queue (FIFO: the k-th wait takes the k-th signal)
 *   annot_deposit  {resource, deposition, ordinal}  deposits on the resource
 *                  kept at rank deposition; ordinal numbers the deposits on
 *                  that resource 0, 1, ... in an order the program knows
 *   annot_fetch    {resource, deposition, seen}  merges the deposits with
 *                  ordinal < seen: the program knows these happened before
 *                  (e.g. it polled a flag they set) and that no other
 *                  deposit happened before the fetch
 *
 * The lock counters live in a slot per rank that gt_win_allocate adds
 * after the program's part of the window; gt_win_lock and friends update or
 * read it atomically (MPI_Fetch_and_op + MPI_Win_flush) right after MPI's
 * lock returned, and log the lock line once the count is known (the counter
 * accesses are not logged; nothing clocked lies between).
 */
#ifndef VCX_TEST_GT_H
#define VCX_TEST_GT_H

#include <mpi.h>
#include <stdio.h>

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
  int cancel;      /* MPI_Cancel was called on it */
  int cancelled;   /* its completion reported it cancelled */
} gt_req;

/* Call after MPI_Init / before MPI_Finalize. gt_init registers
 * MPI_COMM_WORLD under the name "world". */
void gt_init(void);
void gt_finalize(void);
/* The log (NULL without VCX_TEST_GT_DIR): an MPI+OpenSHMEM program hands
 * it to shmem_gt.c (sgt_init_stream), so both models' calls are logged in
 * one file in program order. */
FILE *gt_log_stream(void);

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
/* Matching context for the next gt_op_send / gt_op_recv / gt_op_post /
 * gt_op_mprobe (also through gt_log_*), which logs it as the op's matching
 * fields and clears it. For a send `peer` is ignored; for a receive it is
 * the wanted source as a rank of comm (translated with gt_world_of) or
 * MPI_ANY_SOURCE; `tag` may be MPI_ANY_TAG for a receive. May be called
 * inside or before the line; a context still pending at another op, at
 * gt_end or at a second gt_match is a failure. Not thread-safe: call it
 * under the lock that protects the line. The gt_send/gt_recv/gt_isend/
 * gt_irecv conveniences (and _raw) call it themselves. */
void gt_match(MPI_Comm comm, int peer, int tag);
void gt_op_send(const char *mode, gt_msgid msg, int dest_world, const char *req);
void gt_op_recv(gt_msgid msg);
void gt_op_post(const char *req);
/* msg id read from r->rbuf if a receive; "cancelled" if r->cancelled */
void gt_op_complete(const gt_req *r);
void gt_op_cancel(const char *req);
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
/* A persistent collective created on comm (type "coll"). */
void gt_op_init_coll(const char *req, MPI_Comm comm);
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

/* MPI_Cancel on slot k, logged. The completion calls above then ask
 * MPI_Test_cancelled for that request and log what it says; a cancelled
 * receive is neither counted nor checked. */
void gt_cancel(gt_reqs *s, int k);
/* Same for a request the program keeps itself; it must then complete it
 * and log the completion through gt_op_complete with r->cancelled set from
 * MPI_Test_cancelled. */
void gt_log_cancel(MPI_Request *req, gt_req *r);

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

/* ---- One-sided communication ------------------------------------------ */

/* Window constructors: make the window over comm, register it under a
 * run-unique name (the same at every member) and log its creation.
 * gt_win_allocate(_shared) give the program `size` bytes at *baseptr and
 * add the lock-counter slot after them (zeroed here), so `size` and
 * `disp_unit` must be the same at every member. The allocation is rounded
 * up to 64 bytes: MPICH 4.0.2 (ch4:ucx) addresses remote accesses wrongly
 * in MPI_Win_allocate windows whose size is not a multiple of 16.
 * Before the first lock on a window, the program must synchronise it (an
 * MPI_Win_fence without MPI_MODE_NOPRECEDE), so the zeroed counters are
 * visible to the other members. gt_win_create wraps the program's own
 * buffer: it has no counter slot, and locking it fails. */
void gt_win_allocate(MPI_Aint size, int disp_unit, MPI_Comm comm, const char *name,
                     void *baseptr, MPI_Win *win);
void gt_win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Comm comm, const char *name,
                            void *baseptr, MPI_Win *win);
void gt_win_create(void *base, MPI_Aint size, int disp_unit, MPI_Comm comm, const char *name,
                   MPI_Win *win);
/* Window rank -> world rank. */
int gt_win_world_of(MPI_Win win, int win_rank);
/* This rank's own lock counter: the number of exclusive epochs its lock
 * has seen, as far as this rank's window copy shows after a
 * synchronisation. */
long long gt_win_counter(MPI_Win win);

/* Synchronisation calls: make the MPI call, check its result, log it. */
void gt_win_fence(int assert, MPI_Win win);
void gt_win_free(MPI_Win *win);
void gt_win_post(MPI_Group group, int assert, MPI_Win win);
void gt_win_start(MPI_Group group, int assert, MPI_Win win);
void gt_win_complete(MPI_Win win);
void gt_win_wait(MPI_Win win);
int gt_win_test(MPI_Win win); /* returns the flag */
/* Locks also take part in the counting (see above); `rank` is a window rank. */
void gt_win_lock(int lock_type, int rank, int assert, MPI_Win win);
void gt_win_unlock(int rank, MPI_Win win);
void gt_win_lock_all(int assert, MPI_Win win);
void gt_win_unlock_all(MPI_Win win);

/* ---- User annotations ---------------------------------------------------- */

/* One line per annotation, logged right after the vcx_annotate_* call;
 * ranks are world ranks. */
void gt_log_annot_tick(void);
void gt_log_annot_signal(int dest_world, const char *queue);
void gt_log_annot_wait(int origin_world, const char *queue);
void gt_log_annot_deposit(const char *resource, int deposition_world, int ordinal);
void gt_log_annot_fetch(const char *resource, int deposition_world, int seen);

/* Abort the whole job with a message (test programs treat every MPI error
 * and every unexpected payload as fatal). */
void gt_fail(const char *fmt, ...);

#ifdef __cplusplus
}
#endif

#endif
