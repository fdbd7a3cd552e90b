// Settings of one tool process: its command line (set by vcx-run) and what
// the tool works out from its environment and plugins.
#pragma once

#include <cstdint>
#include <string>

#include "session/tool_arguments.h"

namespace vcx::tool {

struct ToolOptions : session::ToolArguments {
  // The outcome of --stall, set once the plugins are loaded.
  bool no_stall = true;
  std::string token;  // from VCX_SESSION_TOKEN
  // Delay injection for testing vcx (VCX_CHAOS_DELAY_US, VCX_CHAOS_SEED).
  std::uint64_t chaos_delay_us = 0;
  std::uint64_t chaos_seed = 0;
};

}  // namespace vcx::tool
