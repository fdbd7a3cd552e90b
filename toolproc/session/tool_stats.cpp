#include "session/tool_stats.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include <nlohmann/json.hpp>

namespace vcx::session {
namespace {

using nlohmann::json;

// Deeper documents are refused: nothing vcx writes nests at all.
constexpr int kMaxDepth = 64;

// Counters written as floats ("1.5e3") are rounded, negative ones read as 0.
std::optional<std::uint64_t> as_u64(const json& o, const char* key) {
  const auto it = o.find(key);
  if (it == o.end()) return std::nullopt;
  if (it->is_number_unsigned()) return it->get<std::uint64_t>();
  if (it->is_number_integer()) return 0;  // negative
  if (!it->is_number_float()) return std::nullopt;
  const double d = it->get<double>();
  if (!std::isfinite(d) || d <= 0) return 0;
  if (d >= 1.8e19) return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(std::llround(d));
}

void read_u64(const json& o, const char* key, std::uint64_t& into) {
  if (const auto v = as_u64(o, key)) into = *v;
}

void read_string(const json& o, const char* key, std::string& into) {
  const auto it = o.find(key);
  if (it != o.end() && it->is_string()) into = it->get<std::string>();
}

void read_bool(const json& o, const char* key, bool& into) {
  const auto it = o.find(key);
  if (it != o.end() && it->is_boolean()) into = it->get<bool>();
}

// The summary prints the reason as part of one line.
std::string one_line(const std::string& text) {
  std::string out;
  for (const char c : text)
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  return out;
}

}  // namespace

std::string ToolStats::to_json() const {
  json o{{"rank", rank},
         {"events", events},
         {"clocked_calls", clocked_calls},
         {"stall_ns", stall_ns},
         {"backpressure_ns", backpressure_ns},
         {"released_replies", released_replies},
         {"messages_sent", messages_sent},
         {"bytes_sent", bytes_sent},
         {"shm_messages_sent", shm_messages_sent},
         {"wakeups_sent", wakeups_sent},
         {"leased_acquisitions", leased_acquisitions},
         {"peak_backlog", peak_backlog},
         {"stall", stall},
         {"cpu_ns", cpu_ns},
         {"transport", transport},
         {"channel", channel},
         {"max_rss_kb", max_rss_kb},
         {"app", app},
         {"aborted", aborted},
         {"reason", one_line(reason)},
         {"stopped_at_ns", stopped_at_ns}};
  // A reason may quote bytes that are not UTF-8 (a path, a peer's text).
  return o.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::optional<ToolStats> ToolStats::from_json(std::string_view text, std::string* error) {
  bool too_deep = false;
  const json::parser_callback_t depth_limit = [&](int depth, json::parse_event_t, json&) {
    if (depth > kMaxDepth) too_deep = true;
    return !too_deep;
  };
  const json o = json::parse(text, depth_limit, false);
  if (too_deep || o.is_discarded() || !o.is_object()) {
    if (error)
      *error = too_deep            ? "nested deeper than " + std::to_string(kMaxDepth) + " levels"
               : o.is_discarded() ? "not valid JSON"
                                  : "not a JSON object";
    return std::nullopt;
  }
  ToolStats s;
  if (const auto r = as_u64(o, "rank"); r && *r <= static_cast<std::uint64_t>(INT32_MAX))
    s.rank = static_cast<int>(*r);
  read_u64(o, "events", s.events);
  read_u64(o, "clocked_calls", s.clocked_calls);
  read_u64(o, "stall_ns", s.stall_ns);
  read_u64(o, "backpressure_ns", s.backpressure_ns);
  read_u64(o, "released_replies", s.released_replies);
  read_u64(o, "messages_sent", s.messages_sent);
  read_u64(o, "bytes_sent", s.bytes_sent);
  read_u64(o, "shm_messages_sent", s.shm_messages_sent);
  read_u64(o, "wakeups_sent", s.wakeups_sent);
  read_u64(o, "leased_acquisitions", s.leased_acquisitions);
  read_u64(o, "peak_backlog", s.peak_backlog);
  read_string(o, "stall", s.stall);
  read_u64(o, "cpu_ns", s.cpu_ns);
  read_string(o, "transport", s.transport);
  read_string(o, "channel", s.channel);
  read_u64(o, "max_rss_kb", s.max_rss_kb);
  read_string(o, "app", s.app);
  read_bool(o, "aborted", s.aborted);
  read_string(o, "reason", s.reason);
  read_u64(o, "stopped_at_ns", s.stopped_at_ns);
  return s;
}

}  // namespace vcx::session
