// Plugin entry of the MPI translator.
#include "mpi_translator.h"

namespace {

const vcx::OptionSpec kOptions[] = {
    {nullptr, nullptr, nullptr},
};

vcx::Plugin* create(vcx::ToolHost& host, std::string*) { return new vcx::mpi::MpiTranslator(host); }

const vcx::PluginDescriptor kDescriptor{
    vcx::kPluginAbiVersion,
    vcx::PluginKind::Translator,
    "mpi",
    "MPI calls to exchange primitives (docs/clock-rules.md)",
    kOptions,
    &create,
    0,  // needs nothing of the run (no stalls)
    nullptr,  // no analysis
};

}  // namespace

VCX_PLUGIN(kDescriptor)
