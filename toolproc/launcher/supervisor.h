// Running a checked plan: the session, both jobs (started at once; the
// tools must get ready), signals passed on, the end of both jobs with their
// deadlines, and the summary after them. What it shows meanwhile and
// reports afterwards is progress_line.h, where_report.h, run_reports.h.
#pragma once

#include "launcher/plan.h"

namespace vcx::launcher {

// Runs both jobs; returns vcx-run's exit code. Throws std::runtime_error
// when the session cannot be set up.
int run(const Plan& plan, const Environment& env);

}  // namespace vcx::launcher
