// A module for tests only: it observes nothing and declares that it needs
// the application to wait for its tool at every wait (kNeedsStallAtWaits),
// so that tests can check how the tools choose the stall mode.
#include "vcx/exchange.h"
#include "vcx/plugin.h"

namespace {

class StallProbe final : public vcx::Plugin, public vcx::ClockedCallObserver {
 public:
  vcx::ClockedCallObserver* observer() override { return this; }
  void on_clocked_call(const vcx::ClockedCall&) override {}
};

const vcx::OptionSpec kOptions[] = {{nullptr, nullptr, nullptr}};

vcx::Plugin* create(vcx::ToolHost&, std::string*) { return new StallProbe; }

const vcx::PluginDescriptor kDescriptor = {
    vcx::kPluginAbiVersion,
    vcx::PluginKind::Module,
    "stallprobe",
    "tests only: needs stalls at every wait",
    kOptions,
    &create,
    vcx::kNeedsStallAtWaits,
    nullptr,
};

}  // namespace

VCX_PLUGIN(kDescriptor)
