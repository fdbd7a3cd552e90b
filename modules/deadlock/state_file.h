// What each tool writes of its rank for the deadlock analysis, and what
// vcx-run reads: <dir>/state-<rank>.json, replaced whole (renamed into
// place) each time the rank's status changes; <dir>/maps-<rank>.txt, the
// rank's memory map for source lines, written once.
//
// Confirming a deadlock: vcx-run writes <dir>/confirm.json, a number and the
// slot entry of each rank it found blocked; the tool of such a rank, at its
// next look at the rank's slot, writes <dir>/confirmed-<rank>.json with that
// number if the rank is still in that entry. A rank that answers has been in
// its call from before vcx-run read its state until the answer, so once all
// have answered they were all in their calls at the same time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "wait_graph.h"

namespace vcx::deadlock {

std::string state_path(const std::string& dir, std::uint32_t rank);
std::string maps_path(const std::string& dir, std::uint32_t rank);
std::string confirm_path(const std::string& dir);
std::string confirmed_path(const std::string& dir, std::uint32_t rank);
// What vcx-run found, for the report at the end.
std::string found_path(const std::string& dir);

// "0", "0 and 1", "0, 1 and 2".
std::string rank_words(const std::vector<Rank>& ranks);

// A whole file's text, "" when it cannot be read (not written yet).
std::string read_text(const std::string& path);

// The view as JSON text, and back (nullopt when it does not parse).
std::string state_text(const RankView& v, std::uint32_t rank);
std::optional<RankView> parse_state(const std::string& text);

struct ConfirmRequest {
  std::uint64_t number = 0;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> entries;  // rank, slot entry
};
std::string confirm_text(const ConfirmRequest& c);
std::optional<ConfirmRequest> parse_confirm(const std::string& text);

}  // namespace vcx::deadlock
