// Keys of the exchange's queues: a queue of this process with one peer, and a
// position on it (a signal's or an answer's sequence number; for locks, the
// (deposition, resource) pair and an acquisition number).
#pragma once

#include <cstddef>
#include <cstdint>

#include "vcx/types.h"

namespace vcx::vclock {

struct PeerQueue {
  Rank peer{};
  QueueId queue{};
  bool operator==(const PeerQueue&) const = default;
};
struct PeerQueueHash {
  std::size_t operator()(const PeerQueue& k) const noexcept {
    return static_cast<std::size_t>(
        hash_combine(hash_combine(mix64(k.peer.value), k.queue.a), k.queue.b));
  }
};

struct QueuePosition {
  PeerQueue key;
  std::uint64_t seq;
  bool operator==(const QueuePosition&) const = default;
};
struct QueuePositionHash {
  std::size_t operator()(const QueuePosition& k) const noexcept {
    return hash_combine(PeerQueueHash{}(k.key), k.seq);
  }
};

}  // namespace vcx::vclock
