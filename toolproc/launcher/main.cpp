// vcx-run: runs an MPI program under vcx. See launcher/launcher.h.
#include <unistd.h>

#include "launcher/launcher.h"

int main(int argc, char** argv) { return vcx::launcher::launcher_main(argc, argv, environ); }
