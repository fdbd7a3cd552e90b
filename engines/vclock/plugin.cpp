// Plugin entry of the vclock engine.
#include "vclock_engine.h"
#include "vclock_options.h"

namespace {

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
    vcx::vclock::kVclockOptions,
    &create,
    0,  // needs nothing of the run (no stalls)
    nullptr,  // no analysis
};

}  // namespace

VCX_PLUGIN(kDescriptor)
