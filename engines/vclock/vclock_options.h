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
    {"vclock.probe-ms", "200",
     "how long a collective's completion waits before its tool asks the group's first member "
     "whether every member makes the same call (a collective mismatch would leave it waiting "
     "for ever), in ms, rounded to the tools' 100 ms ticks; 0: never ask (then the tool sends "
     "only the messages of the calls themselves)",
     OptionKind::Count},
    {nullptr, nullptr, nullptr},
};

}  // namespace vcx::vclock
