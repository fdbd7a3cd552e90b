// The application side's link to its tool process, shared by every
// programming model's interceptor: attach at the model's start, push one
// event per call, wait for answers, drain and detach at the model's end,
// and handle a tool that fails. The model's interceptor supplies only what
// is its own: rank and size, how to abort the job, how to keep its library
// progressing while the application waits, and its call names.
#pragma once

#include <cstddef>
#include <cstdint>

#include "vcx/channel/attach.h"
#include "vcx/channel/event_record.h"
#include "vcx/channel/producer.h"

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
};

class ChannelClient {
 public:
  // Attaches to the tool if vcx-run started the program (else says so once,
  // from rank 0, and stays inactive). A tool that cannot be reached aborts
  // the job, or leaves the client inactive with VCX_ON_TOOL_FAILURE=continue.
  // Returns whether the client is active.
  bool attach(const ClientSetup& setup);
  // The model's end: pushes `finalize_call` and waits until the tool has
  // processed every event, then detaches. Also marks the rank's ending as
  // normal.
  void finish(std::uint16_t finalize_call);

  bool active() const { return active_; }
  bool no_stall() const { return no_stall_; }
  bool serialised() const { return setup_.serialise; }
  int world_rank() const { return setup_.world_rank; }

  // Reserves an event of `payload` bytes; nullptr when inactive (or the tool
  // failed and the policy is to continue). Must be followed by commit().
  void* begin(std::uint16_t call, std::size_t payload, bool needs_reply);
  // An event the tool must answer even in no-stall mode (it decides an
  // order the application then follows).
  void* begin_always_answered(std::uint16_t call, std::size_t payload);
  // Publishes the event; returns the ticket to wait() on: its sequence
  // number if it asked for a reply, else 0.
  std::uint64_t commit();
  // Waits for the tool's answer (no-op for 0 and in no-stall mode).
  void wait(std::uint64_t ticket);
  // Waits even in no-stall mode (for begin_always_answered events).
  void wait_always(std::uint64_t ticket);

  // Serialises the model's own bookkeeping with the pushes (only when
  // several threads push).
  void lock();
  void unlock();

  // The tool went away: report it, then abort the job or go on unanalysed.
  void tool_failed(const char* what);

 private:
  ClientSetup setup_{};
  bool active_ = false;
  bool no_stall_ = false;
  bool reply_wanted_ = false;
  channel::Attachment attachment_{};
  channel::Producer producer_{};
};

}  // namespace vcx::intercept
