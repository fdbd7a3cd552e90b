// An Outbox (engines/vclock/outbox.h) that records what a part of the engine
// sends, for tests that check one part alone. fatal() throws PartFatal.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "messages.h"
#include "outbox.h"
#include "vcx/vector_clock.h"

namespace vcx::test {

class PartFatal : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SentMessage {
  Rank dst{};
  vclock::MsgType type{};
  std::uint16_t flags = 0;
  QueueId queue{};
  std::uint64_t seq = 0;
  std::optional<std::vector<ClockValue>> clock;  // none: no clock followed
  vclock::CollHeader coll{};                     // collective messages only
  bool aside = false;
};

class RecordingOutbox final : public vclock::Outbox {
 public:
  explicit RecordingOutbox(std::uint32_t width) : width_(width) {}

  void send_p2p(Rank dst, vclock::MsgType type, std::uint16_t flags, QueueId queue,
                std::uint64_t seq, const ClockValue* clock) override {
    SentMessage m;
    m.dst = dst;
    m.type = type;
    m.flags = flags;
    m.queue = queue;
    m.seq = seq;
    if (clock) m.clock.emplace(clock, clock + width_);
    sent.push_back(std::move(m));
  }
  void send_coll(Rank dst, const vclock::CollHeader& header, const ClockValue* clock,
                 bool aside) override {
    SentMessage m;
    m.dst = dst;
    m.type = header.type;
    m.coll = header;
    m.aside = aside;
    if (clock) m.clock.emplace(clock, clock + width_);
    sent.push_back(std::move(m));
  }
  [[noreturn]] void fatal(const std::string& why) override { throw PartFatal(why); }

  // The messages of one type, in the order sent.
  std::vector<SentMessage> of(vclock::MsgType type) const {
    std::vector<SentMessage> out;
    for (const SentMessage& m : sent)
      if (m.type == type) out.push_back(m);
    return out;
  }

  std::vector<SentMessage> sent;

 private:
  std::uint32_t width_;
};

}  // namespace vcx::test
