/* vcx user annotations for OpenSHMEM programs (docs/annotations.md):
 * synchronisation that no OpenSHMEM call shows, such as polling on a flag
 * with plain loads, made visible to vcx's vector clocks.
 *
 * Header only, for C and C++; it needs neither shmem.h nor mpi.h. Every
 * annotation calls vcx_shmem_annotation, a weak function that vcx's
 * OpenSHMEM interceptor defines. Without vcx the symbol stays unresolved
 * (null), and an annotation is one load and one branch: the program needs
 * no vcx library to build or run. Under vcx-run the preloaded interceptor
 * supplies the function and turns each annotation into an event for the
 * tool.
 *
 * Call annotations between shmem_init (or start_pes) and shmem_finalize.
 * PEs are PE numbers (shmem_my_pe); queues are integers >= 0; resources
 * are any 64-bit number chosen by the program.
 *
 *   vcx_annotate_shmem_tick()                    the caller's clock entry + 1
 *   vcx_annotate_shmem_process_signal(pe, queue) signal PE pe on queue
 *   vcx_annotate_shmem_process_wait(pe, queue)   wait for PE pe's next
 *                                                signal on queue, merge it
 *   vcx_annotate_shmem_resource_signal(res, pe)  deposit the clock on
 *                                                resource res kept at PE pe
 *   vcx_annotate_shmem_resource_wait(res, pe)    merge every deposit on res
 *                                                made before this call
 */
#ifndef VCX_ANNOTATE_SHMEM_H
#define VCX_ANNOTATE_SHMEM_H

/* The layout version of vcx_shmem_annotation's arguments. */
#define VCX_ANNOTATE_SHMEM_VERSION 1

/* The annotation kinds, shared with vcx/annotate.h. */
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

#ifdef __cplusplus
extern "C" {
#endif
/* Defined by vcx's OpenSHMEM interceptor (libvcx-shmem-intercept.so) only. */
void vcx_shmem_annotation(int version, int kind, int pe, long long id) __attribute__((weak));
#ifdef __cplusplus
}
#endif

static inline void vcx_annotate_shmem_call_(int kind, int pe, long long id) {
  if (vcx_shmem_annotation) vcx_shmem_annotation(VCX_ANNOTATE_SHMEM_VERSION, kind, pe, id);
}

static inline void vcx_annotate_shmem_tick(void) {
  vcx_annotate_shmem_call_(VCX_ANNOTATE_TICK, 0, 0);
}
/* Signal PE `pe` on `queue`. */
static inline void vcx_annotate_shmem_process_signal(int pe, int queue) {
  vcx_annotate_shmem_call_(VCX_ANNOTATE_PROCESS_SIGNAL, pe, (long long)queue);
}
/* Wait for the next signal of PE `pe` on `queue` and merge its clock. */
static inline void vcx_annotate_shmem_process_wait(int pe, int queue) {
  vcx_annotate_shmem_call_(VCX_ANNOTATE_PROCESS_WAIT, pe, (long long)queue);
}
/* Resource `resource`, kept at PE `deposition`. */
static inline void vcx_annotate_shmem_resource_signal(long long resource, int deposition) {
  vcx_annotate_shmem_call_(VCX_ANNOTATE_RESOURCE_SIGNAL, deposition, resource);
}
static inline void vcx_annotate_shmem_resource_wait(long long resource, int deposition) {
  vcx_annotate_shmem_call_(VCX_ANNOTATE_RESOURCE_WAIT, deposition, resource);
}

#endif
