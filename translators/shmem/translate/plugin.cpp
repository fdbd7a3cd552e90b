// Plugin entry of the OpenSHMEM translator.
#include "shmem_translator.h"

namespace {

const vcx::OptionSpec kOptions[] = {
    {nullptr, nullptr, nullptr},
};

vcx::Plugin* create(vcx::ToolHost& host, std::string*) {
  return new vcx::shmem::ShmemTranslator(host);
}

const vcx::PluginDescriptor kDescriptor{
    vcx::kPluginAbiVersion,
    vcx::PluginKind::Translator,
    "shmem",
    "OpenSHMEM calls to exchange primitives (docs/clock-rules.md)",
    kOptions,
    &create,
    0,  // needs nothing of the run (no stalls)
    nullptr,  // no analysis
};

}  // namespace

VCX_PLUGIN(kDescriptor)
