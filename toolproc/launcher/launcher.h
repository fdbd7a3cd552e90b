// vcx-run's flow: check everything (the options, the program, the
// installation, the modules and plugin options), plan the run (plan.h), then
// run it (supervisor.h) with the jobs' commands (commands.h).
#pragma once

#include "launcher/commands.h"
#include "launcher/plan.h"
#include "launcher/supervisor.h"

namespace vcx::launcher {

// The whole program: arguments in, exit code out.
int launcher_main(int argc, char** argv, char** envp);

}  // namespace vcx::launcher
