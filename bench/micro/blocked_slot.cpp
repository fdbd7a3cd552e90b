// The application side's cost of the blocked-call slot (deadlock analysis):
// what every call that may wait for other ranks pays, entering and leaving,
// with the payload of an MPI_Recv event. Prints ns per call.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "vcx/channel/blocked_call.h"

namespace {
struct RecvLike {
  std::uint64_t comm;
  std::int32_t source, tag, status_source, status_tag;
  std::uint64_t pc, bytes;
};
}  // namespace

int main(int argc, char** argv) {
  const long calls = argc > 1 ? std::atol(argv[1]) : 100'000'000;
  static vcx::channel::BlockedCallSlot slot{};
  RecvLike payload{1, 2, 3, -1, -1, 0x400000, 0};
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < calls; ++i) {
    payload.tag = static_cast<std::int32_t>(i);
    vcx::channel::enter_blocked_call(slot, vcx::Model::Mpi, 7, static_cast<std::uint64_t>(i),
                                     0x400000, &payload, sizeof payload);
    asm volatile("" ::: "memory");  // the MPI call between them
    vcx::channel::leave_blocked_call(slot);
  }
  const auto end = std::chrono::steady_clock::now();
  std::printf("blocked-call slot: %.2f ns per call (enter and leave, %zu-byte payload)\n",
              std::chrono::duration<double, std::nano>(end - start).count() /
                  static_cast<double>(calls),
              sizeof payload);
  return 0;
}
