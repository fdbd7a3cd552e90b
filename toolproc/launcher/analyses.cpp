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
      out.push_back({p.name, d->description ? d->description : "", d->reporting->on_by_default});
    unload_plugin(p.loaded);
  }
  std::sort(out.begin(), out.end(),
            [](const InstalledAnalysis& a, const InstalledAnalysis& b) { return a.name < b.name; });
  return out;
}

std::string resolve_analyses(LaunchOptions* options, const std::string& plugin_dir) {
  const std::vector<InstalledAnalysis> installed = installed_analyses(plugin_dir);
  auto find = [&](const std::string& name) {
    return std::find_if(installed.begin(), installed.end(),
                        [&](const InstalledAnalysis& a) { return a.name == name; });
  };
  auto unknown = [&](const char* option, const std::string& name) {
    std::string list;
    for (const InstalledAnalysis& a : installed) list += (list.empty() ? "" : ", ") + a.name;
    return std::string(option) + ": there is no analysis '" + name + "' (available: " +
           (list.empty() ? std::string("none") : list) + ")";
  };
  for (const std::string& name : options->analyses)
    if (find(name) == installed.end()) return unknown("--analysis", name);
  for (const std::string& name : options->analyses_off) {
    const auto a = find(name);
    if (a == installed.end()) return unknown("--no-analysis", name);
    if (!a->on_by_default)
      return "--no-analysis: the " + name +
             " analysis is not on by default (it runs only when --analysis names it)";
  }
  for (const InstalledAnalysis& a : installed) {
    if (!a.on_by_default || runs_analysis(*options, a.name)) continue;
    if (std::count(options->analyses_off.begin(), options->analyses_off.end(), a.name)) continue;
    options->analyses.push_back(a.name);
    options->analyses_by_default.push_back(a.name);
  }
  if (options->report_file && options->analyses.empty())
    return "--report writes the findings of analyses: add one with --analysis (e.g. race)";
  return {};
}

}  // namespace vcx::launcher
