// Collective mismatches (vcx/exchange.h, CollectiveMismatch): each tool
// writes its rank's call at every group's first mismatched instance to
// <dir>/mismatch-<rank>.json; the report puts the members' calls side by
// side, one finding per group.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "vcx/exchange.h"

namespace vcx::deadlock {

std::string mismatch_path(const std::string& dir, std::uint32_t rank);

// One tool's records, by group: the last one reported for each (the engine
// reports an earlier instance only).
class MismatchRecords {
 public:
  void add(const CollectiveMismatch& m);
  std::string text() const;  // a JSON array

 private:
  std::map<std::uint64_t, nlohmann::json> by_group_;
};

// Source line of rank `rank`'s return address `pc` ("" if unknown).
using LineOf = std::function<std::string(std::uint32_t rank, std::uint64_t pc)>;

// The findings (kind "collective-mismatch") from every rank's records, and
// their text for the user.
struct MismatchFindings {
  nlohmann::json findings = nlohmann::json::array();
  std::string text;
};
MismatchFindings mismatch_findings(const std::string& dir, int ranks, const LineOf& line_of);

}  // namespace vcx::deadlock
