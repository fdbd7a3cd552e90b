// The analyses vcx-run can run: the installed modules with reporting hooks
// (vcx/analysis_report.h). vcx-run knows them only through their plugins:
// their names, descriptions and options, and how each builds its report.
#pragma once

#include <string>
#include <vector>

#include "launcher/options.h"

namespace vcx::launcher {

// By name; a plugin that does not load is left out.
std::vector<InstalledAnalysis> installed_analyses(const std::string& plugin_dir);

// Checks the analyses --analysis and --no-analysis name against the
// installed ones, and adds those on by default that --no-analysis does not
// leave out (to options->analyses and options->analyses_by_default). Returns
// the error to show, or "".
std::string resolve_analyses(LaunchOptions* options, const std::string& plugin_dir);

}  // namespace vcx::launcher
