// The hosts a run is placed on, as hydra's -f and -hosts name them, and
// their translation for Open MPI's starter.
#pragma once

#include <string>
#include <vector>

#include "launcher/options.h"

namespace vcx::launcher {

// The hosts of a run as hydra takes them: entries "host[:slots]" as written,
// and the distinct host names; an error line when they cannot be read or
// name none.
struct HostList {
  std::vector<std::string> entries;
  std::vector<std::string> hosts;
  std::string error;
};
// A hydra host file: one entry per line, '#' comments.
HostList read_hostfile(const std::string& path);
// mpiexec's -hosts list: entries separated by commas ("a:4,b:2").
HostList parse_host_list(const std::string& list);
// The hosts -f or -hosts names; no entries and no error when neither is set.
HostList hosts_of(const LaunchOptions& options);

// Open MPI's options for the hosts of -f or -hosts ("--host a:4,b:2"); none
// when neither is set.
std::vector<std::string> openmpi_hosts(const LaunchOptions& options, std::string* error);

}  // namespace vcx::launcher
