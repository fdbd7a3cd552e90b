// Leases, the holder's side (vcx/channel/lease_table.h).
//
// A grant that allows a lease (nobody else waited for the lock) need not end
// at the application's release: the engine publishes the holding in the
// application's lease table before the application learns of the grant,
// the release leaves the lease idle instead of handing the lock back, and
// the application's next acquisition of the same lock takes it without
// asking.
// To the deposition the lease is one holding that lasts until it is recalled;
// its release clock is the clock at the last release made under it, which
// holds every earlier one, so every later holder merges what the rules say.
// An acquisition under the lease merges nothing: while the lease stands no
// other process can hold the lock exclusively (an exclusive lease: nobody
// else holds it at all; a shared one counts as a shared holder, so only
// shared holdings come in between, which a shared acquisition does not
// merge), and the holder's own releases are in its clock already.
//
// The order of holdings stays the deposition's: the lock goes back (Release)
// only once the application's last release under the lease has returned --
// when the tool takes an idle lease back, or when the application ends a
// recalled one at its release.
#include <algorithm>

#include "vcx/channel/lease_table.h"
#include "lock_requests.h"

namespace vcx::vclock {

LockRequests::Lease* LockRequests::find_lease(const PeerQueue& lock, std::uint64_t number) {
  for (Lease& l : leases_)
    if (l.lock == lock && l.number == number) return &l;
  return nullptr;
}

// The lease the application may be taking the lock under: the newest
// published one (an older one of the same lock may still wait for its last
// releases to run, but the application is past it).
LockRequests::Lease* LockRequests::find_live_lease(const PeerQueue& lock) {
  for (auto it = leases_.rbegin(); it != leases_.rend(); ++it)
    if (it->lock == lock && it->phase >= Lease::Phase::Published) return &*it;
  return nullptr;
}

// The deposition granted the holding: with a lease, if it allowed one and
// the table has room. Published before the application learns of the grant.
void LockRequests::lease_granted(Lease& l, bool lease_allowed) {
  channel::LeaseTable* table = lease_table_();
  const int slot = lease_allowed && table ? channel::lease_publish(*table, l.object, l.target, l.flags)
                                          : -1;
  if (slot < 0) {
    finish_lease(l);
    return;
  }
  l.slot = slot;
  l.phase = Lease::Phase::Published;
}

// A release read from the application; true when it hands nothing back.
bool LockRequests::lease_release_read(const Op& op, Lease& l) {
  switch (l.phase) {
    case Lease::Phase::Requested:
      // Released before the grant came (a program fed to the engine at
      // once): no lease.
      finish_lease(l);
      return false;
    case Lease::Phase::Published:
    case Lease::Phase::Recalling:
      // Once published, the application's table has the holding: every
      // release of it says so.
      if (!(op.flags & kResourceLeased))
        out_.fatal("vclock: a release of a leased lock that did not come through its lease");
      ++l.releases_read;
      if (op.flags & kResourceLeaseEnd) end_lease(l, l.releases_read);
      return true;
    case Lease::Phase::Ended:
      // Released before the tool took the lease back: counted in its uses.
      if (!(op.flags & kResourceLeased) || ++l.releases_read > l.releases_total)
        out_.fatal("vclock: more releases under a lease than its application made");
      return true;
  }
  return true;
}

// A release under the lease ran; true when the lease is over.
bool LockRequests::lease_release_executed(Lease& l, ClockSpan clock) {
  ++l.releases_executed;
  if (l.phase == Lease::Phase::Ended && l.releases_executed > l.releases_total)
    out_.fatal("vclock: more releases under a lease than its application made");
  if (l.phase == Lease::Phase::Ended && l.releases_executed == l.releases_total) {
    out_.send_p2p(l.lock.peer, MsgType::ReleaseClock, l.flags, l.lock.queue, l.number,
                  clock.data());
    finish_lease(l);
    return true;
  }
  if (!l.last_release) l.last_release = pool_.take();
  l.last_release.assign(clock);
  return false;
}

void LockRequests::take_lease(Lease& l) {
  std::uint64_t uses = 0;
  if (channel::lease_take(*lease_table_(), l.slot, &uses) == channel::LeaseTake::Recalling) {
    l.phase = Lease::Phase::Recalling;
    return;
  }
  // The first holding and one per acquisition under the lease.
  end_lease(l, uses + 1);
}

// The application is done with the lease after `releases_total` releases:
// the lock goes back now, its clock once the last of them ran.
void LockRequests::end_lease(Lease& l, std::uint64_t releases_total) {
  if (l.releases_read > releases_total || l.releases_executed > releases_total)
    out_.fatal("vclock: a lease ended after fewer releases than its tool saw");
  l.phase = Lease::Phase::Ended;
  l.releases_total = releases_total;
  out_.send_p2p(l.lock.peer, MsgType::Release, l.flags, l.lock.queue, l.number, nullptr);
  if (l.releases_executed == releases_total) {
    out_.send_p2p(l.lock.peer, MsgType::ReleaseClock, l.flags, l.lock.queue, l.number,
                  l.last_release.data());
    finish_lease(l);
  }
}

void LockRequests::finish_lease(Lease& l) {
  if (l.slot >= 0) channel::lease_free(*lease_table_(), l.slot);
  const auto i = static_cast<std::size_t>(&l - leases_.data());
  leases_.erase(leases_.begin() + static_cast<std::ptrdiff_t>(i));
}

void LockRequests::on_recall(Rank src, const P2PHeader& h) {
  Lease* l = find_lease(PeerQueue{src, QueueId{h.queue_a, 0}}, h.seq);
  // Handed back already, or never published (a grant comes before its recall).
  if (l && l->phase == Lease::Phase::Published) take_lease(*l);
}

// The application frees the object (it gave up its idle leases of it first).
void LockRequests::end_leases_of(std::uint64_t object) {
  for (std::size_t i = 0; i < leases_.size();) {
    Lease& l = leases_[i];
    if (l.object != object) {
      ++i;
      continue;
    }
    const std::size_t before = leases_.size();
    if (l.phase == Lease::Phase::Published) take_lease(l);
    if (leases_.size() == before) ++i;
  }
}

}  // namespace vcx::vclock
