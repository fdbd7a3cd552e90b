#include "vcx/channel/shared_channel.h"

#include <new>

namespace vcx::channel {

void init_channel(ChannelControl* c, std::size_t ring_capacity, std::uint32_t mode_flags) {
  new (c) ChannelControl{};
  c->magic = kChannelMagic;
  c->layout_version = kChannelLayoutVersion;
  c->flags = mode_flags;
  c->ring_capacity = ring_capacity;
  c->head.store(0, std::memory_order_relaxed);
  c->tail.store(0, std::memory_order_relaxed);
  c->replied_seq.store(0, std::memory_order_relaxed);
  c->tool_state.store(static_cast<std::uint32_t>(ToolState::Running), std::memory_order_release);
}

bool channel_valid(const ChannelControl* c, std::size_t mapped_bytes) {
  if (mapped_bytes < sizeof(ChannelControl)) return false;
  if (c->magic != kChannelMagic || c->layout_version != kChannelLayoutVersion) return false;
  const std::uint64_t cap = c->ring_capacity;
  if (cap < 4096 || (cap & (cap - 1)) != 0) return false;
  return channel_bytes(cap) <= mapped_bytes;
}

}  // namespace vcx::channel
