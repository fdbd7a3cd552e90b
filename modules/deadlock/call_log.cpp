#include "call_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "vcx/atomic_file.h"

namespace vcx::deadlock {

std::string calls_path(const std::string& dir, std::uint32_t rank) {
  return dir + "/calls-" + std::to_string(rank) + ".bin";
}

std::string names_path(const std::string& dir, std::uint32_t rank) {
  return dir + "/names-" + std::to_string(rank) + ".txt";
}

CallLog::CallLog(std::string dir, std::uint32_t rank, std::uint64_t budget)
    : dir_(std::move(dir)), rank_(rank), left_(budget) {
  if (budget == 0) return;
  fd_ = ::open(calls_path(dir_, rank_).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ >= 0) buffer_.reserve(kBufferRecords);
}

CallLog::~CallLog() {
  flush();
  if (fd_ >= 0) ::close(fd_);
}

bool CallLog::take(std::uint64_t records) {
  if (records > left_) {
    full_ = true;
    return false;
  }
  left_ -= records;
  return true;
}

void CallLog::write_out() {
  const auto* p = reinterpret_cast<const char*>(buffer_.data());
  std::size_t left = buffer_.size() * sizeof(LogRecord);
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // A full disk ends the log here: the check covers what it holds.
      full_ = true;
      break;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  buffer_.clear();
}

std::uint32_t& CallLog::named_slot(std::uint32_t key) {
  return named_[(key * 0x9e3779b1u) >> 26];
}

bool CallLog::named(std::uint16_t model, std::uint16_t call) {
  const std::uint32_t key = name_key(model, call);
  return named_slot(key) == key + 1;
}

void CallLog::name(std::uint16_t model, std::uint16_t call, const char* text) {
  const std::uint32_t key = name_key(model, call);
  std::uint32_t& slot = named_slot(key);
  if (slot == key + 1) return;
  slot = key + 1;
  auto [it, added] = names_.try_emplace(key);
  if (!added) return;
  it->second = text ? text : "";
  names_changed_ = true;
}

void CallLog::add(const ClockedCall& call, const ToolHost& host) {
  if (fd_ < 0 || full_) return;
  const std::uint64_t records =
      1 + call.messages.size() + call.completed_sends.size() + call.collectives.size();
  // The log ends at a call boundary: what follows is unknown to the check.
  if (!take(records)) return;
  const auto model = static_cast<std::uint16_t>(call.model);
  name(model, call.call, call.call_name);
  LogRecord r;
  r.type = LogType::Call;
  r.model = model;
  r.call = call.call;
  r.a = call.seq;
  r.b = call.call_site;
  put(r);
  in_wait_ = false;
  for (const SendCompletion& c : call.completed_sends) put_completion(c, host);
  for (const MessageEnd& m : call.messages) {
    LogRecord s;
    s.type = m.sent ? LogType::Sent : LogType::Received;
    s.flags = static_cast<std::uint8_t>((m.wildcard ? kLogWildcard : 0) |
                                        (m.posted_in_call ? kLogPostedInCall : 0));
    s.peer = m.peer.value;
    s.a = m.queue.a;
    s.b = m.queue.b;
    s.c = m.position;
    s.d = m.sent ? 0 : m.posted_after;
    s.waits = m.sent ? 0 : m.posted_after_waits;
    put(s);
  }
  for (const CollectivePart& c : call.collectives) {
    LogRecord s;
    s.type = LogType::Collective;
    s.flags = c.completed ? kLogCompleted : 0;
    s.a = c.ref.group.value;
    s.b = c.ref.instance;
    s.c = static_cast<std::uint64_t>(c.ref.kind);
    s.peer = c.ref.root.value;
    put(s);
  }
}

void CallLog::add_group(GroupId id, std::span<const Rank> members) {
  if (fd_ < 0 || full_) return;
  if (!take(members.size())) return;
  for (std::size_t i = 0; i < members.size(); ++i) {
    LogRecord r;
    r.type = LogType::Member;
    r.a = id.value;
    r.c = i;
    r.peer = members[i].value;
    put(r);
  }
}

void CallLog::add(const SendCompletion& c, const ToolHost& host) {
  if (fd_ < 0 || full_) return;
  if (!take(1)) return;
  put_completion(c, host);
}

void CallLog::put_completion(const SendCompletion& c, const ToolHost& host) {
  const auto m = static_cast<std::uint16_t>(c.model);
  if (!named(m, c.call))
    name(m, c.call, host.call_name(static_cast<std::uint8_t>(c.model), c.call));
  LogRecord s;
  s.type = LogType::Completed;
  s.flags = c.before ? kLogBefore : 0;
  if (c.before && (!in_wait_ || c.event_seq != wait_event_)) {
    s.flags |= kLogNewWait;
    in_wait_ = true;
    wait_event_ = c.event_seq;
  }
  s.model = m;
  s.call = c.call;
  s.peer = c.peer.value;
  s.a = c.queue.a;
  s.b = c.queue.b;
  s.c = c.position;
  s.d = c.call_site;
  put(s);
}

void CallLog::flush() {
  if (fd_ < 0) return;
  if (!buffer_.empty()) write_out();
  if (!names_changed_) return;
  names_changed_ = false;
  std::string text;
  for (const auto& [key, n] : names_)
    text += std::to_string(key >> 16) + " " + std::to_string(key & 0xffff) + " " + n + "\n";
  write_file_atomically(names_path(dir_, rank_), text, nullptr);
}

}  // namespace vcx::deadlock
