// Test records for the application→tool channels (shared-memory ring and
// TCP): every record's contents are a function of its sequence number, so
// producer and consumer agree without sharing state (they may be different
// processes). Header-only, no test-framework macros.
#pragma once

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "vcx/channel/event_record.h"
#include "vcx/types.h"

namespace vcx::chtest {

using Clock = std::chrono::steady_clock;

struct Deadline {
  Clock::time_point end;
  explicit Deadline(double seconds)
      : end(Clock::now() +
            std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds))) {}
  bool passed() const { return Clock::now() >= end; }
};

// Spins (yielding) until pred() holds; false if the hang guard expired first.
template <class Pred>
bool eventually(Pred pred, double seconds = 10.0) {
  const Deadline d(seconds);
  while (!pred()) {
    if (d.passed()) return false;
    std::this_thread::yield();
  }
  return true;
}

inline std::size_t payload_size_for(std::uint64_t seq, std::size_t max) {
  const std::uint64_t r = vcx::mix64(seq * 0x9e3779b97f4a7c15ULL + 17);
  const std::size_t pick = r % 10;
  const std::uint64_t v = r >> 8;
  if (pick < 6) return v % 65;
  if (pick < 9) return v % 301;
  return v % (max + 1);
}

inline std::uint16_t type_for(std::uint64_t seq) { return static_cast<std::uint16_t>(seq * 7 + 3); }
inline std::uint32_t flags_for(std::uint64_t seq) {
  return seq % 5 == 0 ? std::uint32_t{vcx::kEventNeedsReply} : 0u;
}

inline void fill_payload(std::uint8_t* p, std::size_t n, std::uint64_t seq) {
  std::uint64_t x = vcx::mix64(seq) | 1;
  for (std::size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    p[i] = static_cast<std::uint8_t>(x);
  }
}

// Pushes record `seq`; false if begin() gave up or the sequence number is off.
template <class Producer>
bool produce(Producer& p, std::uint64_t seq) {
  const std::size_t n = payload_size_for(seq, p.max_payload());
  void* at = p.begin(vcx::Model::Example, type_for(seq), flags_for(seq), n);
  if (!at) return false;
  if (reinterpret_cast<std::uintptr_t>(at) % 8 != 0) return false;
  fill_payload(static_cast<std::uint8_t*>(at), n, seq);
  return p.commit() == seq;
}

// "" if `h` is record `seq` exactly as produce() wrote it.
inline std::string check_record(const vcx::EventHeader* h, std::uint64_t seq,
                                std::size_t max_payload) {
  if (reinterpret_cast<std::uintptr_t>(h) % 8 != 0) return "misaligned record";
  if (h->seq != seq)
    return "expected seq " + std::to_string(seq) + ", got " + std::to_string(h->seq);
  const std::size_t n = payload_size_for(seq, max_payload);
  if (h->model != vcx::Model::Example) return "wrong model at seq " + std::to_string(seq);
  if (h->type != type_for(seq)) return "wrong type at seq " + std::to_string(seq);
  if (h->flags != flags_for(seq)) return "wrong flags at seq " + std::to_string(seq);
  if (h->payload_size != n) return "wrong payload size at seq " + std::to_string(seq);
  if (h->size != vcx::event_record_size(n))
    return "wrong record size at seq " + std::to_string(seq);
  std::vector<std::uint8_t> want(n);
  fill_payload(want.data(), n, seq);
  if (n && std::memcmp(h + 1, want.data(), n) != 0)
    return "payload corrupted at seq " + std::to_string(seq);
  return "";
}

// Where the ring must put padding: the test's own model of the byte layout.
struct LayoutModel {
  std::uint64_t cap;
  std::uint64_t head = 0;
  std::uint64_t pads = 0;
  void add(std::size_t payload) {
    const std::uint64_t rec = vcx::event_record_size(payload);
    const std::uint64_t off = head & (cap - 1);
    if (off + rec > cap) {
      head += cap - off;
      ++pads;
    }
    head += rec;
  }
};

// Consumes records `first`..`last` in order, checking each; "" on success.
template <class Consumer>
std::string consume_range(Consumer& c, std::uint64_t first, std::uint64_t last,
                          std::size_t max_payload, double guard_seconds = 20.0) {
  const Deadline d(guard_seconds);
  for (std::uint64_t seq = first; seq <= last;) {
    const vcx::EventHeader* h = c.peek();
    if (!h) {
      if (d.passed()) return "timed out waiting for seq " + std::to_string(seq);
      std::this_thread::yield();
      continue;
    }
    std::string e = check_record(h, seq, max_payload);
    if (!e.empty()) return e;
    c.pop();
    ++seq;
  }
  return "";
}

// Waits up to `seconds` for a forked child; kills it if it is still there
// (or at once when `kill_first`). Returns what waitpid returned for it.
inline pid_t reap_child(pid_t child, int* status, double seconds, bool kill_first = false) {
  if (kill_first) ::kill(child, SIGKILL);
  const Deadline d(seconds);
  pid_t w = 0;
  while ((w = ::waitpid(child, status, WNOHANG)) == 0 && !d.passed())
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (w == 0) {
    ::kill(child, SIGKILL);
    ::waitpid(child, status, 0);
  }
  return w;
}

}  // namespace vcx::chtest
