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

// Channel-level control events (Model::Control).
enum class ControlEvent : std::uint16_t {
  Detach = 1,  // the application finished normally (e.g. after MPI_Finalize)
};

// Payload of Detach: the application's own account of its waiting, which a
// tool without a shared block (TCP channel) cannot read otherwise.
struct DetachEvent {
  std::uint64_t stall_ns;         // waiting for replies
  std::uint64_t backpressure_ns;  // waiting for room in the channel
};
static_assert(sizeof(DetachEvent) == 16);

}  // namespace vcx
