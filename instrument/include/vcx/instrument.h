/* The contract between vcx's runtime for instrumented programs
 * (libvcx-tsan.so, linked by the vcx-mpicc / vcx-oshcc compiler wrappers in
 * place of the sanitizer's runtime) and vcx's interceptor.
 *
 * Programs built with the wrappers call the runtime's __tsan_* entry points
 * on every load and store. On its own (a run without vcx-run) the runtime
 * watches nothing and each call returns at once. The interceptor, when the
 * race analysis wants local accesses, binds a handler and names the address
 * ranges it wants to hear about; only accesses overlapping them reach the
 * handler, on the thread that made them, before the access returns to the
 * program.
 *
 * C, versioned: the interceptor finds vcx_instrument_bind with dlsym and
 * binds only when the versions match. */
#ifndef VCX_INSTRUMENT_H
#define VCX_INSTRUMENT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VCX_INSTRUMENT_ABI_VERSION 1
/* Watched ranges at most: the check on every access loops over them. */
#define VCX_INSTRUMENT_MAX_RANGES 8

/* An access of `bytes` bytes at `addr` (is_write: a store), made by the
 * instruction before return address `pc`. */
typedef void (*vcx_instrument_access_fn)(uintptr_t addr, uintptr_t bytes, int is_write,
                                         uintptr_t pc);

/* Binds the handler if `abi_version` is the runtime's own (a null handler
 * unbinds); returns the runtime's version either way. */
int vcx_instrument_bind(int abi_version, vcx_instrument_access_fn on_access);
typedef int (*vcx_instrument_bind_fn)(int, vcx_instrument_access_fn);

/* Replaces the watched ranges by [lo[i], hi[i]) for i < count (count is
 * clamped to VCX_INSTRUMENT_MAX_RANGES; 0 watches nothing). */
void vcx_instrument_watch(const uintptr_t* lo, const uintptr_t* hi, int count);
typedef void (*vcx_instrument_watch_fn)(const uintptr_t*, const uintptr_t*, int);

#ifdef __cplusplus
}
#endif

#endif
