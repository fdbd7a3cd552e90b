// The connection between a tool and its application rank: the listener the
// rank's interceptor attaches through (in the session directory), the
// channel its events arrive in (a shared-memory ring with a Unix socket
// for wake-ups, or a TCP stream), the replies going back, and the rank's
// state as the tool knows it. Reading and translating the events is the
// tool's (ToolProcess::service_channel).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <functional>
#include <memory>
#include <optional>

#include "tool_options.h"
#include "vcx/app_listener.h"
#include "vcx/asio.h"
#include "vcx/channel/attach.h"
#include "vcx/channel/consumer.h"
#include "vcx/channel/event_record.h"
#include "vcx/types.h"

namespace vcx::tool {

enum class AppState { NeverAttached, Attached, Finalized, Crashed };
const char* app_state_name(AppState s);

class AppConnection {
 public:
  // What an admitted rank is told, asked when it attaches (the plugins,
  // loaded by then, decide part of it).
  struct Terms {
    std::uint32_t mode_flags = 0;  // channel::kMode*
    std::uint32_t app_spin_ns = 0;
  };

  AppConnection(asio::io_context& io, const ToolOptions& opts, Rank rank, std::uint32_t size);
  ~AppConnection();
  AppConnection(const AppConnection&) = delete;
  AppConnection& operator=(const AppConnection&) = delete;

  // Starts listening for the rank. `on_gone` runs when its connection ends
  // (end of file on the wake-up socket; with TCP, see stream_ended()).
  void listen(std::function<Terms()> terms, std::function<void()> on_gone);

  AppState state() const { return state_; }
  void set_state(AppState s) { state_ = s; }
  std::int32_t pid() const { return pid_; }
  // Whether the attached rank's pid names this run's rank on this node: a
  // process here carrying the session's token (with a TCP channel the rank
  // may run on another node, where the same pid is some other process).
  bool rank_on_this_node() const;
  // The rank's memory map as it attached (from MPI_Init), "" if it runs on
  // another node: source lines for what is reported after it ended.
  const std::string& maps_at_attach() const { return maps_at_attach_; }
  // The events: null until a rank attached.
  channel::Consumer* consumer() { return consumer_ ? &*consumer_ : nullptr; }
  bool ended() const { return eof_; }

  // Answers the rank's events through `event_seq`.
  void reply(std::uint64_t event_seq);
  // TCP: wakes the tool's loop once the stream is readable again (armed
  // when everything readable was read, so it never fires for old news).
  void wait_readable();
  // TCP: sends the replies the stream had no room for once it has.
  void flush_replies_when_writable();
  // TCP: everything the rank sent before its end has been read; runs
  // on_gone once.
  void stream_ended();
  // Whether the rank's end shows on its socket, without reading it.
  bool hung_up() const;
  // Whether the rank sleeps until this tool answers (unknown with TCP:
  // true).
  bool rank_sleeping() const;
  // The analysis stopped: the rank's interceptor learns it from the channel.
  void tell_failed();
  // The detach event's account of the rank's waiting (TCP; with shared
  // memory the block holds it).
  void take_account(const DetachEvent& account) { account_ = account; }
  std::uint64_t stall_ns() const;
  std::uint64_t backpressure_ns() const;
  // The leases of the rank's locks: the block stays mapped until the tool
  // ends, so recalls that come after the rank finished still find them.
  channel::LeaseTable* leases() { return block_.control ? &block_.control->leases : nullptr; }
  // The call the rank is in while it may wait for other ranks, if any
  // (shared-memory channels only; blocked_call.h).
  std::optional<channel::BlockedCall> blocked_call() const {
    if (!block_.control) return std::nullopt;
    return channel::read_blocked_call(block_.control->blocked);
  }

 private:
  AppListener::Decision admit(const channel::AttachHello& hello);
  void attached(int fd);
  void read_wakeups();

  asio::io_context& io_;
  const ToolOptions& opts_;
  Rank rank_;
  std::uint32_t size_;
  std::function<Terms()> terms_;
  std::function<void()> on_gone_;
  std::shared_ptr<AppListener> listener_;
  // The rank's socket: the Unix socket of the shm channel (wake-up bytes,
  // end of file) or the TCP connection itself.
  std::unique_ptr<asio::posix::stream_descriptor> stream_;
  std::array<std::uint8_t, 64> wake_buf_{};
  bool wait_armed_ = false;   // tcp: waiting for the connection to be readable
  bool write_armed_ = false;  // tcp: waiting for room for replies
  channel::ChannelBlock block_{};
  std::optional<channel::Consumer> consumer_;
  DetachEvent account_{};  // tcp: the rank's waiting, from its detach
  AppState state_ = AppState::NeverAttached;
  std::int32_t pid_ = 0;
  std::string maps_at_attach_;
  bool eof_ = false;
};

}  // namespace vcx::tool
