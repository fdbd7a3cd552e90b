// The tool's end of its application's channel, whichever it is: the
// shared-memory ring or the TCP connection. One predictable branch per
// call, no virtual dispatch; the shared-memory path is RingConsumer's own.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "vcx/channel/ring.h"
#include "vcx/channel/tcp_channel.h"

namespace vcx::channel {

class Consumer {
 public:
  explicit Consumer(ChannelControl* shared) : ring_(std::in_place, shared) {}
  Consumer(int tcp_fd, std::size_t ring_capacity)
      : tcp_(std::make_unique<TcpConsumer>(tcp_fd, ring_capacity)) {}

  const EventHeader* peek() noexcept { return tcp_ ? tcp_->peek() : ring_->peek(); }
  void pop() noexcept { tcp_ ? tcp_->pop() : ring_->pop(); }
  bool empty() noexcept { return tcp_ ? tcp_->empty() : ring_->empty(); }
  // `lazily`: see RingConsumer::prepare_sleep (the TCP channel wakes the
  // tool at every record).
  bool prepare_sleep(bool lazily = false) noexcept {
    return tcp_ ? tcp_->prepare_sleep() : ring_->prepare_sleep(lazily);
  }
  void end_sleep() noexcept { tcp_ ? tcp_->end_sleep() : ring_->end_sleep(); }
  void reply(std::uint64_t seq) noexcept { tcp_ ? tcp_->reply(seq) : ring_->reply(seq); }
  void set_tool_state(ToolState s) noexcept {
    tcp_ ? tcp_->set_tool_state(s) : ring_->set_tool_state(s);
  }

  // The TCP end, or nullptr for shared memory.
  TcpConsumer* tcp() const noexcept { return tcp_.get(); }

 private:
  std::optional<RingConsumer> ring_;
  std::unique_ptr<TcpConsumer> tcp_;
};

}  // namespace vcx::channel
