// The analyses that watch the run while it goes on (their reporting hooks'
// `watch`, vcx/analysis_report.h): loaded when the application starts, asked
// on each turn of the supervisor's loop, unloaded at the end.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "launcher/plan.h"
#include "vcx/analysis_report.h"
#include "vcx/plugin_loader.h"

namespace vcx::launcher {

class AnalysisWatch {
 public:
  AnalysisWatch(const Plan& plan, const std::string& session_dir);
  ~AnalysisWatch();
  AnalysisWatch(const AnalysisWatch&) = delete;
  AnalysisWatch& operator=(const AnalysisWatch&) = delete;

  // The first verdict that ends the run, if any.
  std::optional<RunVerdict> check();

 private:
  struct Watcher {
    std::string name;
    LoadedPlugin plugin;
    ReportRequest request;
  };
  std::vector<Watcher> watchers_;
};

}  // namespace vcx::launcher
