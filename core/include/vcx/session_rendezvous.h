// The tool job's start-up exchange through the session directory, so that
// tool processes need not initialise MPI (about 0.1 s of a short run)
// unless their transport is MPI itself.
//
// Each tool publishes <dir>/tool-<rank>.start ("ok" and its endpoint, or
// "failed" and why); tool 0 waits for all of them and publishes
// <dir>/tools-started ("ok", or "failed" and the first failure, then every
// endpoint by rank); every other tool waits for that file. The files are
// written under another name and renamed, so one that exists is complete.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vcx {

struct Rendezvous {
  bool all_ok = false;
  std::string failure;                 // the first tool's failure, "rank R: why"
  std::vector<std::string> endpoints;  // by rank ("" for a failed tool)
};

// `ok`: whether this tool started; `text`: its endpoint, or why it failed.
// nullopt with `error` set when the others did not answer within `timeout`.
std::optional<Rendezvous> rendezvous_in_session(const std::string& dir, std::uint32_t rank,
                                                std::uint32_t size, bool ok,
                                                const std::string& text,
                                                std::chrono::milliseconds timeout,
                                                std::string* error);

}  // namespace vcx
