/* vcx's runtime for the compiler's ThreadSanitizer instrumentation
 * (-fsanitize=thread, GCC or Clang), linked by the vcx compiler wrappers
 * instead of the sanitizer's own runtime: the instrumented program calls
 * __tsan_readN / __tsan_writeN before each load and store, and this runtime
 * passes on those that touch watched memory (vcx/instrument.h) to the
 * handler vcx's interceptor binds. Everything else returns after comparing
 * the address with at most VCX_INSTRUMENT_MAX_RANGES ranges.
 *
 * Atomic operations the instrumentation turns into __tsan_atomic* calls are
 * performed here (sequentially consistent, which is at least as strong as
 * what the program asked for) and passed on like plain accesses: a load as
 * a read, everything else as a write.
 *
 * Function entry and exit, and the other hooks of the sanitizer's
 * interface, do nothing: vcx names the place of an access by its return
 * address alone. */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "vcx/instrument.h"

#define VCX_EXPORT __attribute__((visibility("default")))

static _Atomic(vcx_instrument_access_fn) g_handler;
static _Atomic int g_range_count;
static _Atomic uintptr_t g_lo[VCX_INSTRUMENT_MAX_RANGES];
static _Atomic uintptr_t g_hi[VCX_INSTRUMENT_MAX_RANGES];

VCX_EXPORT int vcx_instrument_bind(int abi_version, vcx_instrument_access_fn on_access) {
  if (abi_version == VCX_INSTRUMENT_ABI_VERSION)
    atomic_store_explicit(&g_handler, on_access, memory_order_release);
  return VCX_INSTRUMENT_ABI_VERSION;
}

/* Another thread may be checking while the ranges change: it sees old or
 * new bounds, either is right for an access concurrent with the change.
 * The count goes down first and up last, so no check reads a range that
 * was never set. */
VCX_EXPORT void vcx_instrument_watch(const uintptr_t* lo, const uintptr_t* hi, int count) {
  if (count < 0) count = 0;
  if (count > VCX_INSTRUMENT_MAX_RANGES) count = VCX_INSTRUMENT_MAX_RANGES;
  atomic_store_explicit(&g_range_count, 0, memory_order_release);
  for (int i = 0; i < count; ++i) {
    atomic_store_explicit(&g_lo[i], lo[i], memory_order_relaxed);
    atomic_store_explicit(&g_hi[i], hi[i], memory_order_relaxed);
  }
  atomic_store_explicit(&g_range_count, count, memory_order_release);
}

/* The check on every access: a load of the count, and when memory is
 * watched one comparison pair per range. */
static inline __attribute__((always_inline)) void on_access(uintptr_t addr, uintptr_t bytes,
                                                            int is_write, uintptr_t pc) {
  const int n = atomic_load_explicit(&g_range_count, memory_order_acquire);
  /* Without vcx-run nothing is watched: falling through to the return is
   * the shortest path. */
  if (__builtin_expect(n == 0, 1)) return;
  for (int i = 0; i < n; ++i) {
    if (addr < atomic_load_explicit(&g_hi[i], memory_order_relaxed) &&
        addr + bytes > atomic_load_explicit(&g_lo[i], memory_order_relaxed)) {
      vcx_instrument_access_fn h = atomic_load_explicit(&g_handler, memory_order_acquire);
      if (h) h(addr, bytes, is_write, pc);
      return;
    }
  }
}

#define VCX_PC() ((uintptr_t)__builtin_return_address(0))

/* ---- Plain, unaligned and volatile accesses ------------------------------ */

#define VCX_ACCESS(size)                                                                   \
  VCX_EXPORT void __tsan_read##size(void* p) { on_access((uintptr_t)p, size, 0, VCX_PC()); } \
  VCX_EXPORT void __tsan_write##size(void* p) { on_access((uintptr_t)p, size, 1, VCX_PC()); } \
  VCX_EXPORT void __tsan_volatile_read##size(void* p) {                                    \
    on_access((uintptr_t)p, size, 0, VCX_PC());                                            \
  }                                                                                        \
  VCX_EXPORT void __tsan_volatile_write##size(void* p) {                                   \
    on_access((uintptr_t)p, size, 1, VCX_PC());                                            \
  }

#define VCX_UNALIGNED(size)                                                                \
  VCX_EXPORT void __tsan_unaligned_read##size(void* p) {                                   \
    on_access((uintptr_t)p, size, 0, VCX_PC());                                            \
  }                                                                                        \
  VCX_EXPORT void __tsan_unaligned_write##size(void* p) {                                  \
    on_access((uintptr_t)p, size, 1, VCX_PC());                                            \
  }                                                                                        \
  VCX_EXPORT void __tsan_unaligned_volatile_read##size(void* p) {                          \
    on_access((uintptr_t)p, size, 0, VCX_PC());                                            \
  }                                                                                        \
  VCX_EXPORT void __tsan_unaligned_volatile_write##size(void* p) {                         \
    on_access((uintptr_t)p, size, 1, VCX_PC());                                            \
  }

VCX_ACCESS(1)
VCX_ACCESS(2)
VCX_ACCESS(4)
VCX_ACCESS(8)
VCX_ACCESS(16)
VCX_UNALIGNED(2)
VCX_UNALIGNED(4)
VCX_UNALIGNED(8)
VCX_UNALIGNED(16)

VCX_EXPORT void __tsan_read_range(void* p, uintptr_t size) {
  if (size) on_access((uintptr_t)p, size, 0, VCX_PC());
}
VCX_EXPORT void __tsan_write_range(void* p, uintptr_t size) {
  if (size) on_access((uintptr_t)p, size, 1, VCX_PC());
}

