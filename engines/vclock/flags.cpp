// Flags of the vclock engine: synchronisation through memory (OpenSHMEM's
// wait_until and test; docs/clock-rules.md, "Flags").
//
// A write that may be a flag is registered at the tool of the PE whose
// memory it writes (the flag's deposition) before the application makes it:
// the writer's tool sends FlagAnnounce as soon as it reads the write, the
// deposition numbers the registration and answers FlagGrant at once, and
// the application writes only after that answer. What the write stores may
// be known then (a put of one element) or only after it (a fetching atomic:
// FlagValue follows); the writer's clock follows when its engine reaches
// the write (FlagClock, the clock as it is then, without a tick).
//
// A wait that returned at the deposition takes a snapshot as soon as its
// tool reads it, before the application goes on: the registrations so far.
// Its clock merges those of them whose value says they came before the
// value the wait read: a store of that very value, or a counter step (an
// increment, or a decrement) that is not past it. Every write the wait's
// read could see was registered before it happened, hence before the
// snapshot; every write made after the application went on is registered
// after the snapshot. So which writes a wait merges never depends on the
// timing of tool messages, only on the registrations' order, which follows
// the application's.
//
// Deposits whose clock is below this engine's clock can add nothing to any
// later wait and are dropped: merged ones at once, the others when their
// flag is waited for or, once many accumulated, in a sweep over all flags.
#include <algorithm>

#include "vclock_engine.h"

namespace vcx::vclock {
namespace {

std::int64_t sign_extend(std::uint64_t v, unsigned width) {
  if (width == 0 || width >= 8) return static_cast<std::int64_t>(v);
  const unsigned shift = 64 - 8 * width;
  return static_cast<std::int64_t>(v << shift) >> shift;
}

std::uint64_t width_mask(unsigned width) {
  return width == 0 || width >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * width)) - 1;
}

// -1, 0, 1 as a is below, equal to or above b, read as the waited value's type.
int compare_values(std::uint64_t a, std::uint64_t b, std::uint16_t wait_bits) {
  const unsigned width = flag_width(wait_bits);
  if (flag_signed(wait_bits)) {
    const std::int64_t x = sign_extend(a, width), y = sign_extend(b, width);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  const std::uint64_t m = width_mask(width), x = a & m, y = b & m;
  return x < y ? -1 : x > y ? 1 : 0;
}

// Whether a wait that read `value` merges the deposited write: a store of
// that value, or a counter step that is not past it.
bool merges(std::uint16_t deposit_bits, std::uint64_t deposit_value, std::uint16_t wait_bits,
            std::uint64_t value) {
  if (flag_width(deposit_bits) != flag_width(wait_bits)) return false;
  switch (flag_mode(deposit_bits)) {
    case kFlagStore: return compare_values(deposit_value, value, wait_bits) == 0;
    case kFlagUp: return compare_values(deposit_value, value, wait_bits) <= 0;
    case kFlagDown: return compare_values(deposit_value, value, wait_bits) >= 0;
    default: return false;
  }
}

}  // namespace

// ---------------------------------------------------------------------------
// The writer and the waiter, as programs are queued

void VclockEngine::request_flags(std::uint64_t event_seq, std::size_t first) {
  std::uint32_t announced = 0;
  for (std::size_t i = first; i < ops_.size(); ++i) {
    Op& op = ops_[i];
    switch (op.kind) {
      case OpKind::FlagWrite:
        send_p2p(op.peer, MsgType::FlagAnnounce, op.flags, QueueId{op.queue.a, op.queue.b},
                 op.value, nullptr);
        flag_grants_[op.value] = event_seq;
        ++announced;
        break;
      case OpKind::FlagValue:
        send_p2p(op.peer, MsgType::FlagValue, op.flags, QueueId{op.queue.a, op.queue.b},
                 op.value, nullptr);
        break;
      case OpKind::FlagWait:
        // The registrations so far: those with a lower number came before.
        op.value = flag_registrations_;
        break;
      default:
        break;
    }
  }
  if (announced == 0) return;
  // One gate per program: no reply overtakes it before every write of it is
  // registered.
  if (!gates_.empty() && gates_.back().event_seq == event_seq)
    gates_.back().outstanding += announced;
  else
    gates_.push_back(OrderGate{event_seq, announced});
}

void VclockEngine::on_flag_grant(Rank src, const P2PHeader& h) {
  auto it = flag_grants_.find(h.seq);
  if (it == flag_grants_.end()) host_.fatal("vclock: a flag grant for no write");
  const std::uint64_t seq = it->second;
  flag_grants_.erase(it);
  (void)src;
  for (OrderGate& g : gates_)
    if (g.event_seq == seq) --g.outstanding;
  while (!gates_.empty() && gates_.front().outstanding == 0) gates_.pop_front();
}

bool VclockEngine::exec_flag_write(const Op& op) {
  // Registered first: the clock must not reach the deposition, nor the
  // application its reply, before the registration was granted.
  if (!gates_.empty() && gates_.front().event_seq <= programs_.front().event_seq) return false;
  send_p2p(op.peer, MsgType::FlagClock, 0, QueueId{op.queue.a, 0}, op.value,
           clock_.view().data());
  return true;
}

