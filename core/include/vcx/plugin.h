// Plugins (the exchange engine, translators, analysis modules) are shared
// objects loaded by name. Each exports one C function returning a static
// descriptor; the host checks the ABI version before it uses anything else.
#pragma once

#include <cstdint>
#include <string>

#include "vcx/options.h"
#include "vcx/types.h"

namespace vcx {

// Bumped whenever a header seen by plugins changes: those are listed, with
// a digest, in vcx/plugin_abi.txt (scripts/plugin-abi; the test
// plugins.abi_version fails when they change and this does not).
inline constexpr std::uint32_t kPluginAbiVersion = 17;
inline constexpr const char* kPluginEntryPoint = "vcx_plugin_descriptor";

class ExchangeEngine;
class Translator;
class ClockedCallObserver;
class PeerTransport;
class ToolHost;
class AnalysisLink;
struct AnalysisReporting;
namespace channel {
struct LeaseTable;
}

enum class PluginKind : std::uint32_t {
  Engine = 1,      // the exchange (exactly one per tool process)
  Translator = 2,  // one per programming model
  Module = 3,      // analyses and outputs observing clocked calls
};

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual ExchangeEngine* engine() { return nullptr; }
  virtual Translator* translator() { return nullptr; }
  virtual ClockedCallObserver* observer() { return nullptr; }
};

// What a plugin needs of the run (PluginDescriptor::needs, bits).
enum PluginNeeds : std::uint32_t {
  // The application waits for its tool at every wait (--stall waits): for
  // an analysis that must act before the application goes on past a wait,
  // not merely see every event in program order. The tools then never lag.
  kNeedsStallAtWaits = 1u << 0,
  // The physical times and call sites of the application's calls
  // (ClockedCallObserver::on_event_time): the application then reads its
  // clock twice per call.
  kNeedsTimestamps = 1u << 1,
};

struct PluginDescriptor {
  std::uint32_t abi_version;  // kPluginAbiVersion the plugin was built with
  PluginKind kind;
  const char* name;
  const char* description;
  const OptionSpec* options;  // terminated by an entry with name == nullptr
  // Creates the plugin for this tool process; nullptr and *error on failure.
  Plugin* (*create)(ToolHost& host, std::string* error);
  std::uint32_t needs;  // PluginNeeds bits; 0: nothing
  // Modules that are analyses (vcx-run --analysis NAME): how vcx-run builds
  // their report after the run (vcx/analysis_report.h); nullptr otherwise.
  const AnalysisReporting* reporting;
};

// Services of the tool process that plugins may use.
class ToolHost {
 public:
  virtual ~ToolHost() = default;
  virtual Rank rank() const = 0;
  virtual std::uint32_t world_size() const = 0;
  virtual const Options& options() const = 0;
  virtual PeerTransport& transport() = 0;
  // Lets the application go on past event `seq` (and all before it).
  virtual void reply(std::uint64_t event_seq) = 0;
  virtual const char* call_name(std::uint8_t model, std::uint16_t call) const = 0;
  // Ends the whole tool job with a message; does not return.
  [[noreturn]] virtual void fatal(const std::string& why) = 0;
  // The lock leases shared with the application (channel/lease_table.h), or
  // nullptr where the channel has no shared memory: locks are then never
  // leased.
  virtual channel::LeaseTable* app_leases() { return nullptr; }

  // For analysis modules (vcx/analysis.h). Whether some module wants the
  // translators' notes: without one they write none.
  virtual bool notes_wanted() const { return false; }
  // Whether some module wants the notes on receives (NoteKind::ReceivePosted...).
  virtual bool receive_notes_wanted() const { return false; }
  // The link of the module named `module` to its instances in the other
  // tools (one per module name; nullptr where the host has no transport).
  virtual AnalysisLink* analysis_link(const char* module) {
    (void)module;
    return nullptr;
  }
  // The application process's id once it attached (0 before): analyses read
  // its memory map, on the same node, to name code addresses later.
  virtual std::int32_t app_pid() const { return 0; }
  // The text of the application process's /proc/<pid>/maps, "" unless it
  // is a process of this node and this run (with the tool on another node,
  // the pid names some other process here).
  virtual std::string app_memory_map() const { return {}; }
};

}  // namespace vcx

extern "C" {
typedef const vcx::PluginDescriptor* (*vcx_plugin_descriptor_fn)();
}

// Use once per plugin source: VCX_PLUGIN(descriptor_object)
#define VCX_PLUGIN(desc)                                                           \
  extern "C" __attribute__((visibility("default"))) const vcx::PluginDescriptor* \
  vcx_plugin_descriptor() {                                                      \
    return &(desc);                                                              \
  }
