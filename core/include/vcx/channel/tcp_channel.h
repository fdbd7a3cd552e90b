// The TCP channel between application rank i and tool rank i, for a tool on
// another node or where shared memory cannot be used.
//
// Both ends keep a process-local ring of the capacity the tool announced in
// its attach reply, laid out exactly like the shared-memory ring. The
// connection carries the application ring's bytes verbatim (records and
// wrap padding), so the tool's ring becomes a byte-for-byte mirror and both
// ends reuse RingProducer and RingConsumer for the layout. The tool answers
// with fixed-size ToolMessages (replies and its state).
//
// Every commit sends its record at once, in one send(): a signal held back
// in the application could be the one another rank's tool waits for while
// this rank blocks inside MPI, and a record the kernel has accepted still
// reaches the tool if the application crashes, as one in the shared ring
// does. When the tool falls behind it stops reading; the kernel's buffers
// fill and the application waits in send (backpressure, nothing dropped).
// End of file on either side means the other is gone.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include "vcx/channel/ring.h"
#include "vcx/channel/shared_channel.h"

namespace vcx::channel {

enum class ToolMessageKind : std::uint32_t {
  Reply = 1,  // value: the highest event answered
  State = 2,  // value: ToolState
};

struct ToolMessage {
  ToolMessageKind kind;
  std::uint32_t reserved;
  std::uint64_t value;
};
static_assert(std::is_trivially_copyable_v<ToolMessage>);
static_assert(sizeof(ToolMessage) == 16);

// A ChannelControl block with its ring in ordinary process memory.
class PrivateRing {
 public:
  explicit PrivateRing(std::size_t ring_capacity);
  ChannelControl* control() const noexcept { return control_.get(); }

 private:
  struct Free {
    void operator()(ChannelControl* c) const noexcept;
  };
  std::unique_ptr<ChannelControl, Free> control_;
};

// Sets the options both ends want on the connection: no Nagle delay (every
// record and reply is latency-bound) and keep-alive probes, so that a peer
// whose node vanished is noticed even while the connection is idle.
void tune_channel_socket(int fd) noexcept;

// ---- application side -------------------------------------------------------

class TcpProducer {
 public:
  // `fd` is the connected socket after a successful attach; it stays owned
  // by the caller and is switched to non-blocking mode. The hooks'
  // wake_consumer and tool_alive are not used: the connection itself wakes
  // the tool and reports its end.
  TcpProducer(int fd, std::size_t ring_capacity, ProducerHooks hooks, WaitPolicy policy = {});
  TcpProducer(const TcpProducer&) = delete;
  TcpProducer& operator=(const TcpProducer&) = delete;

  std::size_t max_payload() const noexcept { return ring_.max_payload(); }
  // As RingProducer::begin; nullptr once the tool is known to be gone.
  void* begin(Model model, std::uint16_t type, std::uint32_t flags, std::size_t payload_size,
              std::uint64_t call_site = 0);
  // Publishes the record and sends it; waits while the connection is full.
  std::uint64_t commit() noexcept;
  // Waits until the tool has replied to event `seq` (reading its messages,
  // driving the progress hook meanwhile). Safe to call from several threads.
  WaitResult wait_reply(std::uint64_t seq) noexcept;

  std::uint64_t last_seq() const noexcept { return ring_.last_seq(); }
  std::uint64_t replied_seq() const noexcept { return replied_.load(std::memory_order_acquire); }
  bool tool_gone() const noexcept;
  // Time spent waiting for replies and for room in the connection.
  std::uint64_t stall_ns() const noexcept;
  std::uint64_t backpressure_ns() const noexcept;
  // True while a commit waits for room (the tool is behind).
  bool waiting_for_room() const noexcept { return waiting_for_room_.load(); }

 private:
  void send_pending() noexcept;
  bool wait_for_room() noexcept;
  void receive(std::uint64_t timeout_ns) noexcept;

  int fd_;
  PrivateRing local_;
  RingProducer ring_;
  std::uint64_t sent_ = 0;  // ring bytes handed to the kernel
  ProducerHooks hooks_;
  WaitPolicy policy_;
  std::atomic<std::uint64_t> replied_{0};
  std::atomic<bool> gone_{false};    // end of file or error on the connection
  std::atomic<bool> failed_{false};  // the tool said it gave up
  std::atomic<bool> waiting_for_room_{false};
  std::mutex reader_;  // one thread at a time reads the tool's messages
  std::uint8_t inbox_[64 * sizeof(ToolMessage)];
  std::size_t inbox_bytes_ = 0;
};

// ---- tool side --------------------------------------------------------------

class TcpConsumer {
 public:
  // `fd` is the accepted connection after the application's hello; it stays
  // owned by the caller and is switched to non-blocking mode.
  TcpConsumer(int fd, std::size_t ring_capacity);
  TcpConsumer(const TcpConsumer&) = delete;
  TcpConsumer& operator=(const TcpConsumer&) = delete;

  // The next record, or nullptr when none is complete. Reads from the
  // connection only when every received record has been consumed, so a
  // tool that falls behind stops reading.
  const EventHeader* peek() noexcept;
  void pop() noexcept { ring_.pop(); }
  bool empty() noexcept { return peek() == nullptr; }
  // True when there is nothing to do: sleep until the connection is
  // readable (the caller waits for that).
  bool prepare_sleep() noexcept { return peek() == nullptr; }
  void end_sleep() noexcept {}

  void reply(std::uint64_t seq) noexcept;
  void set_tool_state(ToolState s) noexcept;
  // Tool messages still waiting for room in the connection; call
  // flush_output() once it is writable.
  bool output_pending() const noexcept { return out_sent_ < out_.size(); }
  void flush_output() noexcept;

  // The application's end is gone (end of file, error, or a malformed
  // stream). Records received before stay readable.
  bool closed() const noexcept { return closed_; }
  bool malformed() const noexcept { return malformed_; }
  ChannelControl* control() const noexcept { return local_.control(); }
  int fd() const noexcept { return fd_; }

 private:
  bool receive() noexcept;
  void queue(ToolMessageKind kind, std::uint64_t value) noexcept;

  int fd_;
  PrivateRing local_;
  RingConsumer ring_;
  std::uint64_t received_ = 0;   // stream bytes in the ring
  std::uint64_t published_ = 0;  // of those, complete records
  bool closed_ = false;
  bool malformed_ = false;
  std::uint64_t replied_ = 0;
  std::vector<std::uint8_t> out_;
  std::size_t out_sent_ = 0;
};

}  // namespace vcx::channel
