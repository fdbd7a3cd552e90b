// The deadlock analysis in vcx-run: while the run goes on, the decision over
// every rank's state (wait_graph.h), confirmed by the tools (state_file.h)
// before it ends the run; after it, the report.
#pragma once

#include "vcx/analysis_report.h"

namespace vcx::deadlock {

// vcx-run's exit status when it ended a deadlocked run.
inline constexpr int kExitDeadlock = 65;

void watch_for_deadlock(const ReportRequest& request, RunVerdict* out);
void build_deadlock_report(const ReportRequest& request, AnalysisReport* out);

}  // namespace vcx::deadlock
