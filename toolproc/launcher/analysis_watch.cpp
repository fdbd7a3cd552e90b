#include "launcher/analysis_watch.h"

#include <stdexcept>

namespace vcx::launcher {

AnalysisWatch::AnalysisWatch(const Plan& plan, const std::string& session_dir) {
  for (const std::string& name : plan.options.analyses) {
    Watcher w;
    try {
      w.plugin = load_plugin(plan.paths.plugin_dir, PluginKind::Module, name);
    } catch (const std::runtime_error&) {
      continue;  // checked before the run; the report at the end says it
    }
    const AnalysisReporting* hooks = w.plugin.descriptor->reporting;
    if (!hooks || !hooks->watch) {
      unload_plugin(w.plugin);
      continue;
    }
    w.name = name;
    w.request = ReportRequest{session_dir + "/" + name, plan.options.nprocs};
    watchers_.push_back(std::move(w));
  }
}

AnalysisWatch::~AnalysisWatch() {
  for (Watcher& w : watchers_) unload_plugin(w.plugin);
}

std::optional<RunVerdict> AnalysisWatch::check() {
  for (Watcher& w : watchers_) {
    RunVerdict v;
    w.plugin.descriptor->reporting->watch(w.request, &v);
    if (v.stop) return v;
  }
  return std::nullopt;
}

}  // namespace vcx::launcher
