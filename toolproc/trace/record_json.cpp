#include "record_json.h"

#include <charconv>

namespace vcx::trace {
namespace {

// Written by hand rather than through nlohmann-json: export writes a record
// per call, and building each as a JSON value costs 4.5 times the time
// (docs/architecture.md, "JSON").
class JsonLine {
 public:
  explicit JsonLine(std::string& out) : s_(out) { s_.clear(); }
  void raw(std::string_view v) { s_.append(v); }
  void number(std::uint64_t v) {
    char b[24];
    auto r = std::to_chars(b, b + sizeof b, v);
    s_.append(b, r.ptr);
  }
  void hex(std::uint64_t v) {
    char b[24];
    auto r = std::to_chars(b, b + sizeof b, v, 16);
    s_.append("\"0x");
    s_.append(b, r.ptr);
    s_.push_back('"');
  }
  void string(std::string_view v) {
    s_.push_back('"');
    for (unsigned char c : v) {
      switch (c) {
        case '"': s_.append("\\\""); break;
        case '\\': s_.append("\\\\"); break;
        case '\n': s_.append("\\n"); break;
        case '\t': s_.append("\\t"); break;
        case '\r': s_.append("\\r"); break;
        default:
          if (c < 0x20) {
            static const char* digits = "0123456789abcdef";
            s_.append("\\u00");
            s_.push_back(digits[c >> 4]);
            s_.push_back(digits[c & 15]);
          } else {
            s_.push_back(static_cast<char>(c));
          }
      }
    }
    s_.push_back('"');
  }
 private:
  std::string& s_;
};

}  // namespace

void record_json_line(Rank rank, const Record& r, SiteNames& sites, std::string& line) {
  JsonLine j(line);
  j.raw("{\"rank\":");
  j.number(rank.value);
  j.raw(",\"seq\":");
  j.number(r.seq);
  j.raw(",\"event\":");
  j.number(r.event);
  j.raw(",\"call\":");
  j.string(r.call);
  if (!r.peers.empty()) {
    j.raw(",\"peers\":[");
    for (std::size_t i = 0; i < r.peers.size(); ++i) {
      if (i) j.raw(",");
      j.number(r.peers[i].value);
    }
    j.raw("]");
  }
  if (r.group.value != 0) {
    j.raw(",\"group\":");
    j.hex(r.group.value);
  }
  if (r.queue != QueueId{}) {
    j.raw(",\"queue\":[");
    j.hex(r.queue.a);
    j.raw(",");
    j.hex(r.queue.b);
    j.raw("]");
  }
  if (!r.messages.empty()) {
    j.raw(",\"messages\":[");
    for (std::size_t i = 0; i < r.messages.size(); ++i) {
      const MessageEnd& m = r.messages[i];
      j.raw(i ? ",{\"" : "{\"");
      j.raw(m.sent ? "to" : "from");
      j.raw("\":");
      j.number(m.peer.value);
      j.raw(",\"queue\":[");
      j.hex(m.queue.a);
      j.raw(",");
      j.hex(m.queue.b);
      j.raw("],\"position\":");
      j.number(m.position);
      j.raw(",\"bytes\":");
      j.number(m.bytes);
      if (m.wildcard) j.raw(",\"wildcard\":true");
      j.raw("}");
    }
    j.raw("]");
  }
  if (r.enter_ns) {
    j.raw(",\"enter_ns\":");
    j.number(r.enter_ns);
  }
  if (r.leave_ns) {
    j.raw(",\"leave_ns\":");
    j.number(r.leave_ns);
  }
  if (r.call_site) {
    j.raw(",\"site\":");
    j.string(sites.name(r.call_site));
  }
  j.raw(",\"clock\":[");
  for (std::size_t i = 0; i < r.clock.size(); ++i) {
    if (i) j.raw(",");
    j.number(r.clock[i]);
  }
  j.raw("]}\n");
}

}  // namespace vcx::trace
