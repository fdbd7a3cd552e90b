// The application side of vcx for OpenSHMEM: attaches to this PE's tool
// process at shmem_init and pushes one event per intercepted call. Every
// wrapper calls the pshmem_ entry point the user's call names (Open MPI
// defines each shmem_ function as a weak alias of it) with the user's
// arguments, then reports the call. It records and forwards; it never
// interprets.
#pragma once

#include <pshmem.h>
#include <shmem.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "shmem_calls.h"
#include "vcx/intercept/call_timing.h"
#include "vcx/intercept/channel_client.h"

extern "C" void pstart_pes(int npes);

namespace vcx::shmem_intercept {

using shmem::Call;
using shmem::DataKind;

class Runtime {
 public:
  // After pshmem_init*: attach to the tool if vcx-run started us.
  void start(Call call, int thread_level);
  // Before pshmem_finalize: drain, say goodbye, detach.
  void stop();
  bool active() const { return client_.active(Model::Shmem); }
  intercept::ChannelClient& client() { return client_; }

  template <class T>
  std::uint64_t push(Call call, const T& payload, bool needs_reply) {
    void* p =
        client_.begin(Model::Shmem, static_cast<std::uint16_t>(call), sizeof(T), needs_reply);
    if (!p) return 0;
    *static_cast<T*>(p) = payload;
    return client_.commit();
  }
  // Whether flag writes are registered at their target's tool (vcx-run
  // --shmem-flags on, the default).
  bool flag_writes_registered() const {
    return (client_.mode_flags() & channel::kModeNoFlagWrites) == 0;
  }
  // An event the tool answers in either stall mode, waited for.
  template <class T>
  void push_and_wait_always(Call call, const T& payload) {
    void* p =
        client_.begin_always_answered(Model::Shmem, static_cast<std::uint16_t>(call), sizeof(T));
    if (!p) return;
    *static_cast<T*>(p) = payload;
    client_.wait_always(client_.commit());
  }

 private:
  // Shared with the MPI interceptor in MPI+OpenSHMEM programs.
  intercept::ChannelClient& client_ = intercept::process_client();
};

Runtime& runtime();

// Open MPI's own functions call some of the public names (shmem_finalize
// calls shmem_barrier_all): a wrapper entered from inside another one's
// call reports nothing, only the user's call counts.
// Also marks where the call was entered: every wrapper sends its event after
// its OpenSHMEM call ran (call_timing.h).
class Nesting {
 public:
  Nesting() { ++depth(); }
  ~Nesting() { --depth(); }
  Nesting(const Nesting&) = delete;
  Nesting& operator=(const Nesting&) = delete;
  bool outermost() const { return depth() == 1; }

 private:
  static int& depth() {
    thread_local int d = 0;
    return d;
  }
  const intercept::CallEntry entered_;
};

// The address as every PE names it (shmem_events.h, SymAddr).
shmem::SymAddr symmetric_address(const volatile void* p);
// Contexts by handle; the default context is 0 whichever way it is named.
// Inline: shmem_ctx_t points to an unnamed struct, so a function taking it
// cannot be shared between translation units.
inline std::uint64_t context_id(shmem_ctx_t ctx) {
  return ctx == SHMEM_CTX_DEFAULT ? 0 : reinterpret_cast<std::uint64_t>(ctx);
}

// One data access (never waited for).
// `pc`: the application's return address (the wrapper's
// __builtin_return_address(0)), the line the race analysis reports.
void record_data(Call call, DataKind kind, const volatile void* remote, std::uint64_t local,
                 std::size_t elem_bytes, std::size_t count, std::ptrdiff_t stride,
                 std::uint64_t ctx, int pe, void* pc);
// shmem_fence, shmem_quiet: the completion point of earlier data calls.
void record_completion(Call call, std::uint64_t ctx, void* pc);
// Symmetric heap blocks, exposed to the program's loads and stores from
// their allocation to their release (vcx/intercept/local_accesses.h).
void note_heap_block(const void* block, std::size_t bytes);
void end_heap_block(const void* block);
// A collective over every PE; over the active set (PE_start, logPE_stride,
// PE_size), with root PE_root for broadcasts (-1 otherwise). The call
// waits for its tool (stall mode).
void report_world_collective(Call call);
void report_collective(Call call, int pe_start, int log_stride, int pe_size, int root);

// ---- Flags (flags.cpp; docs/clock-rules.md, "Flags") ----
//
// A write that may be a flag is announced before the call that makes it,
// and the call waits (in either stall mode) until the tool of the PE it
// writes to has registered it. The announce functions return the
// announcement's ticket (0 when nothing was announced), which a fetching
// atomic passes on with what it fetched.

// The bits of a value of up to 8 bytes, zero extended.
template <class T>
std::uint64_t value_bits(const T& v) {
  static_assert(sizeof(T) <= 8);
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof v);
  return bits;
}

