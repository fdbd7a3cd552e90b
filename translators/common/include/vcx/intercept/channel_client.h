// The application side's link to its tool process, shared by every
// programming model's interceptor: attach at the model's start, push one
// event per call, wait for answers, drain and detach at the model's end,
// and handle a tool that fails. The model's interceptor supplies only what
// is its own: rank and size, how to abort the job, how to keep its library
// progressing while the application waits, and its call names.
//
// A process has one client (process_client()), whatever number of models
// its interceptor serves: an MPI+OpenSHMEM program sends the events of
// both models through one channel, in program order. The first model to
// start attaches, the others join; the channel detaches when the last of
// them ends.
#pragma once

#include <cstddef>
#include <cstdint>

#include "vcx/channel/attach.h"
#include "vcx/channel/blocked_call.h"
#include "vcx/channel/event_record.h"
#include "vcx/channel/producer.h"
#include "vcx/intercept/call_site.h"
#include "vcx/intercept/local_accesses.h"

namespace vcx::intercept {

struct ClientSetup {
  Model model = Model::Mpi;
  int world_rank = -1;  // MPI_COMM_WORLD rank or PE number
  int world_size = 0;
  // Several threads push events (the pushes are serialised).
  bool serialise = false;
  // Ends the whole application job with this status (MPI_Abort,
  // shmem_global_exit); may return where the model's call does.
  void (*abort_job)(int status) = nullptr;
  // Keeps the model's library progressing while the application waits for
  // its tool; may be null.
  void (*progress)(void* ctx) = nullptr;
  // The name of an event type for messages ("MPI_Send").
  const char* (*call_name)(std::uint16_t call) = nullptr;
  // Ends the model's analysis (its interceptor's own end, as at its
  // finalisation) when another model's end takes its library down; may be
  // null.
  void (*end)() = nullptr;
};

class ChannelClient;
// The process's client, shared by the models of one preloaded library.
ChannelClient& process_client();

class ChannelClient {
 public:
  // The model's start. The first model attaches to the tool if vcx-run
  // started the program (else says so once, from rank 0, and stays
  // inactive); a tool that cannot be reached aborts the job, or leaves the
  // client inactive with VCX_ON_TOOL_FAILURE=continue. A later model joins
  // the attached channel; its rank must be the same (an MPI rank is its
  // PE), else the job is aborted. Returns whether the model's events reach
  // the tool.
  bool attach(const ClientSetup& setup);
  // The model's end: pushes `finalize_call` and waits until the tool has
  // processed every event; the last model to end detaches and marks the
  // rank's ending as normal.
  void finish(Model model, std::uint16_t finalize_call);
  // The end of `model` ends the other models' libraries too (Open MPI's
  // shmem_finalize finalises MPI): ends their analysis, before that
  // happens.
  void end_other_models(Model model);

  // Whether the channel is attached (any model).
  bool active() const { return active_; }
  // Whether the model started and its events reach the tool.
  bool active(Model model) const { return active_ && joined_[index(model)]; }
  bool no_stall() const { return no_stall_; }
  // Whether events carry their times (a module wants them, call_timing.h).
  bool timed() const { return timed_; }
  // This rank's clock against rank 0's, for the tool (no-op when inactive).
  void send_clock_sync(const ClockSyncEvent& e);
  // Blocking calls should yield the core while they wait (kModeYieldInWaits).
  bool yield_in_waits() const { return yield_in_waits_; }
  // The channel's modes, as the tool set them (channel::ChannelModeFlags).
  std::uint32_t mode_flags() const { return active_ ? attachment_.mode_flags : 0; }
  bool serialised() const { return serialise_; }
  // The lock leases the tool shares with this process, or nullptr (no
  // shared memory, or not attached).
  channel::LeaseTable* leases() const {
    channel::ChannelControl* c = active_ ? producer_.shared() : nullptr;
    return c ? &c->leases : nullptr;
  }
  int world_rank() const { return world_rank_; }

