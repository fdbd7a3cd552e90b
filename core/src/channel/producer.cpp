#include "vcx/channel/producer.h"

namespace vcx::channel {

Producer::Producer(const Attachment& a, ProducerHooks hooks, WaitPolicy policy) {
  if (a.kind == ChannelKind::Tcp)
    tcp_ = std::make_unique<TcpProducer>(a.socket_fd, a.ring_capacity, hooks, policy);
  else
    ring_ = RingProducer(a.control, hooks, policy);
}

std::uint64_t Producer::stall_ns() const noexcept {
  if (tcp_) return tcp_->stall_ns();
  return ring_.control() ? ring_.control()->stall_ns.load(std::memory_order_relaxed) : 0;
}

std::uint64_t Producer::backpressure_ns() const noexcept {
  if (tcp_) return tcp_->backpressure_ns();
  return ring_.control() ? ring_.control()->backpressure_ns.load(std::memory_order_relaxed) : 0;
}

}  // namespace vcx::channel
