// The vclock engine's options, declared once: the plugin's descriptor lists
// them, and the engine reads each value or its default from here.
#pragma once

#include "vcx/options.h"

namespace vcx::vclock {

inline constexpr OptionSpec kVclockOptions[] = {
    {"vclock.diff-bytes", "67108864",
     "memory per tool for the last clock exchanged with each peer, in bytes; clocks then "
     "travel as the entries that changed when that is smaller (0: whole clocks only); the "
     "same for every tool",
     OptionKind::Count},
    {"vclock.ahead", "1",
     "1: a blocking all-to-all over every rank (barrier, allreduce, fence) contributes as its "
     "call is read, so that tools behind their ranks settle a run of them without a round "
     "trip each; 0: when the engine reaches the call (for comparison); the clocks are the "
     "same",
     OptionKind::Switch},
    {nullptr, nullptr, nullptr},
};

}  // namespace vcx::vclock
