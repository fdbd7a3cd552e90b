// What the parts of the engine (collectives, the lock and flag depositions)
// need from it: messages to other engines, and stopping the tool when a peer
// breaks the protocol. The engine's PeerMail sends them; unit tests record
// them.
#pragma once

#include <cstdint>
#include <string>

#include "messages.h"
#include "vcx/types.h"

namespace vcx::vclock {

class Outbox {
 public:
  // A point-to-point message; `clock` null: none follows.
  virtual void send_p2p(Rank dst, MsgType type, std::uint16_t flags, QueueId queue,
                        std::uint64_t seq, const ClockValue* clock) = 0;
  // A collective message (type, kind, group, instance, root set). `aside`:
  // sent out of program order, so it must leave the pair's baseline alone.
  virtual void send_coll(Rank dst, const CollHeader& header, const ClockValue* clock,
                         bool aside) = 0;
  [[noreturn]] virtual void fatal(const std::string& why) = 0;

 protected:
  ~Outbox() = default;
};

}  // namespace vcx::vclock
