// vcx-run's flow: read the options (options.h), check everything and plan
// the run (planning.h, plan.h), then run it (supervisor.h) with the jobs'
// commands (commands.h).
#pragma once

#include "launcher/commands.h"
#include "launcher/plan.h"
#include "launcher/planning.h"
#include "launcher/supervisor.h"

namespace vcx::launcher {

// The whole program: arguments in, exit code out.
int launcher_main(int argc, char** argv, char** envp);

}  // namespace vcx::launcher
