#include "peer_mail.h"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <string>

#include "clock_codec.h"

namespace vcx::vclock {

PeerMail::PeerMail(ToolHost& host, PeerTransport& transport, Rank self, std::uint32_t width,
                   std::uint64_t diff_bytes)
    : host_(host), transport_(transport), width_(width), baselines_(self, width, diff_bytes) {
  scratch_.reserve(sizeof(CollHeader) + std::size_t{width} * sizeof(ClockValue));
}

void PeerMail::fatal(const std::string& why) {
  host_.fatal(why);
  std::abort();  // not reached; the compiler does not carry [[noreturn]] through the virtual call
}

void PeerMail::send_p2p(Rank dst, MsgType type, std::uint16_t flags, QueueId queue,
                        std::uint64_t seq, const ClockValue* clock) {
  P2PHeader h{};
  h.type = type;
  h.flags = flags;
  h.queue_a = queue.a;
  h.queue_b = queue.b;
  h.seq = seq;
  send_clock_message(dst, h, clock, false);
}

void PeerMail::send_coll(Rank dst, const CollHeader& header, const ClockValue* clock,
                         bool aside) {
  send_clock_message(dst, header, clock, aside);
}

template <class Header>
void PeerMail::send_clock_message(Rank dst, const Header& h, const ClockValue* clock,
                                  bool aside) {
  pack_message(h, clock, width_, scratch_, clock && !aside ? baselines_.sending(dst) : nullptr);
  if (aside && clock) scratch_[offsetof(Header, encoding)] |= kEncodingAside;
  transport_.send(dst, ToolPart::Exchange, scratch_);
}

void PeerMail::check_source(Rank src) {
  if (src.value >= width_) host_.fatal("vclock: a message from a rank outside the job");
}

PooledClock PeerMail::read_clock(Rank src, std::span<const std::uint8_t> bytes,
                                 std::size_t header_bytes, std::uint8_t encoding,
                                 std::uint32_t items, const char* what, ClockPool& pool) {
  check_source(src);
  const bool keeps = (encoding & kEncodingKeep) != 0;
  const bool aside = (encoding & kEncodingAside) != 0;
  if (aside && keeps)
    host_.fatal(std::string("vclock: a ") + what + " message both aside and kept");
  encoding &= static_cast<std::uint8_t>(~kEncodingAside);
  const PeerBaselines::Arrival a =
      aside ? PeerBaselines::Arrival{} : baselines_.receiving(src, keeps);
  if (a.invalid)
    host_.fatal(std::string("vclock: a ") + what +
                " message whose clock does not follow the differential protocol (do all tools "
                "run with the same vclock.diff-bytes?)");
  PooledClock clock = pool.take();
  if (!decode_clock(bytes.subspan(header_bytes), encoding & ~kEncodingKeep, items, width_,
                    clock.mutable_view().data(), a.base))
    host_.fatal(std::string("vclock: a ") + what + " message whose clock does not fit this job");
  if (a.base) std::copy_n(clock.data(), width_, a.base);
  if (a.offer) send_p2p(src, MsgType::DiffOffer, 0, QueueId{}, 0, nullptr);
  return clock;
}

void PeerMail::on_offer(Rank src) {
  check_source(src);
  if (!baselines_.take_offer(src)) send_p2p(src, MsgType::DiffDecline, 0, QueueId{}, 0, nullptr);
}

void PeerMail::on_decline(Rank src) {
  if (src.value >= width_ || !baselines_.declined(src))
    host_.fatal("vclock: a DiffDecline for no offer");
}

}  // namespace vcx::vclock
