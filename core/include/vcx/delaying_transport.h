// Delay injection for testing vcx itself: a ToolTransport that holds every
// message for a random 0..max microseconds before handing it to the real
// transport, so that messages from different tools arrive in any order.
// Order per (sender, receiver) pair is kept, as every transport guarantees:
// a message never leaves before an earlier one to the same destination.
//
// Enabled by VCX_CHAOS_DELAY_US (with VCX_CHAOS_SEED); see docs/testing.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "vcx/asio.h"
#include "vcx/chaos_settings.h"
#include "vcx/transport.h"

namespace vcx {

class DelayingTransport final : public ToolTransport {
 public:
  // Timers run on `io`, the loop the inner transport runs on. The random
  // delays of each tool come from (seed, its rank).
  DelayingTransport(asio::io_context& io, std::unique_ptr<ToolTransport> inner,
                    std::uint64_t max_delay_us, std::uint64_t seed);
  ~DelayingTransport() override;

  void send(Rank dst, ToolPart part, std::span<const std::uint8_t> payload) override;
  void set_handler(ToolPart part, Handler h) override { inner_->set_handler(part, std::move(h)); }
  Rank self() const override { return inner_->self(); }
  std::uint32_t size() const override { return inner_->size(); }

  void set_error_handler(ErrorHandler h) override { inner_->set_error_handler(std::move(h)); }
  bool needs_polling() const override { return inner_->needs_polling(); }
  // Hands over the messages whose time has come, then polls the inner one.
  std::size_t poll() override;
  bool prepare_sleep() override { return inner_->prepare_sleep(); }
  void end_sleep() override { inner_->end_sleep(); }
  // False while a message is held here or the inner transport holds one.
  bool flushed() const override;
  // Hands every held message over at once (in order), then closes the inner
  // transport: nothing is lost, only no longer delayed.
  void close() override;
  // The inner transport's counters: a message counts once handed over.
  const TransportStats& stats() const override { return inner_->stats(); }

  // Messages held now.
  std::size_t pending() const { return heap_.size(); }

 private:
  using Clock = std::chrono::steady_clock;
  struct Held {
    Clock::time_point release;
    std::uint64_t seq;  // sending order: breaks ties, keeps FIFO per destination
    Rank dst;
    ToolPart part;
    std::vector<std::uint8_t> payload;
  };
  // Min-heap order on (release, seq).
  static bool later(const Held& a, const Held& b) {
    return a.release != b.release ? a.release > b.release : a.seq > b.seq;
  }

  std::size_t release_due(Clock::time_point now);
  void hand_over_front();
  void arm_timer();

  std::unique_ptr<ToolTransport> inner_;
  std::uint64_t max_delay_us_;
  std::mt19937_64 random_;
  asio::steady_timer timer_;
  bool timer_armed_ = false;
  Clock::time_point armed_for_{};
  // Lets a timer completion that outlives this object see that it did.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::vector<Held> heap_;
  std::vector<Clock::time_point> last_release_;  // per destination
  std::vector<std::vector<std::uint8_t>> spare_buffers_;
  std::uint64_t next_seq_ = 0;
  bool closed_ = false;
};

}  // namespace vcx
