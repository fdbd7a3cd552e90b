// The engine's messages on the wire: headers and clocks out to the other
// engines and back in, each clock against the pair's baseline where there is
// one (clock_baselines.h, clock_codec.h).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "clock_baselines.h"
#include "clock_pool.h"
#include "outbox.h"
#include "vcx/plugin.h"
#include "vcx/transport.h"

namespace vcx::vclock {

class PeerMail final : public Outbox {
 public:
  PeerMail(ToolHost& host, PeerTransport& transport, Rank self, std::uint32_t width,
           std::uint64_t diff_bytes);

  void send_p2p(Rank dst, MsgType type, std::uint16_t flags, QueueId queue, std::uint64_t seq,
                const ClockValue* clock) override;
  void send_coll(Rank dst, const CollHeader& header, const ClockValue* clock,
                 bool aside) override;
  [[noreturn]] void fatal(const std::string& why) override;

  // The clock that follows a header of `header_bytes`, decoded against the
  // pair's baseline (and offering one where the protocol says so).
  PooledClock read_clock(Rank src, std::span<const std::uint8_t> bytes, std::size_t header_bytes,
                         std::uint8_t encoding, std::uint32_t items, const char* what,
                         ClockPool& pool);
  // DiffOffer and DiffDecline.
  void on_offer(Rank src);
  void on_decline(Rank src);

  const PeerBaselines& baselines() const { return baselines_; }

 private:
  template <class Header>
  void send_clock_message(Rank dst, const Header& h, const ClockValue* clock, bool aside);
  void check_source(Rank src);

  ToolHost& host_;
  PeerTransport& transport_;
  std::uint32_t width_;
  PeerBaselines baselines_;
  std::vector<std::uint8_t> scratch_;
};

}  // namespace vcx::vclock
