// Process-shared futex wait/wake on a 32-bit word in shared memory, and the
// clock the channels' waits use.
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>

namespace vcx::channel {

// Sleeps while *word == expected, at most timeout_ns (0: no limit). Returns
// false on timeout. Spurious returns are possible; callers re-check.
bool futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected,
                std::uint64_t timeout_ns) noexcept;
void futex_wake_all(std::atomic<std::uint32_t>* word) noexcept;

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Monotonic time for the waits' deadlines and accounting.
inline std::uint64_t now_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ULL +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace vcx::channel
