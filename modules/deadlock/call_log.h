// What each tool logs of its rank's clocked calls for the potential-deadlock
// check (zero_buffer.h): <dir>/calls-<rank>.bin, fixed-size records in
// program order, appended through a buffer; <dir>/names-<rank>.txt, the
// call names the records use. A log ends where its rank stopped or where
// its record budget ran out; the check treats what is past the end as
// unknown, never as missing.
#pragma once

#include <cstdint>
#include <array>
#include <map>
#include <string>
#include <vector>

#include "vcx/exchange.h"
#include "vcx/plugin.h"

namespace vcx::deadlock {

enum class LogType : std::uint8_t {
  Call = 1,       // a clocked call: seq in a, call site in b
  Sent = 2,       // a message it sent: peer = destination; a, b = queue; c = position
  Received = 3,   // a message it received: peer = source; a, b, c as Sent;
                  // where its receive was posted: d = MessageEnd::posted_after,
                  // waits = posted_after_waits
  Completed = 4,  // a send it completed: peer = destination; a, b, c as Sent; d = call site
                  // (kLogBefore: by a call that was not clocked, before the next Call)
  Collective = 5,  // a collective instance the call entered (kLogCompleted: completed):
                   // a = group, b = instance, c = CollectiveKind, peer = root
  Member = 6,      // a group's member (before any call uses the group):
                   // a = group, c = position, peer = the member's world rank
};

enum LogFlags : std::uint8_t {
  kLogWildcard = 1u << 0,  // Received: by a receive posted for any source
  kLogBefore = 1u << 1,    // Completed: by a call that was not clocked
  kLogPostedInCall = 1u << 2,  // Received: this call posted the receive
  kLogNewWait = 1u << 3,       // Completed, kLogBefore: the first its call completed
  kLogCompleted = 1u << 4,     // Collective: the call completed the instance
};

struct LogRecord {
  LogType type{};
  std::uint8_t flags = 0;
  std::uint16_t model = 0;
  std::uint16_t call = 0;
  std::uint16_t reserved = 0;
  std::uint32_t peer = 0;
  std::uint32_t waits = 0;
  std::uint64_t a = 0, b = 0, c = 0, d = 0;
};
static_assert(sizeof(LogRecord) == 48, "the log's record layout is its file format");

std::string calls_path(const std::string& dir, std::uint32_t rank);
std::string names_path(const std::string& dir, std::uint32_t rank);

// The key of a call's name in names-<rank>.txt ("MODEL CALL NAME" lines).
inline std::uint32_t name_key(std::uint16_t model, std::uint16_t call) {
  return (std::uint32_t{model} << 16) | call;
}

class CallLog {
 public:
  // At most `budget` records (0: no log).
  CallLog(std::string dir, std::uint32_t rank, std::uint64_t budget);
  ~CallLog();
  CallLog(const CallLog&) = delete;
  CallLog& operator=(const CallLog&) = delete;

  // `host` names the calls (ToolHost::call_name).
  void add(const ClockedCall& call, const ToolHost& host);
  // A send completed by a call that was not clocked, before the next one.
  void add(const SendCompletion& c, const ToolHost& host);
  void add_group(GroupId id, std::span<const Rank> members);
  void flush();
  bool full() const { return full_; }
  bool open() const { return fd_ >= 0; }

 private:
  void put(const LogRecord& r) {
    buffer_.push_back(r);
    if (buffer_.size() == kBufferRecords) write_out();
  }
  void write_out();
  // Takes `records` from the budget; false (and the log full) if it has
  // not that many left.
  bool take(std::uint64_t records);
  void put_completion(const SendCompletion& c, const ToolHost& host);
  void name(std::uint16_t model, std::uint16_t call, const char* text);
  bool named(std::uint16_t model, std::uint16_t call);
  std::uint32_t& named_slot(std::uint32_t key);

  std::string dir_;
  std::uint32_t rank_;
  std::uint64_t left_;
  int fd_ = -1;
  bool full_ = false;
  // Records go out in large writes: a clocked call costs a copy, not a
  // system call.
  static constexpr std::size_t kBufferRecords = 16384;
  std::vector<LogRecord> buffer_;
  std::map<std::uint32_t, std::string> names_;
  // The names' keys met lately (key + 1; 0: none), so that the common call
  // costs one comparison instead of a map lookup.
  std::array<std::uint32_t, 64> named_{};
  bool names_changed_ = false;
  // The event of the last kLogBefore completion since the last Call, if any.
  bool in_wait_ = false;
  std::uint64_t wait_event_ = 0;
};

}  // namespace vcx::deadlock
