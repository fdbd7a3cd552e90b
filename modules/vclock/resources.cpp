// Resource primitives of the vclock engine: locks held at a deposition.
//
// The deposition grants exclusive acquisitions in arrival order and shared
// ones whenever no exclusive holder exists, and keeps two clocks per lock: the last exclusive release,
// and the maximum of the shared releases since. An exclusive grant carries
// both (every earlier release, transitively), a shared grant the first.
// Because the acquirer's application calls MPI only after the grant and
// hands the lock back only after MPI's release, MPI's order is the one the
// deposition decided, whatever the timing of tool messages.
//
// Annotated resources (vcx_annotate_resource_*) use the same state: a
// deposit is an exclusive acquisition that merges nothing followed by a
// release that adds its clock to the exclusive one (kResourceDeposit); a
// fetch is a shared acquisition that holds nothing (kResourceFetch). The
// application returns from a deposit only once it was granted, so a fetch
// that follows it in real time finds it in or in progress, and waits for it.
#include <algorithm>
#include <cstring>

#include <spdlog/spdlog.h>

#include "vclock_engine.h"

namespace vcx::vclock {

bool VclockEngine::exec_acquire(const Op& op) {
  if (head_acquire_ == 0) {
    head_acquire_ = ++acquisitions_;
    send_p2p(op.peer, MsgType::Acquire,
             op.flags & (kResourceShared | kResourceDeposit | kResourceFetch), op.queue,
             head_acquire_, nullptr);
  }
  auto it = grants_.find(AckKey{PeerQueue{op.peer, op.queue}, head_acquire_});
  if (it == grants_.end()) {
    if (deferred_unbound_ > 0 && !warned_early_acquire_) {
      // The application is let go (must_not_stall) to reach a wildcard
      // receive that a synchronous sender waits on; its lock call then
      // reaches MPI before the grant.
      warned_early_acquire_ = true;
      spdlog::warn(
          "vclock: rank {} acquires a lock while a synchronous send waits for one of its "
          "wildcard receives; the application goes on before the grant, so MPI may order this "
          "lock differently from the clocks",
          self_.value);
    }
    return false;
  }
  clock_.merge(pool_.view(it->second));
  pool_.release(it->second);
  grants_.erase(it);
  head_acquire_ = 0;
  peers_.push_back(op.peer);
  return true;
}

void VclockEngine::exec_release(const Op& op) {
  send_p2p(op.peer, MsgType::Release, op.flags & (kResourceShared | kResourceDeposit), op.queue,
           0, clock_.view().data());
  peers_.push_back(op.peer);
}

void VclockEngine::on_acquire(Rank src, const P2PHeader& h) {
  LockState& l = locks_[h.queue_a];
  const bool shared = (h.flags & kResourceShared) != 0;
  // Shared requests are granted whenever no exclusive holder exists, even
  // past waiting exclusive ones: a process holding some shared locks (an
  // MPI_Win_lock_all in progress) must not wait behind an exclusive request
  // that waits for it, or the two would deadlock where MPI's lazy locks do
  // not. Exclusive requests are served first come, first served.
  const bool free_now = shared ? !l.exclusive_held
                               : !l.exclusive_held && l.shared_holders == 0 && l.waiting.empty();
  if (free_now) {
    grant(src, h.queue_a, h.seq, h.flags, l);
  } else {
    l.waiting.push_back(LockState::Request{src, h.seq, shared, h.flags});
  }
}

void VclockEngine::grant(Rank to, std::uint64_t resource, std::uint64_t number,
                         std::uint16_t flags, LockState& l) {
  const bool shared = (flags & kResourceShared) != 0;
  ClockValue* c = zeroed_clock();
  // A deposit learns nothing from earlier deposits: they are not ordered
  // before it.
  if (!(flags & kResourceDeposit)) {
    if (l.exclusive_release) clock_merge(pool_.view(c), pool_.view(l.exclusive_release));
    if (!shared && l.shared_releases) clock_merge(pool_.view(c), pool_.view(l.shared_releases));
  }
  if (flags & kResourceFetch) {
    // Holds nothing: no release follows.
  } else if (shared) {
    ++l.shared_holders;
  } else {
    l.exclusive_held = true;
  }
  send_p2p(to, MsgType::Grant, shared ? kResourceShared : 0, QueueId{resource, 0}, number, c);
  pool_.release(c);
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

void VclockEngine::on_release(Rank src, const P2PHeader& h, ClockSpan clock) {
  auto it = locks_.find(h.queue_a);
  if (it == locks_.end()) host_.fatal("vclock: a release of a lock never acquired");
  LockState& l = it->second;
  auto* released = const_cast<ClockValue*>(clock.data());
  if (h.flags & kResourceShared) {
    if (l.shared_holders == 0) host_.fatal("vclock: a shared release without a holder");
    --l.shared_holders;
    if (!l.shared_releases) l.shared_releases = zeroed_clock();
    clock_merge(pool_.view(l.shared_releases), clock);
    pool_.release(released);
  } else {
    if (!l.exclusive_held) host_.fatal("vclock: an exclusive release without a holder");
    l.exclusive_held = false;
    if (h.flags & kResourceDeposit) {
      // Deposits are not ordered among themselves: keep them all (maximum).
      if (l.exclusive_release) {
        clock_merge(pool_.view(l.exclusive_release), clock);
        pool_.release(released);
      } else {
        l.exclusive_release = released;
      }
    } else {
      // The holder merged every earlier release when it was granted, so its
      // release clock stands for all of them.
      pool_.release(l.exclusive_release);
      l.exclusive_release = released;
      pool_.release(l.shared_releases);
      l.shared_releases = nullptr;
    }
  }
  (void)src;
  grant_waiting(h.queue_a, l);
  if (l.retired && !l.exclusive_held && l.shared_holders == 0 && l.waiting.empty()) {
    free_lock(l);
    locks_.erase(it);
  }
}

// Every acquisition of a retired resource has reached its deposition (each
// acquirer was granted before it took part in the synchronisation that
// retires it), but releases may still be on their way: those free it.
void VclockEngine::retire_resource(std::uint64_t resource) {
  auto it = locks_.find(resource);
  if (it == locks_.end()) return;
  LockState& l = it->second;
  if (!l.waiting.empty()) host_.fatal("vclock: a resource retired while acquisitions wait for it");
  if (l.exclusive_held || l.shared_holders != 0) {
    l.retired = true;
    return;
  }
  free_lock(l);
  locks_.erase(it);
}

void VclockEngine::free_lock(LockState& l) {
  pool_.release(l.exclusive_release);
  pool_.release(l.shared_releases);
  l.exclusive_release = l.shared_releases = nullptr;
}

void VclockEngine::on_grant(Rank src, const P2PHeader& h, ClockSpan clock) {
  grants_[AckKey{PeerQueue{src, QueueId{h.queue_a, 0}}, h.seq}] =
      const_cast<ClockValue*>(clock.data());
}

}  // namespace vcx::vclock