std::uint64_t announce_flag_write(Call call, shmem::FlagOp op, const volatile void* remote,
                                  std::uint64_t operand, std::uint64_t cond, std::size_t width,
                                  bool is_signed, int pe);
void report_flag_result(std::uint64_t ticket, std::uint64_t fetched);
void report_flag_wait(Call call, const volatile void* addr, int cmp, std::uint64_t cmp_value,
                      std::uint64_t value, std::size_t width, bool is_signed);

// shmem_TYPE_p, set, swap: the value is known before the call. Values
// wider than 8 bytes (long double) are not flags.
template <class T>
std::uint64_t announce_flag_store(Call call, const volatile T* remote, std::type_identity_t<T> value,
                                  int pe) {
  if constexpr (sizeof(T) > 8) {
    return 0;
  } else {
    return announce_flag_write(call, shmem::FlagOp::Store, remote, value_bits(value), 0, sizeof(T),
                               std::is_signed_v<T>, pe);
  }
}
// A put of 1, 2, 4 or 8 bytes: what it stores is at `source`.
std::uint64_t announce_flag_put(Call call, const volatile void* remote, const void* source,
                                std::size_t bytes, int pe);
// A fetching atomic: what it stores follows from what it fetches.
template <class T>
std::uint64_t announce_flag_rmw(Call call, const volatile T* remote, shmem::FlagOp op,
                                std::type_identity_t<T> operand, std::type_identity_t<T> cond,
                                int pe) {
  return announce_flag_write(call, op, remote, value_bits(operand), value_bits(cond), sizeof(T),
                             std::is_signed_v<T>, pe);
}
template <class T>
void report_flag_result(std::uint64_t ticket, const T& fetched) {
  if (ticket) report_flag_result(ticket, value_bits(fetched));
}
// After wait_until and wait returned, and after test returned 1: reads the
// flag and reports what it holds.
template <class T>
void report_flag_wait(Call call, const volatile T* addr, int cmp, std::type_identity_t<T> cmp_value) {
  const T value = *addr;
  report_flag_wait(call, addr, cmp, value_bits(cmp_value), value_bits(value), sizeof(T),
                   std::is_signed_v<T>);
}

// ---- Calls the PE may wait in (vcx/channel/blocked_call.h) ----
//
// The user's own call (the outermost) marks the slot as it is entered, with
// what its event will say, and leaves it as Open MPI returns, before its
// event goes out: what the PE waits for is read against the events before
// the call. Each returns whether it marked the slot, for leave_blocked.
bool enter_blocked_collective(const Nesting& nesting, Call call, int pe_start, int log_stride,
                              int pe_size, int root, void* pc);
bool enter_blocked_world_collective(const Nesting& nesting, Call call, void* pc);
// wait_until, wait: the flag and what it must compare to.
bool enter_blocked_flag_wait(const Nesting& nesting, Call call, const volatile void* addr,
                             int cmp, std::uint64_t cmp_value, std::size_t width, bool is_signed,
                             void* pc);
bool enter_blocked_lock(const Nesting& nesting, Call call, const volatile long* lock, void* pc);
void leave_blocked(bool entered);
template <class T>
bool enter_blocked_flag_wait(const Nesting& nesting, Call call, const volatile T* addr, int cmp,
                             std::type_identity_t<T> cmp_value, void* pc) {
  return enter_blocked_flag_wait(nesting, call, addr, cmp, value_bits(cmp_value), sizeof(T),
                                 std::is_signed_v<T>, pc);
}

}  // namespace vcx::shmem_intercept
