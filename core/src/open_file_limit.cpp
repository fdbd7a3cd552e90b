#include "vcx/open_file_limit.h"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>

namespace vcx {

std::optional<std::string> raise_open_file_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0)
    return std::string("cannot read the open-file limit: ") + std::strerror(errno);
  if (limit.rlim_cur == limit.rlim_max) return std::nullopt;
  limit.rlim_cur = limit.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0)
    return std::string("cannot raise the open-file limit to ") +
           std::to_string(static_cast<unsigned long long>(limit.rlim_max)) + ": " +
           std::strerror(errno);
  return std::nullopt;
}

}  // namespace vcx
