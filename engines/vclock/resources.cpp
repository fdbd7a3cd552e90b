// Resource primitives of the vclock engine: locks held at a deposition.
//
// Order and clocks travel separately. As soon as the tool reads an
// acquisition from its application it asks the deposition for the lock
// (Acquire), and as soon as it reads a release it hands the lock back
// (Release); the deposition grants exclusive acquisitions in arrival order
// and shared ones whenever no exclusive holder exists, and says so at once
// (Grant). The application calls MPI's lock only after that grant and
// releases only after MPI's unlock returned, so MPI's order is the one the
// deposition decided, whatever the timing of tool messages, and it does not
// depend on how far the engines have got: an engine that waits for its
// application (a wildcard receive still pending) cannot hold up the order.
//
// The clocks follow when the engines reach the calls: a release sends the
// releaser's clock (ReleaseClock), and each grant's clock (GrantClock) is
// sent once every release ordered before it that it merges has arrived. An
// exclusive grant merges the last exclusive release and the shared releases
// since (every earlier release, transitively), a shared grant the first.
//
// Annotated resources (vcx_annotate_resource_*) use the same state: a
// deposit is granted at once and holds nothing, merges nothing, and its
// release adds its clock to the exclusive one (kResourceDeposit); a fetch is
// a shared acquisition that holds nothing and merges every deposit ordered
// before it (kResourceFetch). The application returns from a deposit only
// once the deposition registered it, so a fetch that follows it in real time
// merges it.
#include <algorithm>
#include <cstring>

#include <spdlog/spdlog.h>

#include "vclock_engine.h"

