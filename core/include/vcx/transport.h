// Messages between tool processes. Ordered per (sender, receiver) pair; no
// order across pairs. Payloads are copied on send.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "vcx/types.h"

namespace vcx {

// Which part of the receiving tool a message between tools is for (each
// part sets its handler). Not to be confused with the channel, which is
// what carries an application rank's events to its tool (vcx/channel/).
enum class ToolPart : std::uint8_t {
  Control = 0,   // the tool process itself (termination, failures)
  Exchange = 1,  // the exchange engine
  Analysis = 2,  // analysis modules
};
inline constexpr std::size_t kToolParts = 3;

class PeerTransport {
 public:
  using Handler = std::function<void(Rank src, std::span<const std::uint8_t> payload)>;
  virtual ~PeerTransport() = default;
  // Queues a message; never blocks the caller. dst may be this process.
  virtual void send(Rank dst, ToolPart part, std::span<const std::uint8_t> payload) = 0;
  virtual void set_handler(ToolPart part, Handler h) = 0;
  virtual Rank self() const = 0;
  virtual std::uint32_t size() const = 0;
};

struct TransportStats {
  std::uint64_t messages_sent = 0;  // loopback included
  std::uint64_t bytes_sent = 0;
  std::uint64_t messages_received = 0;  // from other tools
  std::uint64_t bytes_received = 0;
  std::uint64_t refused_connections = 0;  // connections (rings) without the session token
  std::uint64_t shm_messages_sent = 0;    // of messages_sent: through shared memory
  std::uint64_t wakeups_sent = 0;         // shared memory: doorbells rung (system calls)
};

// What the tool process needs from a transport beyond what plugins see:
// failure reports, progress, an orderly close and counters.
class ToolTransport : public PeerTransport {
 public:
  using ErrorHandler = std::function<void(Rank peer, const std::string& what)>;
  virtual void set_error_handler(ErrorHandler h) = 0;
  // A transport whose messages arrive without waking the event loop (no file
  // descriptor to wait on) needs the loop to call poll() now and then.
  virtual bool needs_polling() const { return false; }
  // Makes progress and delivers what has arrived; returns how many messages
  // were delivered.
  virtual std::size_t poll() { return 0; }
  // Called before the loop sleeps in the io_context: false when a message
  // arrived meanwhile (do not sleep then). A transport whose senders wake a
  // sleeping receiver only when told that it sleeps announces it here;
  // end_sleep() takes the announcement back once the loop runs again.
  virtual bool prepare_sleep() { return true; }
  virtual void end_sleep() {}
  // True when every queued message has left this process.
  virtual bool flushed() const = 0;
  // Stops reporting peer losses (orderly shutdown) and closes everything.
  virtual void close() = 0;
  virtual const TransportStats& stats() const = 0;
};

}  // namespace vcx
