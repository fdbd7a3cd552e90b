// One application event as it travels through the channel: a fixed header and
// a model-specific payload. The core never interprets the payload; the
// translator plugin named by `model` does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace vcx {

enum class Model : std::uint16_t {
  Padding = 0,  // ring filler at the wrap point, never delivered
  Control = 1,  // channel-level events (attach, detach)
  Mpi = 2,
  Shmem = 3,
  Annotation = 4,
  Example = 5,
};

enum EventFlags : std::uint32_t {
  kEventNeedsReply = 1u << 0,   // the application waits until the tool replies
  // ... in either stall mode: the tool decides an order the application
  // must follow (lock grants).
  kEventAlwaysReply = 1u << 1,
  // The record ends with an EventTiming after the payload (traces want
  // physical times: ChannelModeFlags::kModeTimestamps).
  kEventTimed = 1u << 2,
};

struct EventHeader {
  std::uint32_t size;   // whole record in bytes, header included, multiple of 8
  Model model;
  std::uint16_t type;   // model-specific event type
  std::uint32_t flags;  // EventFlags
  std::uint32_t payload_size;
  std::uint64_t seq;    // per-channel event number, starts at 1
  // Where the application made the call: the return address into the code
  // that called the interceptor (vcx/intercept/call_site.h); 0 if unknown.
  std::uint64_t call_site;
};
static_assert(sizeof(EventHeader) == 32);
static_assert(std::is_trivially_copyable_v<EventHeader>);
static_assert(alignof(EventHeader) <= 8);

inline constexpr std::size_t kEventAlign = 8;
inline constexpr std::size_t event_record_size(std::size_t payload) {
  return (sizeof(EventHeader) + payload + kEventAlign - 1) & ~(kEventAlign - 1);
}

// Physical times of a kEventTimed record, in ns of the application's
// monotonic clock, after its payload padded to kEventAlign.
struct EventTiming {
  std::uint64_t enter_ns;           // the call that sent the event was entered
  // When the call that sent the previous timed event of the channel
  // returned; 0 if unknown (no such event, or another thread's).
  std::uint64_t previous_leave_ns;
};
static_assert(sizeof(EventTiming) == 16);
static_assert(std::is_trivially_copyable_v<EventTiming>);

inline constexpr std::size_t timed_payload_offset(std::size_t payload) {
  return (payload + kEventAlign - 1) & ~(kEventAlign - 1);
}
// Whole record size of an event with `payload` bytes and `flags`.
inline constexpr std::size_t event_record_size(std::size_t payload, std::uint32_t flags) {
  return event_record_size((flags & kEventTimed) ? timed_payload_offset(payload) +
                                                       sizeof(EventTiming)
                                                 : payload);
}
// The timing of a record, or nullptr when it has none (or its size cannot
// hold one: a malformed record).
inline const EventTiming* event_timing(const EventHeader& h) {
  if (!(h.flags & kEventTimed) ||
      h.size < sizeof(EventHeader) + timed_payload_offset(h.payload_size) + sizeof(EventTiming))
    return nullptr;
  return reinterpret_cast<const EventTiming*>(reinterpret_cast<const std::uint8_t*>(&h + 1) +
                                              timed_payload_offset(h.payload_size));
}

// Channel-level control events (Model::Control).
enum class ControlEvent : std::uint16_t {
  Detach = 1,  // the application finished normally (e.g. after MPI_Finalize)
  ClockSync = 2,  // this rank's clock against rank 0's (ClockSyncEvent)
};

// Payload of ClockSync: the offset of rank 0's trace clock to this rank's,
// measured by the interceptor with a few ping-pongs with rank 0 at the start
// and at the end of the run (the one with the shortest round trip counts).
// Rank 0 sends offset 0.
struct ClockSyncEvent {
  std::uint32_t phase;   // 0: at the start, 1: at the end
  std::uint32_t rounds;  // ping-pongs measured
  std::int64_t offset_ns;  // rank 0's clock minus this rank's, at local_ns
  std::uint64_t local_ns;  // this rank's clock in the middle of the best round
  std::uint64_t rtt_ns;    // that round's round trip: the offset is within half of it
};
static_assert(sizeof(ClockSyncEvent) == 32);

// Payload of Detach: the application's own account of its waiting, which a
// tool without a shared block (TCP channel) cannot read otherwise.
struct DetachEvent {
  std::uint64_t stall_ns;         // waiting for replies
  std::uint64_t backpressure_ns;  // waiting for room in the channel
};
static_assert(sizeof(DetachEvent) == 16);

}  // namespace vcx
