#include "vcx/intercept/channel_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "vcx/channel/futex.h"
#include "vcx/intercept/call_site.h"
#include "vcx/intercept/call_timing.h"
#include "vcx/intercept/ending.h"

namespace vcx::intercept {
namespace {

std::atomic_flag g_lock = ATOMIC_FLAG_INIT;
// This thread is between lock() and unlock(): program code it runs there
// (an MPI callback) must not report accesses, which would take the lock.
// Initial-exec: the interceptor is preloaded, and this is read on every
// access to watched memory.
__attribute__((tls_model("initial-exec"))) thread_local bool t_in_lock = false;
// The number of the timed event this thread sent last (ChannelClient::
// timed_events_): its call's return belongs to the channel's last timed
// event only if no other thread sent one since.
__attribute__((tls_model("initial-exec"))) thread_local std::uint64_t t_my_timed_event = 0;

void on_local_access(std::uintptr_t addr, std::uintptr_t bytes, int write, std::uintptr_t pc) {
  process_client().local_access(addr, bytes, write != 0, pc);
}

// The progress of every model that started and has not ended: a model that
// ends (MPI_Finalize) must no longer be driven while another one waits.
constexpr std::size_t kProgressSlots = 8;
std::atomic<void (*)(void*)> g_progress[kProgressSlots];

void drive_progress(void* ctx) {
  for (auto& p : g_progress)
    if (auto* f = p.load(std::memory_order_acquire)) f(ctx);
}

void wake_tool(void* ctx) {
  const int fd = *static_cast<int*>(ctx);
  const char byte = 'w';
  // Non-blocking: if the socket buffer is full the tool is awake anyway.
  (void)::send(fd, &byte, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}

bool tool_alive(void* ctx) {
  const int fd = *static_cast<int*>(ctx);
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  if (::poll(&p, 1, 0) <= 0) return true;
  // The tool never writes after the attach, so readable means end of file.
  return (p.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLIN)) == 0;
}

bool continue_on_failure() {
  const char* v = std::getenv("VCX_ON_TOOL_FAILURE");
  return v && std::strcmp(v, "continue") == 0;
}

}  // namespace

ChannelClient& process_client() {
  static ChannelClient client;
  return client;
}

const char* ChannelClient::call_name(Model model, std::uint16_t call) const {
  const auto f = call_names_[index(model)];
  return f ? f(call) : "?";
}

bool ChannelClient::attach(const ClientSetup& setup) {
  if (attempted_) return join(setup);
  attempted_ = true;
  world_rank_ = setup.world_rank;
  world_size_ = setup.world_size;
  serialise_ = setup.serialise;
  abort_job_ = setup.abort_job;
  call_names_[index(setup.model)] = setup.call_name;
  ends_[index(setup.model)] = setup.end;
  const char* dir = std::getenv("VCX_SESSION_DIR");
  if (!dir || !*dir) {
    if (world_rank_ == 0)
      std::fprintf(stderr,
                   "vcx: the vcx interceptor is loaded but the program was not started by "
                   "vcx-run; running without analysis\n");
    return false;
  }
  watch_ending(dir, world_rank_);
  channel::AttachHello hello{};
  hello.magic = channel::kAttachMagic;
  hello.version = channel::kAttachVersion;
  hello.world_rank = static_cast<std::uint32_t>(world_rank_);
  hello.world_size = static_cast<std::uint32_t>(setup.world_size);
  hello.pid = static_cast<std::int32_t>(::getpid());
  hello.model = static_cast<std::uint16_t>(setup.model);
  if (const char* token = std::getenv("VCX_SESSION_TOKEN"))
    std::snprintf(hello.token, sizeof hello.token, "%s", token);

  int timeout_ms = 30'000;
  if (const char* t = std::getenv("VCX_ATTACH_TIMEOUT_MS")) timeout_ms = std::atoi(t);
  // The tool decides the channel (shared memory or TCP) by what it publishes.
  std::string error;
  if (!channel::attach_in_session(dir, hello, timeout_ms, &attachment_, &error)) {
    std::fprintf(stderr, "vcx: rank %d: cannot reach its tool process: %s\n", world_rank_,
                 error.c_str());
    if (continue_on_failure()) {
      std::fprintf(stderr, "vcx: rank %d: running without analysis (VCX_ON_TOOL_FAILURE=continue)\n",
                   world_rank_);
      return false;
    }
    record_ending("tool-failed", 70);
    abort_job_(70);
    return false;
  }
  no_stall_ = (attachment_.mode_flags & channel::kModeNoStall) != 0;
  yield_in_waits_ = (attachment_.mode_flags & channel::kModeYieldInWaits) != 0;
  if (attachment_.mode_flags & channel::kModeTimestamps) {
    const char* why = nullptr;
    if (!start_trace_clock(world_rank_, &why)) {
      std::fprintf(stderr, "vcx: rank %d: %s\n", world_rank_, why);
      abort_job_(64);
      return false;
    }
    timed_ = true;
  }
  channel::ProducerHooks hooks;
  hooks.ctx = &attachment_.socket_fd;
  hooks.wake_consumer = &wake_tool;
  hooks.tool_alive = &tool_alive;
  hooks.progress = &drive_progress;
  g_progress[index(setup.model)].store(setup.progress, std::memory_order_release);
  channel::WaitPolicy policy;
  // The tool knows whether it shares this process's core (then polling only
  // keeps it from answering) and says how long to poll.
  policy.spin_ns = attachment_.app_spin_ns;
  producer_ = channel::Producer(attachment_, hooks, policy);
  // The program's threads report accesses through the same channel as the
  // calls: every push is serialised then.
  if ((attachment_.mode_flags & channel::kModeLocalAccesses) &&
      local_.start(&send_local, this, producer_.max_payload(), &on_local_access))
    serialise_ = true;
  if (channel::ChannelControl* c = producer_.shared(); c && !serialise_) blocked_ = &c->blocked;
  active_ = true;
  joined_[index(setup.model)] = true;
  joined_count_ = 1;
  return true;
}

bool ChannelClient::join(const ClientSetup& setup) {
  const std::size_t m = index(setup.model);
  if (!active_ || joined_[m]) return active(setup.model);
  if (setup.world_rank != world_rank_ || setup.world_size != world_size_) {
    // The tools number ranks one way for every model: rank i's events go to
    // tool i whichever model sends them.
    std::fprintf(stderr,
                 "vcx: rank %d of %d: this process is rank %d of %d of its second programming "
                 "model; vcx analyses MPI+OpenSHMEM programs whose MPI_COMM_WORLD ranks are "
                 "their PE numbers: run MPI and OpenSHMEM as one Open MPI job\n",
                 world_rank_, world_size_, setup.world_rank, setup.world_size);
    record_ending("tool-failed", 70);
    abort_job_(70);
    return false;
  }
  call_names_[m] = setup.call_name;
  ends_[m] = setup.end;
  g_progress[m].store(setup.progress, std::memory_order_release);
  serialise_ = serialise_ || setup.serialise;
  if (serialise_) blocked_ = nullptr;
  joined_[m] = true;
  ++joined_count_;
  return true;
}

void ChannelClient::finish(Model model, std::uint16_t finalize_call) {
  const std::size_t m = index(model);
  if (!active_ || !joined_[m]) {
    // Not analysed (or never started): only the ending is normal now.
    if (!active_) ending_finalized();
    return;
  }
  const bool last = joined_count_ == 1;
  if (last) ending_finalized();
  // Without stalls the finalize call still waits, until the tool has read
  // it (not computed it): a rank whose tool died learns it here at the
  // latest, instead of ending as if it had been analysed.
  void* p = no_stall_ ? begin_always_answered(model, finalize_call, sizeof(std::uint64_t))
                      : begin(model, finalize_call, sizeof(std::uint64_t), true);
  if (!p) return;
  *static_cast<std::uint64_t*>(p) = 0;
  if (no_stall_)
    wait_always(commit());
  else
    wait(commit());
  // The model's library is shut down next: nothing may drive it any more.
  g_progress[m].store(nullptr, std::memory_order_release);
  joined_[m] = false;
  --joined_count_;
  if (!last || !active_) return;
  lock();
  local_.stop();
  if (void* d = producer_.begin(Model::Control, static_cast<std::uint16_t>(ControlEvent::Detach),
                                timed_ ? std::uint32_t{kEventTimed} : 0u, sizeof(DetachEvent))) {
    *static_cast<DetachEvent*>(d) = DetachEvent{producer_.stall_ns(), producer_.backpressure_ns()};
    stamp(d, sizeof(DetachEvent));
    producer_.commit();
  }
  unlock();
  blocked_ = nullptr;
  active_ = false;
  // The socket stays open until the process exits: its end tells the tool
  // that this rank is gone, and the tool still reads the ring meanwhile.
}

void ChannelClient::send_clock_sync(const ClockSyncEvent& e) {
  if (!active_) return;
  lock();
  if (void* p = producer_.begin(Model::Control, static_cast<std::uint16_t>(ControlEvent::ClockSync),
                                0, sizeof e)) {
    std::memcpy(p, &e, sizeof e);
    producer_.commit();
  }
  unlock();
}

void ChannelClient::end_other_models(Model model) {
  for (std::size_t m = 0; m < kModels; ++m)
    if (m != index(model) && active_ && joined_[m] && ends_[m]) ends_[m]();
}

void ChannelClient::lock() {
  if (serialise_)
    while (g_lock.test_and_set(std::memory_order_acquire)) channel::cpu_relax();
  t_in_lock = true;
}

void ChannelClient::unlock() {
  t_in_lock = false;
  if (serialise_) g_lock.clear(std::memory_order_release);
}

void ChannelClient::set_local_access_event(Model model, std::uint16_t call) {
  if (!local_accesses()) return;
  lock();
  local_.set_event(model, call);
  unlock();
}

void ChannelClient::expose(const Exposure& e) {
  if (!local_accesses()) return;
  lock();
  local_.expose(e);
  unlock();
}

void ChannelClient::local_access(std::uintptr_t addr, std::uintptr_t bytes, bool write,
                                 std::uintptr_t pc) {
  if (t_in_lock || !active_) return;
  lock();
  local_.access(addr, bytes, write, pc);
  unlock();
}

// Under the lock, before the event that follows the accesses.
void ChannelClient::send_local(void* ctx, Model model, std::uint16_t call, const void* data,
                               std::size_t bytes) {
  auto* self = static_cast<ChannelClient*>(ctx);
  void* p = self->producer_.begin(model, call, 0, bytes);
  if (!p) return;  // the tool failed: the event that follows says so
  std::memcpy(p, data, bytes);
  self->producer_.commit();
}

void* ChannelClient::begin(Model model, std::uint16_t call, std::size_t payload, bool needs_reply) {
  if (!active_) return nullptr;
  lock();
  local_.flush();
  note_call(model, call);
  reply_wanted_ = needs_reply && !no_stall_;
  const std::uint32_t flags = (reply_wanted_ ? std::uint32_t{kEventNeedsReply} : 0u) |
                              (timed_ ? std::uint32_t{kEventTimed} : 0u);
  void* p = producer_.begin(model, call, flags, payload, application_call_site());
  if (p) stamp(p, payload);
  if (!p) {
    unlock();
    if (payload > producer_.max_payload()) {
      std::fprintf(stderr,
                   "vcx: rank %d: a %s event needs %zu bytes, more than the channel "
                   "carries; restart with a larger ring (vcx-run --ring-bytes)\n",
                   world_rank_, call_name(model, call), payload);
      abort_job_(70);
    }
    tool_failed("while the application was sending to it");
    return nullptr;
  }
  return p;
}

void* ChannelClient::begin_always_answered(Model model, std::uint16_t call, std::size_t payload) {
  if (!active_) return nullptr;
  lock();
  local_.flush();
  note_call(model, call);
  reply_wanted_ = true;
  const std::uint32_t flags = kEventAlwaysReply | (timed_ ? std::uint32_t{kEventTimed} : 0u);
  void* p = producer_.begin(model, call, flags, payload, application_call_site());
  if (p) stamp(p, payload);
  if (!p) {
    unlock();
    tool_failed("while the application was sending to it");
  }
  return p;
}

void ChannelClient::wait_always(std::uint64_t ticket) {
  if (active_ && ticket != 0 && producer_.wait_reply(ticket) != channel::WaitResult::Ok)
    tool_failed("while waiting for it");
  stamp_return();
}

// Under the lock, right after a timed event was begun.
void ChannelClient::stamp(void* payload, std::size_t payload_bytes) {
  if (!timed_) return;
  const EventTiming t{call_enter_ns(), previous_leave_ns_};
  std::memcpy(static_cast<std::uint8_t*>(payload) + timed_payload_offset(payload_bytes), &t,
              sizeof t);
  previous_leave_ns_ = 0;
  t_my_timed_event = ++timed_events_;
}

std::uint64_t ChannelClient::commit() {
  // A call that sends its event last returns now; one that sends it first
  // stamps its return again in wait().
  if (timed_) previous_leave_ns_ = trace_clock_ns();
  const std::uint64_t seq = producer_.commit();
  const bool wanted = reply_wanted_;
  unlock();
  return wanted ? seq : 0;
}

void ChannelClient::wait(std::uint64_t ticket) {
  if (active_ && !no_stall_ && ticket != 0 &&
      producer_.wait_reply(ticket) != channel::WaitResult::Ok)
    tool_failed("while waiting for it");
  stamp_return();
}

// The call of this thread's last event returns now, if that event is still
// the channel's last timed one (another thread's may have followed it).
void ChannelClient::stamp_return() {
  if (!timed_) return;
  if (!serialise_) {
    previous_leave_ns_ = trace_clock_ns();
    return;
  }
  lock();
  if (timed_events_ == t_my_timed_event) previous_leave_ns_ = trace_clock_ns();
  unlock();
}

void ChannelClient::tool_failed(const char* what) {
  if (!active_) return;
  active_ = false;
  const int rank = world_rank_;
  // The call the rank was in, as " in MPI_Send" for the messages below.
  const char* call = any_call_ ? call_name(last_model_, last_call_) : nullptr;
  char in_call[96] = "";
  if (call) std::snprintf(in_call, sizeof in_call, " in %s", call);
  // The tools stop when an application rank ends without finalising; the
  // job is ending then (the launcher stops the other ranks when one fails),
  // and until it does this rank runs on as it would without vcx.
  if (another_rank_ended(std::getenv("VCX_SESSION_DIR"))) {
    std::fprintf(stderr,
                 "vcx: rank %d: analysis stopped because another application rank ended; "
                 "running on without it\n",
                 rank);
    return;
  }
  // One write per line: the ranks share the terminal.
  if (continue_on_failure()) {
    std::fprintf(stderr,
                 "vcx: rank %d: the tool process stopped %s%s; running on without analysis "
                 "(--on-tool-failure=continue)\n",
                 rank, what, in_call);
    return;
  }
  std::fprintf(stderr,
               "vcx: rank %d: the tool process stopped %s%s; aborting the job "
               "(vcx-run --on-tool-failure=continue lets it run on unanalysed)\n",
               rank, what, in_call);
  // The launcher may take the job down before it forwards the line above;
  // vcx-run says it again from this record.
  record_ending("tool-failed", 70, call);
  abort_job_(70);
}

}  // namespace vcx::intercept
