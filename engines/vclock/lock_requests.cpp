#include "lock_requests.h"

#include <algorithm>

namespace vcx::vclock {

namespace {

constexpr std::uint16_t kOrderFlags = kResourceShared | kResourceDeposit | kResourceFetch;

}  // namespace

std::uint32_t LockRequests::request(std::deque<Op>& ops, std::size_t first,
                                    std::uint64_t event_seq) {
  std::uint32_t requested = 0;
  for (std::size_t i = first; i < ops.size(); ++i) {
    Op& op = ops[i];
    if (op.kind == OpKind::EndLeases) {
      end_leases_of(op.lease_object);
      continue;
    }
    if (op.kind != OpKind::Acquire && op.kind != OpKind::Release) continue;
    const PeerQueue lock{op.peer, QueueId{op.queue.a, 0}};
    if (op.kind == OpKind::Acquire) {
      if (op.flags & kResourceLeased) {
        // Taken under a lease: nobody was asked, and the holding goes on.
        Lease* l = find_live_lease(lock);
        if (!l) out_.fatal("vclock: a lock taken under a lease this tool did not give");
        op.value = l->number;
        held_[lock] = op.value;
        ++leased_acquisitions_;
        continue;
      }
      op.value = ++acquisitions_;
      OrderWait w{QueuePosition{lock, op.value}, event_seq};
      w.flags = op.flags & kOrderFlags;
      if ((op.flags & kResourceLeasable) && lease_table_()) {
        w.flags |= kResourceLeasable;
        Lease l;
        l.lock = lock;
        l.number = op.value;
        l.object = op.lease_object;
        l.target = op.lease_target;
        l.flags = op.flags & kResourceShared;
        leases_.push_back(std::move(l));
      }
      w.requested = requested == 0;
      if (w.requested)
        out_.send_p2p(op.peer, MsgType::Acquire, w.flags, lock.queue, op.value, nullptr);
      order_waits_.push_back(w);
      ++requested;
      if (!(op.flags & kResourceFetch)) held_[lock] = op.value;
      continue;
    }
    auto it = held_.find(lock);
    // A release of a lock not held goes to the deposition all the same,
    // which reports it.
    op.value = it == held_.end() ? 0 : it->second;
    if (it != held_.end()) held_.erase(it);
    // A deposit holds nothing: its release only brings its clock.
    if (op.flags & kResourceDeposit) continue;
    if (Lease* l = find_lease(lock, op.value); l && lease_release_read(op, *l)) continue;
    auto w = std::find_if(order_waits_.begin(), order_waits_.end(),
                          [&](const OrderWait& x) { return x.key == QueuePosition{lock, op.value}; });
    if (w != order_waits_.end()) {
      w->release_read = true;
      w->release_flags = op.flags & kResourceShared;
      continue;
    }
    out_.send_p2p(op.peer, MsgType::Release, op.flags & kResourceShared, lock.queue, op.value,
                  nullptr);
  }
  return requested;
}

std::uint64_t LockRequests::on_grant(Rank src, const P2PHeader& h) {
  const QueuePosition key{PeerQueue{src, QueueId{h.queue_a, 0}}, h.seq};
  auto it = std::find_if(order_waits_.begin(), order_waits_.end(),
                         [&](const OrderWait& w) { return w.key == key; });
  if (it == order_waits_.end()) out_.fatal("vclock: a grant for no acquisition");
  const std::uint64_t seq = it->event_seq;
  if (Lease* l = find_lease(key.key, h.seq); l && l->phase == Lease::Phase::Requested)
    lease_granted(*l, !it->release_read && (h.flags & kResourceLeasable));
  if (it->release_read)
    out_.send_p2p(src, MsgType::Release, it->release_flags, key.key.queue, h.seq, nullptr);
  it = order_waits_.erase(it);
  // The call's next acquisition, if any, follows the one granted.
  for (; it != order_waits_.end(); ++it)
    if (it->event_seq == seq && !it->requested) {
      it->requested = true;
      out_.send_p2p(it->key.key.peer, MsgType::Acquire, it->flags, it->key.key.queue,
                    it->key.seq, nullptr);
      break;
    }
  return seq;
}

bool LockRequests::acquire(const Op& op, VectorClock& clock) {
  // Under a lease: every release before it was this process's own.
  if (op.flags & kResourceLeased) return true;
  auto it = grants_.find(QueuePosition{PeerQueue{op.peer, QueueId{op.queue.a, 0}}, op.value});
  if (it == grants_.end()) return false;
  clock.merge(it->second.view());
  grants_.erase(it);
  return true;
}

void LockRequests::release(const Op& op, ClockSpan clock) {
  if (Lease* l = find_lease(PeerQueue{op.peer, QueueId{op.queue.a, 0}}, op.value);
      l && l->phase >= Lease::Phase::Published) {
    lease_release_executed(*l, clock);
    return;
  }
  out_.send_p2p(op.peer, MsgType::ReleaseClock, op.flags & (kResourceShared | kResourceDeposit),
                QueueId{op.queue.a, 0}, op.value, clock.data());
}

std::optional<Rank> LockRequests::waiting_for_grant(std::uint64_t event_seq) const {
  for (const OrderWait& w : order_waits_)
    if (w.event_seq == event_seq) return w.key.key.peer;
  return std::nullopt;
}

void LockRequests::on_grant_clock(Rank src, const P2PHeader& h, PooledClock clock) {
  grants_[QueuePosition{PeerQueue{src, QueueId{h.queue_a, 0}}, h.seq}] = std::move(clock);
}

}  // namespace vcx::vclock
