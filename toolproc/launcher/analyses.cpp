#include "launcher/analyses.h"

#include <algorithm>

#include "vcx/analysis_report.h"
#include "vcx/plugin_loader.h"

namespace vcx::launcher {

std::vector<InstalledAnalysis> installed_analyses(const std::string& plugin_dir) {
  std::vector<InstalledAnalysis> out;
  std::vector<AvailablePlugin> plugins = load_available_plugins(plugin_dir);
  for (AvailablePlugin& p : plugins) {
    const PluginDescriptor* d = p.loaded.descriptor;
    if (d && p.kind == PluginKind::Module && d->reporting)
      out.push_back({p.name, d->description ? d->description : ""});
    unload_plugin(p.loaded);
  }
  std::sort(out.begin(), out.end(),
            [](const InstalledAnalysis& a, const InstalledAnalysis& b) { return a.name < b.name; });
  return out;
}

std::string check_analyses(const std::vector<std::string>& names, const std::string& plugin_dir) {
  if (names.empty()) return {};
  const std::vector<InstalledAnalysis> installed = installed_analyses(plugin_dir);
  for (const std::string& name : names) {
    if (std::any_of(installed.begin(), installed.end(),
                    [&](const InstalledAnalysis& a) { return a.name == name; }))
      continue;
    std::string list;
    for (const InstalledAnalysis& a : installed) list += (list.empty() ? "" : ", ") + a.name;
    return "--analysis: there is no analysis '" + name + "' (available: " +
           (list.empty() ? std::string("none") : list) + ")";
  }
  return {};
}

}  // namespace vcx::launcher
