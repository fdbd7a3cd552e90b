// Plugin entry of the vclock engine.
#include "vclock_engine.h"

namespace {

const vcx::OptionSpec kOptions[] = {
    {"vclock.diff-bytes", "67108864",
     "memory per tool for the last clock exchanged with each peer, in bytes; clocks then "
     "travel as the entries that changed when that is smaller (0: whole clocks only); the "
     "same for every tool"},
    {"vclock.ahead", "1",
     "1: a blocking all-to-all over every rank (barrier, allreduce, fence) contributes as its "
     "call is read, so that tools behind their ranks settle a run of them without a round "
     "trip each; 0: when the engine reaches the call (for comparison); the clocks are the "
     "same"},
    {nullptr, nullptr, nullptr},
};

vcx::Plugin* create(vcx::ToolHost& host, std::string* error) {
  if (host.world_size() == 0) {
    *error = "vclock: world size is 0";
    return nullptr;
  }
  return new vcx::vclock::VclockEngine(host, host.transport(), host.rank(), host.world_size());
}

const vcx::PluginDescriptor kDescriptor{
    vcx::kPluginAbiVersion,
    vcx::PluginKind::Engine,
    "vclock",
    "generic signal/wait vector clock exchange (point-to-point, collectives, acknowledgements)",
    kOptions,
    &create,
    0,  // needs nothing of the run (no stalls)
};

}  // namespace

VCX_PLUGIN(kDescriptor)