bool VclockEngine::exec_flag_wait(const Op& op) {
  auto it = flags_.find(op.queue.a);
  if (it == flags_.end()) return true;  // nothing registered: nothing to merge
  std::vector<FlagDeposit>& ds = it->second.deposits;
  // Decide first: every registration before the snapshot must be known.
  for (const FlagDeposit& d : ds) {
    if (d.index >= op.value) break;
    if (flag_mode(d.bits) == kFlagPending) return false;
    if (merges(d.bits, d.value, op.flags, op.queue.b) && !d.clock) return false;
  }
  for (auto d = ds.begin(); d != ds.end() && d->index < op.value;) {
    if (!merges(d->bits, d->value, op.flags, op.queue.b)) {
      ++d;
      continue;
    }
    clock_.merge(pool_.view(d->clock));
    pool_.release(d->clock);
    peers_.push_back(d->writer);
    d = ds.erase(d);
    --flag_deposits_;
  }
  prune_flag(op.queue.a);
  return true;
}

bool VclockEngine::flag_wait_needs_application(const Op& op) const {
  auto it = flags_.find(op.queue.a);
  if (it == flags_.end()) return false;
  for (const FlagDeposit& d : it->second.deposits) {
    if (d.index >= op.value) break;
    // What a fetching atomic wrote comes from its application, which may
    // need this PE's application to go on first (an atomic on memory that
    // Open MPI serves only inside the target's OpenSHMEM calls).
    if (flag_mode(d.bits) == kFlagPending) return true;
    if (!d.clock && merges(d.bits, d.value, op.flags, op.queue.b) && d.writer.value < width_ &&
        dependent_peers_[d.writer.value] != 0)
      return true;
  }
  return false;
}

std::string VclockEngine::flag_wait_blocked_on(const Op& op) const {
  auto it = flags_.find(op.queue.a);
  if (it == flags_.end()) return "";
  for (const FlagDeposit& d : it->second.deposits) {
    if (d.index >= op.value) break;
    if (flag_mode(d.bits) == kFlagPending)
      return ": what a write of rank " + std::to_string(d.writer.value) + " stored";
    if (!d.clock && merges(d.bits, d.value, op.flags, op.queue.b))
      return ": the clock of a write of rank " + std::to_string(d.writer.value);
  }
  return "";
}

// ---------------------------------------------------------------------------
// The deposition

VclockEngine::FlagDeposit* VclockEngine::find_flag_deposit(std::uint64_t flag, Rank writer,
                                                           std::uint64_t id) {
  auto it = flags_.find(flag);
  if (it == flags_.end()) return nullptr;
  // From the newest: values and clocks follow their registrations closely.
  auto& ds = it->second.deposits;
  for (auto d = ds.rbegin(); d != ds.rend(); ++d)
    if (d->writer == writer && d->id == id) return &*d;
  return nullptr;
}

void VclockEngine::on_flag_announce(Rank src, const P2PHeader& h) {
  const std::uint64_t index = flag_registrations_++;
  if (flag_mode(h.flags) != kFlagNoWrite) {
    FlagDeposit d;
    d.writer = src;
    d.id = h.seq;
    d.index = index;
    d.bits = h.flags;
    d.value = h.queue_b;
    flags_[h.queue_a].deposits.push_back(d);
    ++flag_deposits_;
  }
  send_p2p(src, MsgType::FlagGrant, 0, QueueId{h.queue_a, 0}, h.seq, nullptr);
}

void VclockEngine::on_flag_value(Rank src, const P2PHeader& h) {
  // Unknown when it was dropped already (its clock was below this one).
  FlagDeposit* d = find_flag_deposit(h.queue_a, src, h.seq);
  if (!d) return;
  d->bits = h.flags;
  d->value = h.queue_b;
  if (flag_mode(h.flags) != kFlagNoWrite) return;
  pool_.release(d->clock);
  d->clock = nullptr;
  auto& ds = flags_[h.queue_a].deposits;
  ds.erase(ds.begin() + (d - ds.data()));
  --flag_deposits_;
}

void VclockEngine::on_flag_clock(Rank src, const P2PHeader& h, ClockSpan clock) {
  auto* c = const_cast<ClockValue*>(clock.data());
  FlagDeposit* d = find_flag_deposit(h.queue_a, src, h.seq);
  if (!d || d->clock) {
    pool_.release(c);  // the write stored nothing
    return;
  }
  d->clock = c;
}

void VclockEngine::prune_flag(std::uint64_t flag) {
  auto it = flags_.find(flag);
  if (it == flags_.end()) return;
  auto& ds = it->second.deposits;
  const ClockSpan now = clock_.view();
  const auto gone = std::remove_if(ds.begin(), ds.end(), [&](FlagDeposit& d) {
    if (!d.clock || !clock_leq(pool_.view(d.clock), now)) return false;
    pool_.release(d.clock);
    d.clock = nullptr;
    return true;
  });
  flag_deposits_ -= static_cast<std::size_t>(ds.end() - gone);
  ds.erase(gone, ds.end());
  if (ds.empty()) flags_.erase(it);
}

void VclockEngine::maybe_sweep_flags() {
  if (flag_deposits_ <= flag_sweep_at_) return;
  std::vector<std::uint64_t> ids;
  ids.reserve(flags_.size());
  for (const auto& [id, f] : flags_) ids.push_back(id);
  for (const std::uint64_t id : ids) prune_flag(id);
  flag_sweep_at_ = std::max<std::size_t>(1024, 2 * flag_deposits_);
}

}  // namespace vcx::vclock
