#include "lock_deposition.h"

#include <algorithm>

#include "vcx/call_program.h"

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
// Order

void LockDeposition::on_acquire(Rank src, const P2PHeader& h) {
  Lock& l = locks_[h.queue_a];
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
    l.waiting.push_back(Request{src, h.seq, shared, h.flags});
    recall_leases(h.queue_a, l);
  }
}

// Another acquisition waits: holders that kept the lock as a lease give it
// back once their applications released it.
void LockDeposition::recall_leases(std::uint64_t resource, Lock& l) {
  for (const HoldingId& h : l.leased)
    out_.send_p2p(h.rank, MsgType::Recall, 0, QueueId{resource, 0}, h.number, nullptr);
  l.leased.clear();
}

void LockDeposition::grant(Rank to, std::uint64_t resource, std::uint64_t number,
                           std::uint16_t flags, Lock& l) {
  const bool shared = (flags & kResourceShared) != 0;
  const HoldingId self_holding{to, number};
  // A holder may keep the lock as a lease when it asked for one and nobody
  // else waits; it is recalled as soon as somebody does.
  const bool lease = (flags & kResourceLeasable) && l.waiting.empty() &&
                     !(flags & (kResourceDeposit | kResourceFetch));
  if (lease) l.leased.push_back(self_holding);
  out_.send_p2p(to, MsgType::Grant, (flags & kOrderFlags) | (lease ? kResourceLeasable : 0),
                QueueId{resource, 0}, number, nullptr);

  // The releases this grant merges: what arrived of them, and what is to come.
  PooledClock c = pool_.take_zeroed();
  std::vector<HoldingId> needs;
  // A deposit learns nothing from earlier deposits: they are not ordered
  // before it.
  if (!(flags & kResourceDeposit)) {
    if (l.exclusive_release) c.merge(l.exclusive_release.view());
    needs = l.exclusive_pending;
    if (!shared) {
      if (l.shared_releases) c.merge(l.shared_releases.view());
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
    l.exclusive_release.reset();
    l.shared_releases.reset();
    l.exclusive_pending.assign(1, self_holding);
    l.shared_pending.clear();
  }

  if (needs.empty())
    out_.send_p2p(to, MsgType::GrantClock, flags & kResourceShared, QueueId{resource, 0}, number,
                  c.data());
  else
    l.grants.push_back(PendingGrant{to, number, flags, std::move(c), std::move(needs)});
}

void LockDeposition::grant_waiting(std::uint64_t resource, Lock& l) {
  if (l.exclusive_held || l.waiting.empty()) return;
  // Only exclusive requests wait while no exclusive holder exists; the first
  // of them gets the lock once the shared holders are gone.
  if (l.shared_holders == 0) {
    const Request r = l.waiting.front();
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

LockDeposition::Lock& LockDeposition::existing(std::uint64_t resource) {
  auto it = locks_.find(resource);
  if (it == locks_.end()) out_.fatal("vclock: a release of a lock never acquired");
  return it->second;
}

void LockDeposition::on_release(Rank src, const P2PHeader& h) {
  Lock& l = existing(h.queue_a);
  if (h.flags & kResourceShared) {
    if (l.shared_holders == 0) out_.fatal("vclock: a shared release without a holder");
    --l.shared_holders;
  } else {
    if (!l.exclusive_held) out_.fatal("vclock: an exclusive release without a holder");
    l.exclusive_held = false;
  }
  // A lease given back unasked (its object was freed).
  erase_one(l.leased, HoldingId{src, h.seq});
  grant_waiting(h.queue_a, l);
  maybe_free(h.queue_a);
}

// ---------------------------------------------------------------------------
// Clocks

void LockDeposition::on_release_clock(Rank src, const P2PHeader& h, PooledClock released) {
  Lock& l = existing(h.queue_a);
  const HoldingId holding{src, h.seq};

  for (auto g = l.grants.begin(); g != l.grants.end();) {
    if (!erase_one(g->needs, holding)) {
      ++g;
      continue;
    }
    g->partial.merge(released.view());
    if (!g->needs.empty()) {
      ++g;
      continue;
    }
    out_.send_p2p(g->to, MsgType::GrantClock, g->flags & kResourceShared, QueueId{h.queue_a, 0},
                  g->number, g->partial.data());
    g = l.grants.erase(g);
  }

  if (erase_one(l.exclusive_pending, holding)) {
    // Deposits are not ordered among themselves: keep them all (maximum).
    if ((h.flags & kResourceDeposit) && l.exclusive_release)
      l.exclusive_release.merge(released.view());
    else
      l.exclusive_release = std::move(released);
  } else if (erase_one(l.shared_pending, holding)) {
    if (!l.shared_releases) l.shared_releases = pool_.take_zeroed();
    l.shared_releases.merge(released.view());
  }
  // Otherwise superseded: a later exclusive holder's release stands for it.
  maybe_free(h.queue_a);
}

// Every acquisition of a retired resource has reached its deposition (each
// acquirer was granted before it took part in the synchronisation that
// retires it), but releases and their clocks may still be on their way:
// those free it.
void LockDeposition::retire(std::uint64_t resource) {
  auto it = locks_.find(resource);
  if (it == locks_.end()) return;
  Lock& l = it->second;
  if (!l.waiting.empty()) out_.fatal("vclock: a resource retired while acquisitions wait for it");
  l.retired = true;
  maybe_free(resource);
}

void LockDeposition::maybe_free(std::uint64_t resource) {
  auto it = locks_.find(resource);
  if (it == locks_.end()) return;
  const Lock& l = it->second;
  if (!l.retired || l.exclusive_held || l.shared_holders != 0 || !l.waiting.empty() ||
      !l.grants.empty() || !l.exclusive_pending.empty() || !l.shared_pending.empty())
    return;
  locks_.erase(it);
}

}  // namespace vcx::vclock
