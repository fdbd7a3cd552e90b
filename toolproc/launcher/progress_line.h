// vcx-run's progress line: the events the tools have read and the ranks that
// finished, from the tools' progress-<rank> files in the session, with the
// rate since the last line; due three seconds after the first call, then
// once a second.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace vcx::launcher {

class ProgressLine {
 public:
  using Clock = std::chrono::steady_clock;

  ProgressLine(std::string session_dir, int ranks)
      : session_dir_(std::move(session_dir)), ranks_(ranks) {}

  // The line's text when one is due at `now` ("vcx: 12 s, 1.20 M events,
  // 100 k events/s, 1 of 4 ranks finished"), else nothing.
  std::optional<std::string> due(Clock::time_point now);

 private:
  std::string session_dir_;
  int ranks_;
  Clock::time_point start_{}, next_{};
  std::uint64_t last_events_ = 0;
  double last_time_ = 0;
};

}  // namespace vcx::launcher