/* Newer Clang turns memory intrinsics into these; GCC and Clang 14 leave
 * them to the C library, where they are not seen (docs/analyses.md,
 * "Limits"). */
VCX_EXPORT void* __tsan_memcpy(void* dst, const void* src, uintptr_t size) {
  if (size) {
    on_access((uintptr_t)src, size, 0, VCX_PC());
    on_access((uintptr_t)dst, size, 1, VCX_PC());
  }
  return memcpy(dst, src, size);
}
VCX_EXPORT void* __tsan_memmove(void* dst, const void* src, uintptr_t size) {
  if (size) {
    on_access((uintptr_t)src, size, 0, VCX_PC());
    on_access((uintptr_t)dst, size, 1, VCX_PC());
  }
  return memmove(dst, src, size);
}
VCX_EXPORT void* __tsan_memset(void* dst, int c, uintptr_t size) {
  if (size) on_access((uintptr_t)dst, size, 1, VCX_PC());
  return memset(dst, c, size);
}

/* C++ virtual calls: the vtable pointer is written by constructors. */
VCX_EXPORT void __tsan_vptr_update(void** vptr, void* new_val) {
  if (*vptr != new_val) on_access((uintptr_t)vptr, sizeof *vptr, 1, VCX_PC());
}
VCX_EXPORT void __tsan_vptr_read(void** vptr) {
  on_access((uintptr_t)vptr, sizeof *vptr, 0, VCX_PC());
}

/* ---- Hooks that carry nothing vcx uses ---------------------------------- */

VCX_EXPORT void __tsan_init(void) {}
VCX_EXPORT void __tsan_func_entry(void* caller) { (void)caller; }
VCX_EXPORT void __tsan_func_exit(void) {}
VCX_EXPORT void __tsan_ignore_thread_begin(void) {}
VCX_EXPORT void __tsan_ignore_thread_end(void) {}

/* ---- Atomics ------------------------------------------------------------ */

#define VCX_SC __ATOMIC_SEQ_CST

#define VCX_ATOMIC_RMW(bits, T, name, builtin)                                       \
  VCX_EXPORT T __tsan_atomic##bits##_##name(volatile T* a, T v, int mo) {           \
    (void)mo;                                                                        \
    on_access((uintptr_t)a, sizeof(T), 1, VCX_PC());                                 \
    return builtin(a, v, VCX_SC);                                                    \
  }

#define VCX_ATOMICS(bits, T)                                                               \
  VCX_EXPORT T __tsan_atomic##bits##_load(const volatile T* a, int mo) {                   \
    (void)mo;                                                                              \
    on_access((uintptr_t)a, sizeof(T), 0, VCX_PC());                                       \
    return __atomic_load_n(a, VCX_SC);                                                     \
  }                                                                                        \
  VCX_EXPORT void __tsan_atomic##bits##_store(volatile T* a, T v, int mo) {                \
    (void)mo;                                                                              \
    on_access((uintptr_t)a, sizeof(T), 1, VCX_PC());                                       \
    __atomic_store_n(a, v, VCX_SC);                                                        \
  }                                                                                        \
  VCX_ATOMIC_RMW(bits, T, exchange, __atomic_exchange_n)                                   \
  VCX_ATOMIC_RMW(bits, T, fetch_add, __atomic_fetch_add)                                   \
  VCX_ATOMIC_RMW(bits, T, fetch_sub, __atomic_fetch_sub)                                   \
  VCX_ATOMIC_RMW(bits, T, fetch_and, __atomic_fetch_and)                                   \
  VCX_ATOMIC_RMW(bits, T, fetch_or, __atomic_fetch_or)                                     \
  VCX_ATOMIC_RMW(bits, T, fetch_xor, __atomic_fetch_xor)                                   \
  VCX_ATOMIC_RMW(bits, T, fetch_nand, __atomic_fetch_nand)                                 \
  VCX_EXPORT int __tsan_atomic##bits##_compare_exchange_strong(volatile T* a, T* c, T v,   \
                                                               int mo, int fmo) {          \
    (void)mo;                                                                              \
    (void)fmo;                                                                             \
    on_access((uintptr_t)a, sizeof(T), 1, VCX_PC());                                       \
    return __atomic_compare_exchange_n(a, c, v, 0, VCX_SC, VCX_SC);                        \
  }                                                                                        \
  VCX_EXPORT int __tsan_atomic##bits##_compare_exchange_weak(volatile T* a, T* c, T v,     \
                                                             int mo, int fmo) {            \
    (void)mo;                                                                              \
    (void)fmo;                                                                             \
    on_access((uintptr_t)a, sizeof(T), 1, VCX_PC());                                       \
    return __atomic_compare_exchange_n(a, c, v, 1, VCX_SC, VCX_SC);                        \
  }                                                                                        \
  VCX_EXPORT T __tsan_atomic##bits##_compare_exchange_val(volatile T* a, T c, T v, int mo, \
                                                          int fmo) {                       \
    (void)mo;                                                                              \
    (void)fmo;                                                                             \
    on_access((uintptr_t)a, sizeof(T), 1, VCX_PC());                                       \
    __atomic_compare_exchange_n(a, &c, v, 0, VCX_SC, VCX_SC);                              \
    return c;                                                                              \
  }

VCX_ATOMICS(8, uint8_t)
VCX_ATOMICS(16, uint16_t)
VCX_ATOMICS(32, uint32_t)
VCX_ATOMICS(64, uint64_t)

VCX_EXPORT void __tsan_atomic_thread_fence(int mo) {
  (void)mo;
  __atomic_thread_fence(VCX_SC);
}
VCX_EXPORT void __tsan_atomic_signal_fence(int mo) {
  (void)mo;
  __atomic_signal_fence(VCX_SC);
}