  // Reserves an event of `payload` bytes; nullptr when inactive (or the tool
  // failed and the policy is to continue). Must be followed by commit().
  void* begin(Model model, std::uint16_t call, std::size_t payload, bool needs_reply);
  // An event the tool must answer in either stall mode (it decides an
  // order the application then follows).
  void* begin_always_answered(Model model, std::uint16_t call, std::size_t payload);
  // Publishes the event; returns the ticket to wait() on: its sequence
  // number if it asked for a reply, else 0.
  std::uint64_t commit();
  // Waits for the tool's answer (no-op for 0 and in no-stall mode).
  void wait(std::uint64_t ticket);
  // Waits in either stall mode (for begin_always_answered events).
  void wait_always(std::uint64_t ticket);
  // The call of the last event returns now (for traces, call_timing.h);
  // wait() and wait_always() say it themselves.
  void stamp_return();

  // The rank enters a call that may wait for other ranks (blocked_call.h):
  // `payload` is what the call's event will carry (its status unknown yet),
  // or the requests it waits on. A call that pushed its event as it was
  // entered (a send, a blocking collective) is that last event. `call_site`:
  // the application's return address where the wrapper has it, else 0 and
  // it is looked up (call_site.h). Written only with one calling thread and
  // a shared channel: a few stores.
  void enter_blocked(Model model, std::uint16_t call, std::uint64_t call_site,
                     const void* payload, std::size_t bytes) {
    if (blocked_)
      channel::enter_blocked_call(*blocked_, model, call, producer_.last_seq(),
                                  call_site ? call_site : application_call_site(), payload,
                                  bytes);
  }
  void leave_blocked() {
    if (blocked_) channel::leave_blocked_call(*blocked_);
  }

  // Serialises the model's own bookkeeping with the pushes (only when
  // several threads push).
  void lock();
  void unlock();

  // The tool went away: report it, then abort the job or go on unanalysed.
  void tool_failed(const char* what);

  // Local loads and stores (local_accesses.h): reported when an analysis
  // wants them and the program was built with the vcx compiler wrappers.
  bool local_accesses() const { return active_ && local_.active(); }
  // The model's event type for them (after attach or join).
  void set_local_access_event(Model model, std::uint16_t call);
  void expose(const Exposure& e);
  template <class Pred>
  void unexpose_if(Pred&& ends) {
    if (!local_accesses()) return;
    lock();
    local_.unexpose_if(ends);
    unlock();
  }
  // One access to watched memory, from the runtime (any thread).
  void local_access(std::uintptr_t addr, std::uintptr_t bytes, bool write, std::uintptr_t pc);

 private:
  static constexpr std::size_t kModels = 8;
  static std::size_t index(Model m) { return static_cast<std::size_t>(m) & (kModels - 1); }
  bool join(const ClientSetup& setup);
  const char* call_name(Model model, std::uint16_t call) const;
  void note_call(Model model, std::uint16_t call) {
    last_model_ = model;
    last_call_ = call;
    any_call_ = true;
  }

  int world_rank_ = -1;
  int world_size_ = 0;
  bool serialise_ = false;
  bool attempted_ = false;  // some model started (attached or not)
  void (*abort_job_)(int status) = nullptr;
  bool joined_[kModels] = {};
  int joined_count_ = 0;
  const char* (*call_names_[kModels])(std::uint16_t call) = {};
  void (*ends_[kModels])() = {};
  bool active_ = false;
  bool no_stall_ = false;
  bool yield_in_waits_ = false;
  bool reply_wanted_ = false;
  // Events carry EventTiming (kModeTimestamps); the return time of the call
  // of the last timed event, for the next one (call_timing.h).
  bool timed_ = false;
  std::uint64_t previous_leave_ns_ = 0;
  std::uint64_t timed_events_ = 0;  // timed events sent (under the lock)
  void stamp(void* payload, std::size_t payload_bytes);
  // The call of the last event begun, for messages about a failed tool.
  Model last_model_ = Model::Mpi;
  std::uint16_t last_call_ = 0;
  bool any_call_ = false;
  // The blocked-call slot, while one thread calls and the channel is shared.
  channel::BlockedCallSlot* blocked_ = nullptr;
  channel::Attachment attachment_{};
  channel::Producer producer_{};
  LocalAccesses local_;
  static void send_local(void* ctx, Model model, std::uint16_t call, const void* data,
                         std::size_t bytes);
};

}  // namespace vcx::intercept
