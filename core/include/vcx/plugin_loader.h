// Finds and loads plugins by name from the plugin directory.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "vcx/plugin.h"

namespace vcx {

struct LoadedPlugin {
  std::string name;
  std::string path;
  void* handle = nullptr;  // dlopen handle, closed by the loader's owner
  const PluginDescriptor* descriptor = nullptr;
};

// File name of a plugin: "vcx-<kind>-<name>.so", kind one of engine,
// translator, module.
std::string plugin_file_name(PluginKind kind, const std::string& name);

// Loads `name` of `kind` from `dir`. Throws std::runtime_error with a message
// that says what to do (unknown name: lists the available ones; ABI mismatch:
// names both versions).
LoadedPlugin load_plugin(const std::string& dir, PluginKind kind, const std::string& name);
// Names of the plugins of `kind` present in `dir`.
std::vector<std::string> available_plugins(const std::string& dir, PluginKind kind);
void unload_plugin(LoadedPlugin& p);
// Every plugin in `dir`, loaded (the caller unloads them), in the order
// engines, translators, modules; one that fails to load has its error
// instead.
struct AvailablePlugin {
  PluginKind kind;
  std::string name;
  LoadedPlugin loaded;  // descriptor null when it failed
  std::string error;
};
std::vector<AvailablePlugin> load_available_plugins(const std::string& dir);
// Every plugin in `dir`, a line each (kind, name, description), and the
// options it declares with their defaults and help (for --help).
std::string describe_plugins(const std::string& dir);

}  // namespace vcx
