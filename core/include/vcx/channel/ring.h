// Producer and consumer ends of the event ring in a ChannelControl block.
#pragma once

#include <cstddef>
#include <cstdint>

#include "vcx/channel/shared_channel.h"

namespace vcx::channel {

// How the application side waits for a reply: spin this long, then sleep on a
// futex and re-check the tool's liveness every `liveness_check_ns` (which a
// wait for room in a full ring does too, without spinning).
struct WaitPolicy {
  std::uint64_t spin_ns = 2'000;
  std::uint64_t liveness_check_ns = 200'000'000;
  // With a progress hook: sleep at most this long between progress calls,
  // starting at the minimum and doubling while nothing happens.
  std::uint64_t progress_min_ns = 10'000;
  std::uint64_t progress_max_ns = 1'000'000;
};

// Callbacks the producer needs from its owner (the interceptor).
struct ProducerHooks {
  void* ctx = nullptr;
  // Wakes the sleeping consumer (a byte on the attach socket).
  void (*wake_consumer)(void* ctx) = nullptr;
  // False once the tool is gone; waiting stops then.
  bool (*tool_alive)(void* ctx) = nullptr;
  // Called repeatedly while the application waits for a reply: the
  // programming model's progress (other processes may need this one's
  // library to make progress before the tool can answer).
  void (*progress)(void* ctx) = nullptr;
};

enum class WaitResult { Ok, ToolGone };

// Backpressure hysteresis: a producer that found the ring full sleeps until
// at most this many bytes are left in it (half the ring), and the consumer
// wakes it once, when the ring has drained that far.
constexpr std::uint64_t ring_low_water(std::uint64_t capacity) noexcept { return capacity / 2; }

class RingProducer {
 public:
  RingProducer() = default;
  RingProducer(ChannelControl* control, ProducerHooks hooks, WaitPolicy policy = {});

  // Largest payload a single record may carry.
  std::size_t max_payload() const noexcept;

  // Reserves space for one record and fills its header. If the ring is full,
  // waits until it has drained to ring_low_water() (backpressure). Returns
  // the payload pointer, or nullptr if the tool has given up (ToolState::
  // Failed) or went away while waiting. Must be followed by commit().
  void* begin(Model model, std::uint16_t type, std::uint32_t flags, std::size_t payload_size,
              std::uint64_t call_site = 0);
  // Publishes the record reserved by begin(); returns its sequence number.
  std::uint64_t commit() noexcept;

  // Waits until the tool has replied to event `seq`.
  WaitResult wait_reply(std::uint64_t seq) noexcept;

  ChannelControl* control() const noexcept { return c_; }
  std::uint64_t last_seq() const noexcept { return seq_; }

 private:
  bool wait_for_space(std::uint64_t needed) noexcept;

  ChannelControl* c_ = nullptr;
  std::uint8_t* data_ = nullptr;
  std::uint64_t mask_ = 0;
  std::uint64_t head_ = 0;         // private copy of the published head
  std::uint64_t pending_head_ = 0; // head after the record in progress
  std::uint64_t tail_cache_ = 0;
  std::uint64_t seq_ = 0;
  std::uint64_t lazy_wake_bytes_ = 0;
  bool pending_waited_for_ = false;  // the record in progress asks for a reply
  ProducerHooks hooks_{};
  WaitPolicy policy_{};
};

class RingConsumer {
 public:
  RingConsumer() = default;
  explicit RingConsumer(ChannelControl* control);

  // The next record, or nullptr when the ring is empty. Padding is skipped.
  const EventHeader* peek() noexcept;
  // Releases the record last returned by peek(). Wakes a producer waiting
  // for space once the ring has drained to ring_low_water(); otherwise makes
  // no system call.
  void pop() noexcept;

  // Announces that the consumer is about to sleep. Returns false (and cancels
  // the announcement) if a record arrived meanwhile: do not sleep then. Also
  // returns true when a record arrived but its producer already sent the
  // wake-up: the sleep then ends at once and no wake-up is left over.
  // `lazily`: the producer wakes the consumer only for a record it will
  // wait for, or once a sixteenth of the ring is unread
  // (kConsumerSleepingLazily); the consumer must then wake itself after a
  // while.
  bool prepare_sleep(bool lazily = false) noexcept;
  void end_sleep() noexcept;

  // Answers event `seq` (and every earlier one): the application may go on.
  void reply(std::uint64_t seq) noexcept;
  void set_tool_state(ToolState s) noexcept;

  ChannelControl* control() const noexcept { return c_; }
  bool empty() const noexcept;
  // Wake-ups this consumer sent to a producer waiting for space.
  std::uint64_t producer_wakes() const noexcept { return producer_wakes_; }

 private:
  ChannelControl* c_ = nullptr;
  const std::uint8_t* data_ = nullptr;
  std::uint64_t mask_ = 0;
  std::uint64_t tail_ = 0;
  std::uint64_t head_cache_ = 0;
  std::uint64_t producer_wakes_ = 0;
};

}  // namespace vcx::channel
