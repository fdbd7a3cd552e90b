// The call an application rank is in while it may wait for other ranks (a
// blocking receive or send, a collective, a wait on requests): the one thing
// about a rank its tool cannot learn from the events, because the event of
// such a call goes out only once it returned (a receive needs its status),
// or tells nothing of how long the call took. Deadlock detection reads it.
//
// The interceptor writes the slot as the call is entered and marks it left
// as the call returns: a few plain stores into a cache line only the tool
// reads, and only now and then, so a call that returns at once costs no
// more than that. The tool reads it as a seqlock: a snapshot is good when
// the state word was "inside" before and after the copy and did not change.
//
// One writer per channel: the interceptor writes the slot only when one
// thread makes MPI calls (a channel without serialised pushes).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>

#include "vcx/channel/event_record.h"

namespace vcx::channel {

// The slot's payload: what the call's event will carry (its arguments; the
// status fields unknown yet), or for a wait on requests their ids.
inline constexpr std::size_t kBlockedPayloadWords = 12;
inline constexpr std::size_t kBlockedPayloadBytes = kBlockedPayloadWords * 8;

struct alignas(64) BlockedCallSlot {
  // 4k: outside any such call; 4k+1: being written; 4k+2: inside (k counts
  // the calls entered).
  std::atomic<std::uint64_t> state;
  // The last event the rank pushed before entering, or its own event when
  // the call pushes it as it is entered (a send, a blocking collective):
  // the tool reads the slot for what it knows once it has read that far.
  std::atomic<std::uint64_t> after_seq;
  std::atomic<std::uint16_t> model;  // Model
  std::atomic<std::uint16_t> call;   // the model's event type
  std::atomic<std::uint32_t> bytes;  // payload bytes used
  std::atomic<std::uint64_t> call_site;  // the application's return address, 0 if unknown
  std::atomic<std::uint64_t> words[kBlockedPayloadWords];
};
static_assert(std::is_standard_layout_v<BlockedCallSlot>);
static_assert(sizeof(BlockedCallSlot) == 128);
static_assert(offsetof(BlockedCallSlot, words) == 32);
static_assert(std::atomic<std::uint16_t>::is_always_lock_free);

// What the tool reads: the call, as of one consistent snapshot.
struct BlockedCall {
  std::uint64_t entered = 0;    // which entry (k above): the same call while it stays
  std::uint64_t after_seq = 0;
  Model model{};
  std::uint16_t call = 0;
  std::uint32_t bytes = 0;
  std::uint64_t call_site = 0;
  std::uint64_t payload[kBlockedPayloadWords] = {};

  template <class T>
  T payload_as() const {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= kBlockedPayloadBytes);
    T t{};
    std::memcpy(&t, payload, sizeof(T));
    return t;
  }
};

// The application's side. `payload` may be null (bytes 0).
inline void enter_blocked_call(BlockedCallSlot& s, Model model, std::uint16_t call,
                               std::uint64_t after_seq, std::uint64_t call_site,
                               const void* payload, std::size_t bytes) noexcept {
  const std::uint64_t k = s.state.load(std::memory_order_relaxed) >> 2;
  s.state.store(4 * k + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  s.after_seq.store(after_seq, std::memory_order_relaxed);
  s.model.store(static_cast<std::uint16_t>(model), std::memory_order_relaxed);
  s.call.store(call, std::memory_order_relaxed);
  s.call_site.store(call_site, std::memory_order_relaxed);
  if (bytes > kBlockedPayloadBytes) bytes = kBlockedPayloadBytes;
  s.bytes.store(static_cast<std::uint32_t>(bytes), std::memory_order_relaxed);
  const auto* p = static_cast<const unsigned char*>(payload);
  for (std::size_t i = 0; i * 8 < bytes; ++i) {
    std::uint64_t w = 0;
    std::memcpy(&w, p + i * 8, bytes - i * 8 < 8 ? bytes - i * 8 : 8);
    s.words[i].store(w, std::memory_order_relaxed);
  }
  s.state.store(4 * k + 2, std::memory_order_release);
}

inline void leave_blocked_call(BlockedCallSlot& s) noexcept {
  const std::uint64_t k = s.state.load(std::memory_order_relaxed) >> 2;
  s.state.store(4 * (k + 1), std::memory_order_release);
}

// The tool's side: the call the rank is in, or nothing (outside, or the
// slot changed while it was read: read again later).
inline std::optional<BlockedCall> read_blocked_call(const BlockedCallSlot& s) noexcept {
  const std::uint64_t before = s.state.load(std::memory_order_acquire);
  if ((before & 3) != 2) return std::nullopt;
  BlockedCall c;
  c.entered = before >> 2;
  c.after_seq = s.after_seq.load(std::memory_order_relaxed);
  c.model = static_cast<Model>(s.model.load(std::memory_order_relaxed));
  c.call = s.call.load(std::memory_order_relaxed);
  c.bytes = s.bytes.load(std::memory_order_relaxed);
  c.call_site = s.call_site.load(std::memory_order_relaxed);
  if (c.bytes > kBlockedPayloadBytes) return std::nullopt;
  for (std::size_t i = 0; i < kBlockedPayloadWords; ++i)
    c.payload[i] = s.words[i].load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (s.state.load(std::memory_order_relaxed) != before) return std::nullopt;
  return c;
}

}  // namespace vcx::channel
