// Messages between tool processes. Ordered per (sender, receiver) pair; no
// order across pairs. Payloads are copied on send.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "vcx/types.h"

namespace vcx {

// Which part of the tool a message is for.
enum class PeerChannel : std::uint8_t {
  Control = 0,   // the tool process itself (termination, failures)
  Exchange = 1,  // the vclock module
  Analysis = 2,  // analysis modules
};
inline constexpr std::size_t kPeerChannels = 3;

class PeerTransport {
 public:
  using Handler = std::function<void(Rank src, std::span<const std::uint8_t> payload)>;
  virtual ~PeerTransport() = default;
  // Queues a message; never blocks the caller. dst may be this process.
  virtual void send(Rank dst, PeerChannel ch, std::span<const std::uint8_t> payload) = 0;
  virtual void set_handler(PeerChannel ch, Handler h) = 0;
  virtual Rank self() const = 0;
  virtual std::uint32_t size() const = 0;
};

}  // namespace vcx
