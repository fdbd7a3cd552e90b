#include "vcx/channel/futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

namespace vcx::channel {

bool futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected,
                std::uint64_t timeout_ns) noexcept {
  timespec ts{};
  timespec* tsp = nullptr;
  if (timeout_ns != 0) {
    ts.tv_sec = static_cast<time_t>(timeout_ns / 1'000'000'000ULL);
    ts.tv_nsec = static_cast<long>(timeout_ns % 1'000'000'000ULL);
    tsp = &ts;
  }
  // Not FUTEX_PRIVATE: the word lives in memory shared between processes.
  long r = syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT, expected, tsp,
                   nullptr, 0);
  return !(r == -1 && errno == ETIMEDOUT);
}

void futex_wake_all(std::atomic<std::uint32_t>* word) noexcept {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE, INT32_MAX, nullptr,
          nullptr, 0);
}

}  // namespace vcx::channel
