// What a tool process tells vcx-run through the session directory: its
// progress (for the progress line), where its rank is (when asked), and its
// statistics at the end (toolproc/session/tool_stats.h).
#include <sys/resource.h>

#include <chrono>
#include <fstream>

#include "session/tool_stats.h"
#include "tool_process.h"
#include "vcx/atomic_file.h"
#include "vcx/session_layout.h"
#include "vcx/stack_sampler.h"

namespace vcx::tool {

namespace {
std::uint64_t cpu_ns(const rusage& ru) {
  auto ns = [](const timeval& t) {
    return static_cast<std::uint64_t>(t.tv_sec) * 1'000'000'000u +
           static_cast<std::uint64_t>(t.tv_usec) * 1'000u;
  };
  return ns(ru.ru_utime) + ns(ru.ru_stime);
}

std::uint64_t steady_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}
}  // namespace

// For vcx-run's progress line: "<events> <application state>", rewritten at
// most once a second and only when something changed, so an idle tool
// writes nothing.
void ToolProcess::maybe_write_progress() {
  const std::uint64_t now = steady_ns();
  if (now - progress_written_ns_ < 1'000'000'000ULL) return;
  if (events_ == progress_events_ && app_.state() == progress_state_) return;
  progress_written_ns_ = now;
  progress_events_ = events_;
  progress_state_ = app_.state();
  write_file_atomically(session::progress(opts_.session_dir, rank_.value),
                        std::to_string(events_) + " " + app_state_name(app_.state()) + "\n",
                        nullptr);
}

void ToolProcess::answer_where_request() {
  std::uint64_t number = 0;
  {
    std::ifstream in(session::file(opts_.session_dir, session::kWhereRequest));
    if (!(in >> number) || number <= where_answered_) return;
  }
  where_answered_ = number;
  std::string text = "rank " + std::to_string(rank_.value) + ": ";
  if (!any_call_read_) {
    text += "its tool has read no call yet";
  } else {
    text += "the last call its tool read was " +
            std::string(call_name(static_cast<std::uint8_t>(last_model_), last_type_)) +
            " (event " + std::to_string(last_seq_) + ")";
  }
  if (engine_ && !engine_->idle()) text += "; its tool waits for " + engine_->blocked_on();
  text += '\n';
  if (app_.pid() > 0 && app_.state() != AppState::Crashed) {
    std::string error;
    // Only this run's rank: with a TCP channel it may run on another node,
    // where the same pid is some other process.
    std::vector<ThreadStack> stacks;
    if (!app_.rank_on_this_node())
      error = "process " + std::to_string(app_.pid()) + " is not this run's rank on this node";
    else
      stacks = sample_stacks(app_.pid(), &error);
    if (stacks.empty()) {
      text += "  no stacks: " + error + "\n";
    } else {
      for (const std::string& line : describe_stacks(app_.pid(), stacks, {"MPI_", "shmem_"}))
        text += "  " + line + "\n";
    }
  }
  write_file_atomically(session::where_answer(opts_.session_dir, rank_.value, number), text,
                        nullptr);
}

void ToolProcess::write_stats() const {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  session::ToolStats st;
  st.rank = static_cast<int>(rank_.value);
  st.events = events_;
  st.clocked_calls = engine_ ? engine_->clocked_calls() : 0;
  st.stall_ns = app_.stall_ns();
  st.backpressure_ns = app_.backpressure_ns();
  st.released_replies = released_replies_;
  if (transport_) {
    st.messages_sent = transport_->stats().messages_sent;
    st.bytes_sent = transport_->stats().bytes_sent;
    st.shm_messages_sent = transport_->stats().shm_messages_sent;
    st.wakeups_sent = transport_->stats().wakeups_sent;
  }
  st.leased_acquisitions = engine_ ? engine_->leased_acquisitions() : 0;
  st.peak_backlog = peak_backlog_;
  st.stall = opts_.no_stall ? "never" : "waits";
  st.cpu_ns = cpu_ns(ru);
  st.transport = session::name_of(opts_.transport);
  st.channel = session::name_of(opts_.channel);
  st.max_rss_kb = ru.ru_maxrss > 0 ? static_cast<std::uint64_t>(ru.ru_maxrss) : 0;
  st.app = app_state_name(app_.state());
  st.aborted = termination_.aborted();
  st.reason = termination_.abort_reason();
  st.stopped_at_ns = stopped_at_ns_;
  write_file_atomically(session::stats(opts_.session_dir, rank_.value), st.to_json(), nullptr);
}

}  // namespace vcx::tool