namespace vcx::vclock {

namespace {

constexpr std::uint16_t kOrderFlags = kResourceShared | kResourceDeposit | kResourceFetch;

template <class T>
bool erase_one(std::vector<T>& v, const T& x) {
  auto it = std::find(v.begin(), v.end(), x);
  if (it == v.end()) return false;
  v.erase(it);
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------
// The requester

void VclockEngine::request_resources(std::uint64_t event_seq, std::size_t first) {
  std::uint32_t requested = 0;
  for (std::size_t i = first; i < ops_.size(); ++i) {
    Op& op = ops_[i];
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
        if (!l) host_.fatal("vclock: a lock taken under a lease this tool did not give");
        op.value = l->number;
        held_[lock] = op.value;
        ++leased_acquisitions_;
        continue;
      }
      op.value = ++acquisitions_;
      OrderWait w{AckKey{lock, op.value}, event_seq};
      w.flags = op.flags & kOrderFlags;
      if ((op.flags & kResourceLeasable) && host_.app_leases()) {
        w.flags |= kResourceLeasable;
        Lease l;
        l.lock = lock;
        l.number = op.value;
        l.object = op.lease_object;
        l.target = op.lease_target;
        l.flags = op.flags & kResourceShared;
        leases_.push_back(l);
      }
      w.requested = requested == 0;
      if (w.requested) send_p2p(op.peer, MsgType::Acquire, w.flags, lock.queue, op.value, nullptr);
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
                          [&](const OrderWait& x) { return x.key == AckKey{lock, op.value}; });
    if (w != order_waits_.end()) {
      w->release_read = true;
      w->release_flags = op.flags & kResourceShared;
      continue;
    }
    send_p2p(op.peer, MsgType::Release, op.flags & kResourceShared, lock.queue, op.value, nullptr);
  }
  if (requested > 0) gates_.push_back(OrderGate{event_seq, requested});
}

void VclockEngine::on_grant(Rank src, const P2PHeader& h) {
  const AckKey key{PeerQueue{src, QueueId{h.queue_a, 0}}, h.seq};
  auto it = std::find_if(order_waits_.begin(), order_waits_.end(),
                         [&](const OrderWait& w) { return w.key == key; });
  if (it == order_waits_.end()) host_.fatal("vclock: a grant for no acquisition");
  const std::uint64_t seq = it->event_seq;
  if (Lease* l = find_lease(key.key, h.seq); l && l->phase == Lease::Phase::Requested)
    lease_granted(*l, !it->release_read && (h.flags & kResourceLeasable));
  if (it->release_read)
    send_p2p(src, MsgType::Release, it->release_flags, key.key.queue, h.seq, nullptr);
  it = order_waits_.erase(it);
  // The call's next acquisition, if any, follows the one granted.
  for (; it != order_waits_.end(); ++it)
    if (it->event_seq == seq && !it->requested) {
      it->requested = true;
      send_p2p(it->key.key.peer, MsgType::Acquire, it->flags, it->key.key.queue, it->key.seq,
               nullptr);
      break;
    }
  for (OrderGate& g : gates_)
    if (g.event_seq == seq) --g.outstanding;
  while (!gates_.empty() && gates_.front().outstanding == 0) gates_.pop_front();
}

std::uint64_t VclockEngine::replies_allowed_through() const {
  return gates_.empty() ? ~std::uint64_t{0} : gates_.front().event_seq - 1;
}

bool VclockEngine::exec_acquire(const Op& op) {
  // Under a lease: every release before it was this process's own.
  if (op.flags & kResourceLeased) {
    peers_.push_back(op.peer);
    return true;
  }
  // The order grant comes first on the same pair; waiting for it too keeps
  // a reply from overtaking it whatever the transport.
  if (!gates_.empty() && gates_.front().event_seq <= programs_.front().event_seq) return false;
  auto it = grants_.find(AckKey{PeerQueue{op.peer, QueueId{op.queue.a, 0}}, op.value});
  if (it == grants_.end()) return false;
  clock_.merge(pool_.view(it->second));
  pool_.release(it->second);
  grants_.erase(it);
  peers_.push_back(op.peer);
  return true;
}

void VclockEngine::exec_release(const Op& op) {
  if (Lease* l = find_lease(PeerQueue{op.peer, QueueId{op.queue.a, 0}}, op.value);
      l && l->phase >= Lease::Phase::Published) {
    lease_release_executed(*l);
    peers_.push_back(op.peer);
    return;
  }
  send_p2p(op.peer, MsgType::ReleaseClock, op.flags & (kResourceShared | kResourceDeposit),
           QueueId{op.queue.a, 0}, op.value, clock_.view().data());
  peers_.push_back(op.peer);
}

void VclockEngine::on_grant_clock(Rank src, const P2PHeader& h, ClockSpan clock) {
  grants_[AckKey{PeerQueue{src, QueueId{h.queue_a, 0}}, h.seq}] =
      const_cast<ClockValue*>(clock.data());
}

// ---------------------------------------------------------------------------
// The deposition: order

void VclockEngine::on_acquire(Rank src, const P2PHeader& h) {
  LockState& l = locks_[h.queue_a];
  const bool shared = (h.flags & kResourceShared) != 0;
  // Shared requests are granted whenever no exclusive holder exists, even
  // past waiting exclusive ones: a process holding some shared locks (an
  // MPI_Win_lock_all in progress) must not wait behind an exclusive request
  // that waits for it, or the two would deadlock where MPI's lazy locks do
  // not. Exclusive requests are served first come, first served. Deposits
  // hold nothing and are granted at once.
  const bool free_now = (h.flags & kResourceDeposit) ||
                        (shared ? !l.exclusive_held
                                : !l.exclusive_held && l.shared_holders == 0 && l.waiting.empty());
  if (free_now) {
    grant(src, h.queue_a, h.seq, h.flags, l);
  } else {
    l.waiting.push_back(LockState::Request{src, h.seq, shared, h.flags});
    recall_leases(h.queue_a, l);
  }
}

// Another acquisition waits: holders that kept the lock as a lease give it
// back once their applications released it.
void VclockEngine::recall_leases(std::uint64_t resource, LockState& l) {
  for (const HoldingId& h : l.leased)
    send_p2p(h.rank, MsgType::Recall, 0, QueueId{resource, 0}, h.number, nullptr);
  l.leased.clear();
}

void VclockEngine::grant(Rank to, std::uint64_t resource, std::uint64_t number,
                         std::uint16_t flags, LockState& l) {
  const bool shared = (flags & kResourceShared) != 0;
  const HoldingId self_holding{to, number};
  // A holder may keep the lock as a lease when it asked for one and nobody
  // else waits; it is recalled as soon as somebody does.
  const bool lease = (flags & kResourceLeasable) && l.waiting.empty() &&
                     !(flags & (kResourceDeposit | kResourceFetch));
  if (lease) l.leased.push_back(self_holding);
  send_p2p(to, MsgType::Grant, (flags & kOrderFlags) | (lease ? kResourceLeasable : 0),
           QueueId{resource, 0}, number, nullptr);

  // The releases this grant merges: what arrived of them, and what is to come.
  ClockValue* c = zeroed_clock();
  std::vector<HoldingId> needs;
  // A deposit learns nothing from earlier deposits: they are not ordered
  // before it.
  if (!(flags & kResourceDeposit)) {
    if (l.exclusive_release) clock_merge(pool_.view(c), pool_.view(l.exclusive_release));
    needs = l.exclusive_pending;
    if (!shared) {
      if (l.shared_releases) clock_merge(pool_.view(c), pool_.view(l.shared_releases));
      needs.insert(needs.end(), l.shared_pending.begin(), l.shared_pending.end());
    }
  }

  if (flags & kResourceFetch) {
    // Holds nothing: no release follows.
  } else if (flags & kResourceDeposit) {
    l.exclusive_pending.push_back(self_holding);
  } else if (shared) {
    ++l.shared_holders;
    l.shared_pending.push_back(self_holding);
  } else {
    // This holder merges every earlier release, so its release will stand
    // for all of them.
    l.exclusive_held = true;
    pool_.release(l.exclusive_release);
    pool_.release(l.shared_releases);
    l.exclusive_release = l.shared_releases = nullptr;
    l.exclusive_pending.assign(1, self_holding);
    l.shared_pending.clear();
  }

  if (needs.empty()) {
    send_p2p(to, MsgType::GrantClock, flags & kResourceShared, QueueId{resource, 0}, number, c);
    pool_.release(c);
  } else {
    l.grants.push_back(LockState::PendingGrant{to, number, flags, c, std::move(needs)});
  }
}

void VclockEngine::grant_waiting(std::uint64_t resource, LockState& l) {
  if (l.exclusive_held || l.waiting.empty()) return;
  // Only exclusive requests wait while no exclusive holder exists; the first
  // of them gets the lock once the shared holders are gone.
  if (l.shared_holders == 0) {
    const LockState::Request r = l.waiting.front();
    l.waiting.pop_front();
    grant(r.requester, resource, r.number, r.flags, l);
    if (!r.shared) return;
  }
  // After an exclusive release, every shared request that waited behind it.
  for (auto it = l.waiting.begin(); it != l.waiting.end();) {
    if (!it->shared) {
      ++it;
      continue;
    }
    grant(it->requester, resource, it->number, it->flags, l);
    it = l.waiting.erase(it);
  }
}

void VclockEngine::on_release(Rank src, const P2PHeader& h) {
  auto it = locks_.find(h.queue_a);
  if (it == locks_.end()) host_.fatal("vclock: a release of a lock never acquired");
  LockState& l = it->second;
  if (h.flags & kResourceShared) {
    if (l.shared_holders == 0) host_.fatal("vclock: a shared release without a holder");
    --l.shared_holders;
  } else {
    if (!l.exclusive_held) host_.fatal("vclock: an exclusive release without a holder");
    l.exclusive_held = false;
  }
  // A lease given back unasked (its object was freed).
  if (auto it2 = std::find(l.leased.begin(), l.leased.end(), HoldingId{src, h.seq});
      it2 != l.leased.end())
    l.leased.erase(it2);
  grant_waiting(h.queue_a, l);
  maybe_free_lock(h.queue_a);
}

// ---------------------------------------------------------------------------
// The deposition: clocks

void VclockEngine::on_release_clock(Rank src, const P2PHeader& h, ClockSpan clock) {
  auto* released = const_cast<ClockValue*>(clock.data());
  auto it = locks_.find(h.queue_a);
  if (it == locks_.end()) host_.fatal("vclock: a release of a lock never acquired");
  LockState& l = it->second;
  const HoldingId holding{src, h.seq};

  for (auto g = l.grants.begin(); g != l.grants.end();) {
    if (!erase_one(g->needs, holding)) {
      ++g;
      continue;
    }
    clock_merge(pool_.view(g->partial), clock);
    if (!g->needs.empty()) {
      ++g;
      continue;
    }
    send_p2p(g->to, MsgType::GrantClock, g->flags & kResourceShared, QueueId{h.queue_a, 0},
             g->number, g->partial);
    pool_.release(g->partial);
    g = l.grants.erase(g);
  }

  if (erase_one(l.exclusive_pending, holding)) {
    if ((h.flags & kResourceDeposit) && l.exclusive_release) {
      // Deposits are not ordered among themselves: keep them all (maximum).
      clock_merge(pool_.view(l.exclusive_release), clock);
      pool_.release(released);
    } else {
      pool_.release(l.exclusive_release);
      l.exclusive_release = released;
    }
  } else if (erase_one(l.shared_pending, holding)) {
    if (!l.shared_releases) l.shared_releases = zeroed_clock();
    clock_merge(pool_.view(l.shared_releases), clock);
    pool_.release(released);
  } else {
    // Superseded: a later exclusive holder's release will stand for it.
    pool_.release(released);
  }
  maybe_free_lock(h.queue_a);
}

// Every acquisition of a retired resource has reached its deposition (each
// acquirer was granted before it took part in the synchronisation that
// retires it), but releases and their clocks may still be on their way:
// those free it.
void VclockEngine::retire_resource(std::uint64_t resource) {
  auto it = locks_.find(resource);
  if (it == locks_.end()) return;
  LockState& l = it->second;
  if (!l.waiting.empty()) host_.fatal("vclock: a resource retired while acquisitions wait for it");
  l.retired = true;
  maybe_free_lock(resource);
}

void VclockEngine::maybe_free_lock(std::uint64_t resource) {
  auto it = locks_.find(resource);
  if (it == locks_.end()) return;
  LockState& l = it->second;
  if (!l.retired || l.exclusive_held || l.shared_holders != 0 || !l.waiting.empty() ||
      !l.grants.empty() || !l.exclusive_pending.empty() || !l.shared_pending.empty())
    return;
  free_lock(l);
  locks_.erase(it);
}

void VclockEngine::free_lock(LockState& l) {
  pool_.release(l.exclusive_release);
  pool_.release(l.shared_releases);
  l.exclusive_release = l.shared_releases = nullptr;
  for (auto& g : l.grants) pool_.release(g.partial);
  l.grants.clear();
}

}  // namespace vcx::vclock
