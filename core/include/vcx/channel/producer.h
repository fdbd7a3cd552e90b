// The application's end of its channel, whichever the tool chose: the
// shared-memory ring or the TCP connection. The interceptor sees one API;
// the choice is one predictable branch per call, no virtual dispatch, and
// the shared-memory path is RingProducer's own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "vcx/channel/attach.h"
#include "vcx/channel/ring.h"
#include "vcx/channel/tcp_channel.h"

namespace vcx::channel {

class Producer {
 public:
  Producer() = default;
  // Over a successful attachment; the hooks serve the shared-memory ring
  // (TcpProducer uses only the progress hook).
  Producer(const Attachment& a, ProducerHooks hooks, WaitPolicy policy = {});

  std::size_t max_payload() const noexcept {
    return tcp_ ? tcp_->max_payload() : ring_.max_payload();
  }
  void* begin(Model model, std::uint16_t type, std::uint32_t flags, std::size_t payload_size,
              std::uint64_t call_site = 0) {
    return tcp_ ? tcp_->begin(model, type, flags, payload_size, call_site)
                : ring_.begin(model, type, flags, payload_size, call_site);
  }
  std::uint64_t commit() noexcept { return tcp_ ? tcp_->commit() : ring_.commit(); }
  WaitResult wait_reply(std::uint64_t seq) noexcept {
    return tcp_ ? tcp_->wait_reply(seq) : ring_.wait_reply(seq);
  }
  std::uint64_t last_seq() const noexcept { return tcp_ ? tcp_->last_seq() : ring_.last_seq(); }
  // The shared block, or nullptr over TCP.
  ChannelControl* shared() const noexcept { return tcp_ ? nullptr : ring_.control(); }
  // Time the application spent waiting for replies and for room.
  std::uint64_t stall_ns() const noexcept;
  std::uint64_t backpressure_ns() const noexcept;

 private:
  RingProducer ring_;
  std::unique_ptr<TcpProducer> tcp_;
};

}  // namespace vcx::channel
