#include "vcx/channel/ring.h"

#include <time.h>

#include <algorithm>
#include <cstring>

#include "vcx/channel/futex.h"

namespace vcx::channel {
namespace {

void write_padding(std::uint8_t* at, std::uint64_t bytes) noexcept {
  // A padding record may be as short as 8 bytes: only size and model are written.
  const std::uint32_t size = static_cast<std::uint32_t>(bytes);
  const Model model = Model::Padding;
  std::memcpy(at, &size, sizeof size);
  std::memcpy(at + offsetof(EventHeader, model), &model, sizeof model);
}

}  // namespace

RingProducer::RingProducer(ChannelControl* control, ProducerHooks hooks, WaitPolicy policy)
    : c_(control),
      data_(ring_data(control)),
      mask_(control->ring_capacity - 1),
      head_(control->head.load(std::memory_order_relaxed)),
      pending_head_(head_),
      tail_cache_(control->tail.load(std::memory_order_acquire)),
      lazy_wake_bytes_(ring_lazy_wake_bytes(control->ring_capacity)),
      hooks_(hooks),
      policy_(policy) {}

// A record of the largest payload, timed, fills a quarter of the ring.
std::size_t RingProducer::max_payload() const noexcept {
  return (mask_ + 1) / 4 - sizeof(EventHeader) - sizeof(EventTiming);
}

bool RingProducer::wait_for_space(std::uint64_t needed) noexcept {
  const std::uint64_t cap = mask_ + 1;
  auto fits = [&] { return pending_head_ + needed - tail_cache_ <= cap; };
  tail_cache_ = c_->tail.load(std::memory_order_acquire);
  if (fits()) return true;

  // Full: sleep until the consumer has drained the ring to its low-water
  // mark (the consumer wakes us once then, not at every record), so that a
  // flood costs one handshake per half ring instead of one per event. No
  // spinning: half a ring takes the consumer far longer than a spin.
  const std::uint64_t start = now_ns();
  auto drained = [&] { return pending_head_ - tail_cache_ <= ring_low_water(cap) && fits(); };
  bool ok = true;
  for (;;) {
    const std::uint32_t f = c_->space_futex.load(std::memory_order_acquire);
    c_->producer_waiting.store(1, std::memory_order_seq_cst);
    tail_cache_ = c_->tail.load(std::memory_order_seq_cst);
    if (drained()) break;
    if (c_->tool_state.load(std::memory_order_acquire) != 0 ||
        (hooks_.tool_alive && !hooks_.tool_alive(hooks_.ctx))) {
      ok = false;
      break;
    }
    // A consumer that sleeps while the ring is full would never free space.
    if (hooks_.wake_consumer && c_->consumer_sleeping.exchange(0, std::memory_order_seq_cst))
      hooks_.wake_consumer(hooks_.ctx);
    futex_wait(&c_->space_futex, f, policy_.liveness_check_ns);
  }
  c_->producer_waiting.store(0, std::memory_order_relaxed);
  c_->backpressure_ns.fetch_add(now_ns() - start, std::memory_order_relaxed);
  return ok;
}

void* RingProducer::begin(Model model, std::uint16_t type, std::uint32_t flags,
                          std::size_t payload_size, std::uint64_t call_site) {
  if (payload_size > max_payload()) return nullptr;
  // A tool that gave up reads nothing more: the application learns it at
  // its next call, not only at its next wait (one load of a line it reads
  // for replies anyway).
  if (c_->tool_state.load(std::memory_order_relaxed) != 0) return nullptr;
  const std::uint64_t rec = event_record_size(payload_size, flags);
  const std::uint64_t cap = mask_ + 1;
  pending_head_ = head_;
  std::uint64_t off = pending_head_ & mask_;
  std::uint64_t pad = (off + rec > cap) ? cap - off : 0;
  if (pending_head_ + pad + rec - tail_cache_ > cap && !wait_for_space(pad + rec)) return nullptr;
  if (pad != 0) {
    write_padding(data_ + off, pad);
    pending_head_ += pad;
    off = 0;
  }
  auto* h = reinterpret_cast<EventHeader*>(data_ + off);
  h->size = static_cast<std::uint32_t>(rec);
  h->model = model;
  h->type = type;
  h->flags = flags;
  h->payload_size = static_cast<std::uint32_t>(payload_size);
  h->seq = seq_ + 1;
  h->call_site = call_site;
  pending_waited_for_ = (flags & (kEventNeedsReply | kEventAlwaysReply)) != 0;
  pending_head_ += rec;
  return h + 1;
}

std::uint64_t RingProducer::commit() noexcept {
  ++seq_;
  head_ = pending_head_;
  // seq_cst pairs with the consumer's prepare_sleep(): either it sees this
  // record or we see that it sleeps.
  c_->head.store(head_, std::memory_order_seq_cst);
  const std::uint32_t sleeping = c_->consumer_sleeping.load(std::memory_order_seq_cst);
  if (sleeping == kConsumerAwake) return seq_;
  // A lazy sleeper reads this record at its own wake-up, unless the
  // application is going to wait for it or the unread part grows large.
  if (sleeping == kConsumerSleepingLazily && !pending_waited_for_ &&
      head_ - c_->tail.load(std::memory_order_relaxed) < lazy_wake_bytes_)
    return seq_;
  if (c_->consumer_sleeping.exchange(kConsumerAwake, std::memory_order_seq_cst) != 0 &&
      hooks_.wake_consumer)
    hooks_.wake_consumer(hooks_.ctx);
  return seq_;
}

WaitResult RingProducer::wait_reply(std::uint64_t seq) noexcept {
  if (c_->replied_seq.load(std::memory_order_acquire) >= seq) return WaitResult::Ok;
  const std::uint64_t start = now_ns();
  const std::uint64_t spin_until = start + policy_.spin_ns;
  WaitResult result = WaitResult::Ok;
  while (now_ns() < spin_until) {
    cpu_relax();
    if (c_->replied_seq.load(std::memory_order_acquire) >= seq) goto done;
  }
  {
    std::uint64_t nap = policy_.progress_min_ns;
    std::uint64_t last_liveness = 0;  // check at once, then every liveness_check_ns
    for (;;) {
      if (hooks_.progress) hooks_.progress(hooks_.ctx);
      const std::uint32_t f = c_->reply_futex.load(std::memory_order_acquire);
      c_->app_sleeping.store(1, std::memory_order_seq_cst);
      if (c_->replied_seq.load(std::memory_order_seq_cst) >= seq) break;
      const std::uint64_t now = now_ns();
      if (c_->tool_state.load(std::memory_order_acquire) != 0 ||
          (now - last_liveness >= policy_.liveness_check_ns && hooks_.tool_alive &&
           !hooks_.tool_alive(hooks_.ctx))) {
        result = WaitResult::ToolGone;
        break;
      }
      if (now - last_liveness >= policy_.liveness_check_ns) last_liveness = now;
      if (hooks_.progress) {
        futex_wait(&c_->reply_futex, f, nap);
        nap = std::min(nap * 2, policy_.progress_max_ns);
      } else {
        futex_wait(&c_->reply_futex, f, policy_.liveness_check_ns);
      }
    }
  }
  c_->app_sleeping.store(0, std::memory_order_relaxed);
done:
  c_->stall_ns.fetch_add(now_ns() - start, std::memory_order_relaxed);
  return result;
}

RingConsumer::RingConsumer(ChannelControl* control)
    : c_(control),
      data_(ring_data(control)),
      mask_(control->ring_capacity - 1),
      tail_(control->tail.load(std::memory_order_relaxed)),
      head_cache_(control->head.load(std::memory_order_acquire)) {}

bool RingConsumer::empty() const noexcept {
  return c_->head.load(std::memory_order_acquire) == tail_;
}

const EventHeader* RingConsumer::peek() noexcept {
  for (;;) {
    if (tail_ == head_cache_) {
      head_cache_ = c_->head.load(std::memory_order_acquire);
      if (tail_ == head_cache_) return nullptr;
    }
    const std::uint8_t* at = data_ + (tail_ & mask_);
    std::uint32_t size;
    Model model;
    std::memcpy(&size, at, sizeof size);
    std::memcpy(&model, at + offsetof(EventHeader, model), sizeof model);
    if (model != Model::Padding) return reinterpret_cast<const EventHeader*>(at);
    tail_ += size;  // padding is consumed without being published separately
  }
}

void RingConsumer::pop() noexcept {
  const auto* h = reinterpret_cast<const EventHeader*>(data_ + (tail_ & mask_));
  tail_ += h->size;
  c_->tail.store(tail_, std::memory_order_seq_cst);
  // seq_cst pairs with the producer's wait_for_space(): either it sees this
  // tail or we see that it waits. It is woken once the ring has drained to
  // the low-water mark; claiming producer_waiting makes that one wake-up.
  if (c_->producer_waiting.load(std::memory_order_seq_cst) != 0 &&
      c_->head.load(std::memory_order_acquire) - tail_ <= ring_low_water(mask_ + 1) &&
      c_->producer_waiting.exchange(0, std::memory_order_seq_cst) != 0) {
    ++producer_wakes_;
    c_->space_futex.fetch_add(1, std::memory_order_release);
    futex_wake_all(&c_->space_futex);
  }
}

bool RingConsumer::prepare_sleep(bool lazily) noexcept {
  c_->consumer_sleeping.store(lazily ? kConsumerSleepingLazily : kConsumerSleeping,
                              std::memory_order_seq_cst);
  if (c_->head.load(std::memory_order_seq_cst) != tail_) {
    // Take the announcement back, unless a producer already claimed it: then
    // its wake-up is on the way and sleeping is right (it returns at once),
    // so that every wake-up sent matches exactly one sleep.
    return c_->consumer_sleeping.exchange(0, std::memory_order_seq_cst) == 0;
  }
  return true;
}

void RingConsumer::end_sleep() noexcept {
  c_->consumer_sleeping.store(0, std::memory_order_relaxed);
}

void RingConsumer::reply(std::uint64_t seq) noexcept {
  if (c_->replied_seq.load(std::memory_order_relaxed) >= seq) return;
  c_->replied_seq.store(seq, std::memory_order_seq_cst);
  if (c_->app_sleeping.load(std::memory_order_seq_cst) != 0) {
    c_->reply_futex.fetch_add(1, std::memory_order_release);
    futex_wake_all(&c_->reply_futex);
  }
}

void RingConsumer::set_tool_state(ToolState s) noexcept {
  c_->tool_state.store(static_cast<std::uint32_t>(s), std::memory_order_seq_cst);
  c_->reply_futex.fetch_add(1, std::memory_order_release);
  futex_wake_all(&c_->reply_futex);
  c_->space_futex.fetch_add(1, std::memory_order_release);
  futex_wake_all(&c_->space_futex);
}

}  // namespace vcx::channel
