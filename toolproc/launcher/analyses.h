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

// Whether `name` is one of them; if not, the error to show.
std::string check_analyses(const std::vector<std::string>& names, const std::string& plugin_dir);

}  // namespace vcx::launcher
