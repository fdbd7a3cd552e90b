#include "vcx/plugin_loader.h"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

namespace vcx {
namespace {

const char* kind_word(PluginKind kind) {
  switch (kind) {
    case PluginKind::Engine: return "engine";
    case PluginKind::Translator: return "translator";
    case PluginKind::Module: return "module";
  }
  return "plugin";
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s.empty() ? "(none)" : s;
}

}  // namespace

std::string plugin_file_name(PluginKind kind, const std::string& name) {
  return std::string("vcx-") + kind_word(kind) + "-" + name + ".so";
}

std::vector<std::string> available_plugins(const std::string& dir, PluginKind kind) {
  std::vector<std::string> names;
  const std::string prefix = std::string("vcx-") + kind_word(kind) + "-";
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string f = e.path().filename().string();
    if (f.rfind(prefix, 0) == 0 && f.size() > prefix.size() + 3 &&
        f.compare(f.size() - 3, 3, ".so") == 0)
      names.push_back(f.substr(prefix.size(), f.size() - prefix.size() - 3));
  }
  std::sort(names.begin(), names.end());
  return names;
}

LoadedPlugin load_plugin(const std::string& dir, PluginKind kind, const std::string& name) {
  LoadedPlugin p;
  p.name = name;
  p.path = (std::filesystem::path(dir) / plugin_file_name(kind, name)).string();
  if (!std::filesystem::exists(p.path)) {
    throw std::runtime_error(std::string("unknown ") + kind_word(kind) + " '" + name +
                             "': no " + p.path + "; available: " +
                             join(available_plugins(dir, kind)));
  }
  p.handle = dlopen(p.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!p.handle) {
    throw std::runtime_error("cannot load " + p.path + ": " + dlerror());
  }
  auto entry = reinterpret_cast<vcx_plugin_descriptor_fn>(dlsym(p.handle, kPluginEntryPoint));
  if (!entry) {
    dlclose(p.handle);
    throw std::runtime_error(p.path + " is not a vcx plugin (no " + kPluginEntryPoint + ")");
  }
  p.descriptor = entry();
  if (!p.descriptor || p.descriptor->abi_version != kPluginAbiVersion) {
    const unsigned got = p.descriptor ? p.descriptor->abi_version : 0;
    dlclose(p.handle);
    throw std::runtime_error(p.path + " was built for plugin ABI " + std::to_string(got) +
                             ", this vcx needs " + std::to_string(kPluginAbiVersion) +
                             ": rebuild the plugin against this vcx");
  }
  if (p.descriptor->kind != kind) {
    dlclose(p.handle);
    throw std::runtime_error(p.path + " is not a " + kind_word(kind) + " plugin");
  }
  return p;
}

void unload_plugin(LoadedPlugin& p) {
  if (p.handle) dlclose(p.handle);
  p.handle = nullptr;
  p.descriptor = nullptr;
}

std::vector<AvailablePlugin> load_available_plugins(const std::string& dir) {
  std::vector<AvailablePlugin> out;
  for (const PluginKind kind : {PluginKind::Engine, PluginKind::Translator, PluginKind::Module}) {
    for (const std::string& name : available_plugins(dir, kind)) {
      AvailablePlugin a{kind, name, {}, {}};
      try {
        a.loaded = load_plugin(dir, kind, name);
      } catch (const std::exception& e) {
        a.error = e.what();
      }
      out.push_back(std::move(a));
    }
  }
  return out;
}

std::string describe_plugins(const std::string& dir) {
  std::string out;
  for (AvailablePlugin& a : load_available_plugins(dir)) {
    out += std::string(kind_word(a.kind)) + " " + a.name + ": ";
    if (!a.loaded.descriptor) {
      out += "cannot load: " + a.error + "\n";
      continue;
    }
    out += std::string(a.loaded.descriptor->description) + "\n";
    const std::string options = describe_options({{a.name, a.loaded.descriptor->options}});
    // Without its heading: the plugin's line says whose they are.
    out += options.empty() ? "  (no options)\n" : options.substr(options.find('\n') + 1);
    unload_plugin(a.loaded);
  }
  return out;
}

}  // namespace vcx
