// Names the call sites of one rank's trace: "file:line" from the memory map
// saved beside the trace while the application ran (rank-<R>.maps), the
// object and offset without debug information, the address without a map.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "vcx/symbolizer.h"
#include "vcx/types.h"

namespace vcx::trace {

class SiteNames {
 public:
  SiteNames(const std::string& trace_dir, Rank rank);
  const std::string& name(std::uint64_t address);

 private:
  std::unique_ptr<Symbolizer> symbols_;
  std::unordered_map<std::uint64_t, std::string> names_;
};

}  // namespace vcx::trace
