/* Ground-truth logging for the OpenSHMEM test programs: the same log as
 * gt.h (one JSON object per clocked call, in program order, right after the
 * call returns, to $VCX_TEST_GT_DIR/gt-<PE>.jsonl; nothing without that
 * variable), with the ops an OpenSHMEM program needs:
 *
 *   coll          {kind, comm, members, root} a collective: "all_to_all"
 *                 over every PE (comm "world": shmem_barrier_all,
 *                 shmem_sync_all, the symmetric heap calls) or over an
 *                 active set (comm "set:<PE_start>:<logPE_stride>:<PE_size>",
 *                 members in set order); "one_to_all" for broadcasts, root
 *                 the root's PE number
 *   shmem_lock    {lock, count} the lock was acquired (shmem_set_lock, or
 *                 shmem_test_lock returning 0); count = acquisitions of the
 *                 lock before this one, measured inside the critical section
 *   shmem_unlock  {lock}        shmem_clear_lock of the lock held
 *
 * Lock order: right after acquiring lock <id>, the helpers increment the
 * counter of that lock, kept at PE 0 in static (symmetric) memory or where
 * sgt_lock_counters says, with
 * shmem_long_atomic_fetch_inc, and log the value fetched. The lock keeps
 * the increments apart, so the counts number the acquisitions in their
 * real order. A failed shmem_test_lock logs a line without ops (not
 * clocked).
 */
#ifndef VCX_TEST_SHMEM_GT_H
#define VCX_TEST_SHMEM_GT_H

#include <shmem.h>
#include <stdio.h>

#define SGT_MAX_LOCKS 8

/* After shmem_init / before shmem_finalize. */
void sgt_init(void);
void sgt_finalize(void);
/* Instead of sgt_init in an MPI+OpenSHMEM program: log into the stream
 * gt.c writes (gt_log_stream(); NULL logs nothing), which gt_finalize
 * closes. */
void sgt_init_stream(FILE *out);

/* Log a collective the program just called. */
void sgt_world(const char *call);
void sgt_set(const char *call, int pe_start, int log_stride, int pe_size);
void sgt_bcast(const char *call, int pe_root, int pe_start, int log_stride, int pe_size);

/* Keep the lock counters in `counters` (SGT_MAX_LOCKS longs of zeroed
 * symmetric heap memory, visible at PE 0 before any lock) instead of static
 * memory. With Open MPI 4.1.4 (UCX) a remote atomic on static memory
 * completes only while its target PE is inside a call that progresses
 * (wait_until, a collective), never while it spins on shmem_TYPE_test or
 * shmem_TYPE_g; heap memory needs no help from the target. Programs that
 * poll while others take locks use this. */
void sgt_lock_counters(long *counters);

/* shmem_set_lock, shmem_test_lock, shmem_clear_lock on `lock`, logged as
 * lock "lock<id>" (0 <= id < SGT_MAX_LOCKS, the same lock on every PE). */
void sgt_set_lock(long *lock, int id);
int sgt_test_lock(long *lock, int id);
void sgt_clear_lock(long *lock, int id);

/* Whether PE `pe` belongs to the active set. */
int sgt_in_set(int pe, int pe_start, int log_stride, int pe_size);

/* vcx/annotate_shmem.h annotations, logged right after the call with the
 * ops of gt.h (annot_tick, annot_signal, annot_wait, annot_deposit,
 * annot_fetch) under the names vcx_annotate_shmem_*. Queues and resources
 * are named by the caller; ordinal and seen as in gt.h. */
void sgt_annot_tick(void);
void sgt_annot_signal(int dest, const char *queue);
void sgt_annot_wait(int origin, const char *queue);
void sgt_annot_deposit(const char *resource, int deposition, int ordinal);
void sgt_annot_fetch(const char *resource, int deposition, int seen);

/* Flags (docs/clock-rules.md, "Flags"), logged right after the call:
 *
 *   flag_write  {flag, pe, mode, value, order}  not clocked: a write to
 *               flag <flag> at PE pe: mode "store" (p, one-element put,
 *               set, swap, a compare-and-swap that succeeded), "up" or
 *               "down" (fetch_add, fetch_inc: value is what it stored),
 *               "none" (a compare-and-swap that failed); order = its
 *               position in the flag's modification order (the program
 *               knows it by construction)
 *   flag_wait   {flag, value, order}  a wait that returned (wait_until,
 *               wait, a test that returned 1) on the caller's flag: the
 *               value it holds right after, and the order of the write
 *               that stored it
 *
 * Every write to a flag that some PE waits for must be logged. A test that
 * returned 0 logs a line without ops (not clocked). */
void sgt_flag_write(const char *call, const char *flag, int pe, const char *mode,
                    long long value, long long order);
void sgt_flag_wait(const char *call, const char *flag, long long value, long long order);
void sgt_unclocked(const char *call);

#endif
