// What each tool process reports about its run (<session>/stats-<rank>.json,
// session_layout.h): written by the tool when it ends or stops the analysis,
// read by vcx-run for its summary. One flat JSON object; readers ignore
// fields they do not know and keep the defaults of fields missing or of
// another type, so either side may be newer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vcx::session {

struct ToolStats {
  int rank = -1;  // -1: not reported (the file name says it)
  std::uint64_t events = 0;
  std::uint64_t clocked_calls = 0;
  std::uint64_t stall_ns = 0;
  std::uint64_t backpressure_ns = 0;
  std::uint64_t released_replies = 0;
  std::uint64_t messages_sent = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t shm_messages_sent = 0;
  std::uint64_t wakeups_sent = 0;
  std::uint64_t leased_acquisitions = 0;
  std::uint64_t peak_backlog = 0;  // calls read ahead of the engine, at most
  std::string stall;               // the stall mode the tools ran: never | waits
  std::uint64_t cpu_ns = 0;        // the tool process's CPU time (user and system)
  std::string transport;           // between the tools: tcp | shm | mpi
  std::string channel;             // from the application: shm | tcp
  std::uint64_t max_rss_kb = 0;    // the tool process's peak memory
  std::string app;  // finalized | crashed | never-attached | attached | "" (not reported)
  // The tool stopped the analysis (or was told to by another tool): why.
  bool aborted = false;
  std::string reason;
  // When it stopped the analysis (CLOCK_REALTIME, ns; 0: it did not). A
  // stop often causes others (a tool gone, a rank aborted): the earliest
  // is the cause.
  std::uint64_t stopped_at_ns = 0;

  // One line of JSON, ending in a newline.
  std::string to_json() const;
  // nullopt (and `error`) when `text` is not one JSON object.
  static std::optional<ToolStats> from_json(std::string_view text, std::string* error);
};

}  // namespace vcx::session
