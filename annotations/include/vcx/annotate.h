/* vcx user annotations (docs/annotations.md): synchronisation that no MPI
 * call shows, such as polling on a window location, made visible to vcx's
 * vector clocks.
 *
 * Header only, for C and C++. Every annotation is one call of
 * MPI_Pcontrol(VCX_ANNOTATE_PCONTROL_LEVEL, ...). The MPI standard leaves
 * the meaning of MPI_Pcontrol's levels to tools and MPICH's own MPI_Pcontrol
 * does nothing, so a program using this header needs no vcx library to
 * build or run: without vcx an annotation costs one call that returns at
 * once. Under vcx-run the interceptor turns it into an event for the tool.
 *
 * Call annotations between MPI_Init and MPI_Finalize. Ranks are world ranks
 * (MPI_COMM_WORLD) in the generic forms and communicator ranks in the
 * vcx_annotate_mpi_* forms; queues are integers >= 0; resources are any
 * 64-bit number chosen by the program.
 *
 *   vcx_annotate_tick()                        the caller's clock entry + 1
 *   vcx_annotate_process_signal(target, queue) signal target on queue
 *   vcx_annotate_process_wait(origin, queue)   wait for origin's next signal
 *                                              on queue and merge its clock
 *   vcx_annotate_resource_signal(res, dep)     deposit the clock on resource
 *                                              res kept at rank dep
 *   vcx_annotate_resource_wait(res, dep)       merge every deposit on res
 *                                              made before this call
 *
 * "An On-the-Fly Method to Exchange Vector Clocks in Distributed-Memory
 * Programs" (IV-F) names them AnnotateTick, AnnotateProcessSignal,
 * AnnotateProcessWait, AnnotateResourceSignal and AnnotateResourceWait.
 */
#ifndef VCX_ANNOTATE_H
#define VCX_ANNOTATE_H

#include <mpi.h>

/* The MPI_Pcontrol level that carries annotations ("VCXA"), and the layout
 * version of the arguments after it:
 *   MPI_Pcontrol(level, int version, int kind, int rank, MPI_Comm comm,
 *                long long id) */
#define VCX_ANNOTATE_PCONTROL_LEVEL 0x56435841
#define VCX_ANNOTATE_VERSION 1

/* The annotation kinds, shared with vcx/annotate_shmem.h. */
#ifndef VCX_ANNOTATE_KINDS
#define VCX_ANNOTATE_KINDS
enum vcx_annotate_kind {
  VCX_ANNOTATE_TICK = 1,
  VCX_ANNOTATE_PROCESS_SIGNAL = 2,
  VCX_ANNOTATE_PROCESS_WAIT = 3,
  VCX_ANNOTATE_RESOURCE_SIGNAL = 4,
  VCX_ANNOTATE_RESOURCE_WAIT = 5
};
#endif

static inline void vcx_annotate_call_(int kind, int rank, MPI_Comm comm, long long id) {
  MPI_Pcontrol(VCX_ANNOTATE_PCONTROL_LEVEL, (int)VCX_ANNOTATE_VERSION, kind, rank, comm, id);
}

/* ---- MPI forms: ranks of `comm`, queues named by (comm, tag) ------------ */

/* Signal communicator rank `target` on the queue (comm, tag). */
static inline void vcx_annotate_mpi_process_signal(int target, MPI_Comm comm, int tag) {
  vcx_annotate_call_(VCX_ANNOTATE_PROCESS_SIGNAL, target, comm, (long long)tag);
}
/* Wait for the next signal of communicator rank `origin` on (comm, tag). */
static inline void vcx_annotate_mpi_process_wait(int origin, MPI_Comm comm, int tag) {
  vcx_annotate_call_(VCX_ANNOTATE_PROCESS_WAIT, origin, comm, (long long)tag);
}
/* Resource `resource` kept at communicator rank `deposition` of comm. */
static inline void vcx_annotate_mpi_resource_signal(long long resource, int deposition,
                                                    MPI_Comm comm) {
  vcx_annotate_call_(VCX_ANNOTATE_RESOURCE_SIGNAL, deposition, comm, resource);
}
static inline void vcx_annotate_mpi_resource_wait(long long resource, int deposition,
                                                  MPI_Comm comm) {
  vcx_annotate_call_(VCX_ANNOTATE_RESOURCE_WAIT, deposition, comm, resource);
}

/* ---- Generic forms: world ranks; queue q is (MPI_COMM_WORLD, q) ---------- */

static inline void vcx_annotate_tick(void) {
  vcx_annotate_call_(VCX_ANNOTATE_TICK, 0, MPI_COMM_WORLD, 0);
}
static inline void vcx_annotate_process_signal(int target, int queue) {
  vcx_annotate_mpi_process_signal(target, MPI_COMM_WORLD, queue);
}
static inline void vcx_annotate_process_wait(int origin, int queue) {
  vcx_annotate_mpi_process_wait(origin, MPI_COMM_WORLD, queue);
}
static inline void vcx_annotate_resource_signal(long long resource, int deposition) {
  vcx_annotate_mpi_resource_signal(resource, deposition, MPI_COMM_WORLD);
}
static inline void vcx_annotate_resource_wait(long long resource, int deposition) {
  vcx_annotate_mpi_resource_wait(resource, deposition, MPI_COMM_WORLD);
}

#endif
