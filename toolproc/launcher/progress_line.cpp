#include "launcher/progress_line.h"

#include <cstdio>
#include <fstream>

#include "launcher/console.h"
#include "vcx/session_layout.h"

namespace vcx::launcher {

std::optional<std::string> ProgressLine::due(Clock::time_point now) {
  if (start_ == Clock::time_point{}) {
    start_ = now;
    next_ = now + std::chrono::seconds(3);
  }
  if (now < next_) return std::nullopt;
  next_ = now + std::chrono::seconds(1);
  std::uint64_t events = 0;
  int finished = 0;
  for (int r = 0; r < ranks_; ++r) {
    std::ifstream in(session::progress(session_dir_, static_cast<std::uint32_t>(r)));
    unsigned long long n = 0;
    std::string state;
    if (in >> n >> state) {
      events += n;
      if (state == "finalized" || state == "crashed") ++finished;
    }
  }
  const double secs = std::chrono::duration<double>(now - start_).count();
  const double rate = last_time_ > 0 ? static_cast<double>(events - last_events_) /
                                           (secs - last_time_)
                                     : 0.0;
  last_events_ = events;
  last_time_ = secs;
  char head[32];
  std::snprintf(head, sizeof head, "vcx: %.0f s, ", secs);
  const std::string rate_part = rate > 0 ? count_text(rate) + "events/s, " : std::string();
  return std::string(head) + count_text(static_cast<double>(events)) + "events, " + rate_part +
         std::to_string(finished) + " of " + std::to_string(ranks_) + " ranks finished";
}

}  // namespace vcx::launcher
