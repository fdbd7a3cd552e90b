// The number of files a tool may hold open. Tool 0 holds two sockets per
// other tool (every tool reports to it), so at a few hundred ranks the usual
// soft limit of 1024 would make the run fail; the hard limit is usually far
// higher and may be taken without privileges.
#pragma once

#include <optional>
#include <string>

namespace vcx {

// Raises the soft limit on open files to the hard limit. Returns what went
// wrong when the limit could not be read or set (the run goes on with the
// limit it has).
std::optional<std::string> raise_open_file_limit();

}  // namespace vcx
