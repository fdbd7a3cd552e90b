// Running a checked plan: the session, both jobs (the tools first ready,
// then the application with the interceptor), signals passed on, the
// progress line, the answer to SIGUSR1 ("where the ranks are"), the end of
// both jobs and the summary and reports after them.
#pragma once

#include "launcher/plan.h"

namespace vcx::launcher {

// The line after vcx-run's answer to SIGUSR1 ("where the ranks are").
inline constexpr const char* kWhereEnd = "end of where the ranks are";

// Runs both jobs; returns vcx-run's exit code. Throws std::runtime_error
// when the session cannot be set up.
int run(const Plan& plan, const Environment& env);

}  // namespace vcx::launcher
