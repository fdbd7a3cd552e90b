// Where the rank is, for the modules that want it (the deadlock analysis):
// the tool looks at its rank's blocked-call slot every kWaitCheck. A rank
// seen in the same call at two looks in a row, whose events up to that call
// the tool has read, is told as blocked, with what its translator says it
// waits for; told as running once it left; told as finished once it
// detached. Looking is one read of a cache line, so the rank pays nothing
// for it while it computes.
#include <chrono>

#include "tool_process.h"
#include "vcx/wait_state.h"

namespace vcx::tool {
namespace {
constexpr std::chrono::milliseconds kWaitCheck{100};
}  // namespace

// The engine hears the same ticks (ExchangeEngine::on_tick), with or
// without observers: a waiting collective asks its peers why.
void ToolProcess::start_wait_watch() {
  wait_timer_.emplace(io_);
  wait_timer_->expires_after(kWaitCheck);
  wait_timer_->async_wait([this](const error_code& e) {
    if (e) return;
    if (engine_) engine_->on_tick();
    if (!wait_observers_.empty()) check_wait_state();
    start_wait_watch();
  });
}

void ToolProcess::tell_wait_state(const RankWait& w) {
  for (ClockedCallObserver* o : wait_observers_) o->on_wait_state(w);
}

void ToolProcess::check_wait_state() {
  if (finish_told_) return;
  if (detach_seen_) {
    WaitFacts facts;
    for (Translator* t : translators_)
      if (t) t->wait_facts(&facts);
    RankWait w;
    w.status = RankWait::Status::Finished;
    w.facts = &facts;
    tell_wait_state(w);
    finish_told_ = true;
    return;
  }
  const std::optional<channel::BlockedCall> call = app_.blocked_call();
  if (!call) {
    wait_seen_ = 0;
    if (wait_told_) {
      wait_told_ = 0;
      tell_wait_state(RankWait{});
    }
    return;
  }
  const std::uint64_t entry = call->entered + 1;
  if (wait_told_ == entry) {  // told already, still there: said again, without the wait
    RankWait still;
    still.status = RankWait::Status::Blocked;
    still.entered = call->entered;
    tell_wait_state(still);
    return;
  }
  if (wait_told_) {                 // in another call since
    wait_told_ = 0;
    tell_wait_state(RankWait{});
  }
  const bool again = wait_seen_ == entry;
  wait_seen_ = entry;
  // Once at the first look, and not before the tool has read what the rank
  // did before the call (the translator answers from that).
  if (!again || !any_call_read_ || read_seq_ < call->after_seq) return;
  const auto m = static_cast<std::size_t>(call->model);
  Translator* t = m < translators_.size() ? translators_[m] : nullptr;
  WaitState state;
  if (!t || !t->wait_state(*call, &state)) return;
  if (state.pc == 0) state.pc = call->call_site;
  WaitFacts facts;
  for (Translator* each : translators_)
    if (each) each->wait_facts(&facts);
  RankWait w;
  w.status = RankWait::Status::Blocked;
  w.entered = call->entered;
  w.wait = &state;
  w.facts = &facts;
  tell_wait_state(w);
  wait_told_ = entry;
}

}  // namespace vcx::tool
