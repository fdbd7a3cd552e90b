// The shared-memory block between application rank i and tool rank i: an
// event ring (application → tool), a reply word (tool → application), the
// table of lock leases (both ways) and the call the rank may be blocked in
// (application → tool).
//
// Single producer (the application, serialised by the interceptor), single
// consumer (the tool's event loop). The push fast path is a copy and one
// store; it makes a system call only to wake a sleeping tool.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "vcx/channel/blocked_call.h"
#include "vcx/channel/event_record.h"
#include "vcx/channel/lease_table.h"

namespace vcx::channel {

inline constexpr std::uint64_t kChannelMagic = 0x3130'4e4e'4843'5856ULL;  // "VXCHNN01"
inline constexpr std::uint32_t kChannelLayoutVersion = 5;  // 5: the blocked-call slot
inline constexpr std::size_t kCacheLine = 64;

struct alignas(kCacheLine) ChannelControl {
  // Identity, written once by the tool before the application maps it.
  std::uint64_t magic;
  std::uint32_t layout_version;
  std::uint32_t flags;          // ChannelModeFlags
  std::uint64_t ring_capacity;  // bytes of ring data, power of two

  // Producer side (application writes, tool reads).
  alignas(kCacheLine) std::atomic<std::uint64_t> head;  // bytes pushed, monotonic
  std::atomic<std::uint32_t> producer_waiting;          // app sleeps for space
  std::atomic<std::uint32_t> app_sleeping;              // app sleeps for a reply

  // Consumer side (tool writes, application reads).
  alignas(kCacheLine) std::atomic<std::uint64_t> tail;  // bytes consumed
  std::atomic<std::uint32_t> space_futex;               // bumped when space frees up
  std::atomic<std::uint32_t> consumer_sleeping;         // ConsumerSleep

  // Replies: the highest event seq the tool has answered.
  alignas(kCacheLine) std::atomic<std::uint64_t> replied_seq;
  std::atomic<std::uint32_t> reply_futex;
  std::atomic<std::uint32_t> tool_state;  // ToolState

  // Diagnostics the tool may read at any time.
  alignas(kCacheLine) std::atomic<std::uint64_t> stall_ns;  // app time spent waiting
  std::atomic<std::uint64_t> backpressure_ns;               // app time waiting for space

  // Locks the application may take again without asking (lease_table.h).
  alignas(kCacheLine) LeaseTable leases;

  // The call the application is in while it may wait for other ranks
  // (blocked_call.h).
  alignas(kCacheLine) BlockedCallSlot blocked;
};

enum ChannelModeFlags : std::uint32_t {
  kModeNoStall = 1u << 0,       // never wait for replies
  kModeNoFlagWrites = 1u << 1,  // OpenSHMEM: flag writes are not registered
  // The tool needs the core this rank runs on: blocking MPI calls test for
  // completion and yield the core in between instead of busy-polling.
  kModeYieldInWaits = 1u << 2,
  // An analysis wants the program's loads and stores of exposed memory
  // (programs built with the vcx compiler wrappers report them).
  kModeLocalAccesses = 1u << 3,
  // A module wants physical times: every event carries an EventTiming.
  kModeTimestamps = 1u << 4,
};

// What the tool asks of the application while it sleeps.
enum ConsumerSleep : std::uint32_t {
  kConsumerAwake = 0,
  kConsumerSleeping = 1,  // wake it at the next record
  // Wake it only for a record the application will wait for (a reply, room
  // in the ring) or once the ring holds ring_lazy_wake_bytes() unread; the
  // tool wakes itself after a short while otherwise. For tools that share
  // their rank's core: every wake-up takes the core from the rank.
  kConsumerSleepingLazily = 2,
};

inline constexpr std::uint64_t ring_lazy_wake_bytes(std::uint64_t ring_capacity) {
  return ring_capacity / 16;
}

enum class ToolState : std::uint32_t {
  Running = 0,
  Failed = 1,  // the tool gave up; the application must not wait for it
};

static_assert(std::is_standard_layout_v<ChannelControl>);
static_assert(sizeof(LeaseTable) % kCacheLine == 0);
static_assert(sizeof(ChannelControl) ==
              5 * kCacheLine + sizeof(LeaseTable) + sizeof(BlockedCallSlot));
static_assert(offsetof(ChannelControl, blocked) == 5 * kCacheLine + sizeof(LeaseTable));
static_assert(offsetof(ChannelControl, leases) == 5 * kCacheLine);
static_assert(offsetof(ChannelControl, head) == kCacheLine);
static_assert(offsetof(ChannelControl, tail) == 2 * kCacheLine);
static_assert(offsetof(ChannelControl, replied_seq) == 3 * kCacheLine);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
static_assert(sizeof(std::atomic<std::uint32_t>) == 4, "futex words are 32 bits");

inline constexpr std::size_t channel_bytes(std::size_t ring_capacity) {
  return sizeof(ChannelControl) + ring_capacity;
}

inline std::uint8_t* ring_data(ChannelControl* c) {
  return reinterpret_cast<std::uint8_t*>(c) + sizeof(ChannelControl);
}

// Initialises a freshly mapped, zeroed block.
void init_channel(ChannelControl* c, std::size_t ring_capacity, std::uint32_t mode_flags);
bool channel_valid(const ChannelControl* c, std::size_t mapped_bytes);

}  // namespace vcx::channel
