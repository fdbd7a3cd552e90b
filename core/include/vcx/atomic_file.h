// Files other processes read while they may be written: written beside
// their place and renamed there, so that a reader sees all of one or none.
#pragma once

#include <string>

namespace vcx {

// Writes `text` to `path`.tmp (mode 0600) and renames it to `path`.
bool write_file_atomically(const std::string& path, const std::string& text, std::string* error);

}  // namespace vcx
