// What vcx-run hands the user after a run, besides its summary: the
// analyses' reports (text on stderr, JSON in --report) and --view's page.
#pragma once

#include <string>

#include "launcher/plan.h"

namespace vcx::launcher {

// The reports of the analyses the run had, from the session's analysis
// folders. Returns the exit code: `code`, or --race-exit-code's when races
// were found (never in place of a tool failure).
int report_analyses(const Plan& plan, const std::string& session_dir, int code);

// --view: the trace's page (vcx-trace view), with the analyses' findings.
void write_view(const Plan& plan, const Environment& env, const std::string& trace_dir);

}  // namespace vcx::launcher
