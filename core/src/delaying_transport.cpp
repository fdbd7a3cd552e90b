#include "vcx/delaying_transport.h"

#include <algorithm>

namespace vcx {

DelayingTransport::DelayingTransport(asio::io_context& io, std::unique_ptr<ToolTransport> inner,
                                     std::uint64_t max_delay_us, std::uint64_t seed)
    : inner_(std::move(inner)), max_delay_us_(max_delay_us), timer_(io) {
  // Every tool draws its own delays, repeatable from the seed and its rank.
  std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                    inner_->self().value};
  random_.seed(seq);
  last_release_.assign(inner_->size(), Clock::time_point{});
}

DelayingTransport::~DelayingTransport() { *alive_ = false; }

void DelayingTransport::send(Rank dst, ToolPart part, std::span<const std::uint8_t> payload) {
  if (closed_ || dst.value >= last_release_.size()) {
    inner_->send(dst, part, payload);  // nothing to keep in order with (or the inner one objects)
    return;
  }
  const std::uint64_t delay = std::uniform_int_distribution<std::uint64_t>(0, max_delay_us_)(random_);
  Clock::time_point& last = last_release_[dst.value];
  last = std::max(Clock::now() + std::chrono::microseconds(delay), last);

  std::vector<std::uint8_t> buffer;
  if (!spare_buffers_.empty()) {
    buffer = std::move(spare_buffers_.back());
    spare_buffers_.pop_back();
  }
  buffer.assign(payload.begin(), payload.end());
  heap_.push_back(Held{last, next_seq_++, dst, part, std::move(buffer)});
  std::push_heap(heap_.begin(), heap_.end(), later);
  arm_timer();
}

std::size_t DelayingTransport::poll() {
  release_due(Clock::now());
  arm_timer();
  return inner_->poll();
}

bool DelayingTransport::flushed() const { return heap_.empty() && inner_->flushed(); }

void DelayingTransport::close() {
  if (closed_) return;
  // Heap order is release order, which keeps each destination's order.
  while (!heap_.empty()) hand_over_front();
  closed_ = true;
  if (timer_armed_) {
    timer_armed_ = false;
    timer_.cancel();
  }
  inner_->close();
}

std::size_t DelayingTransport::release_due(Clock::time_point now) {
  std::size_t n = 0;
  while (!heap_.empty() && heap_.front().release <= now) {
    hand_over_front();
    ++n;
  }
  return n;
}

void DelayingTransport::hand_over_front() {
  std::pop_heap(heap_.begin(), heap_.end(), later);
  Held h = std::move(heap_.back());
  heap_.pop_back();
  inner_->send(h.dst, h.part, h.payload);  // copies the payload
  h.payload.clear();
  spare_buffers_.push_back(std::move(h.payload));
}

// One wait at a time, for the earliest held message. Re-arming for an
// earlier one cancels the wait in progress (its completion sees
// operation_aborted); a completion already queued when that happened finds
// nothing or little due and re-arms.
void DelayingTransport::arm_timer() {
  if (heap_.empty() || closed_) return;
  const Clock::time_point next = heap_.front().release;
  if (timer_armed_ && armed_for_ <= next) return;
  timer_armed_ = true;
  armed_for_ = next;
  timer_.expires_at(next);
  timer_.async_wait([this, alive = std::weak_ptr<bool>(alive_)](const error_code& e) {
    if (e == asio::error::operation_aborted || alive.expired()) return;
    timer_armed_ = false;
    release_due(Clock::now());
    arm_timer();
  });
}

}  // namespace vcx
