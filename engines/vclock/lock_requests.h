// Locks, the requester's side: this process's acquisitions and releases of
// locks held at depositions (lock_deposition.h), and its leases.
//
// Order and clocks travel separately. As soon as the tool reads an
// acquisition it asks the deposition (Acquire), and as soon as it reads a
// release it hands the lock back (Release); the application takes the lock
// only after the deposition's Grant, so the order of holdings is the
// deposition's, whatever the engines' progress: an engine that waits for
// its application (a wildcard receive still pending) cannot hold it up. The
// clocks follow when the engine reaches the calls: the release sends this
// process's clock (ReleaseClock), the acquisition merges the grant's
// (GrantClock). The acquisitions of one call are requested one after the
// other, in the program's order (MPI_Win_lock_all: window rank order).
//
// A grant that allows a lease (nobody else waited) need not end at the
// application's release (leases.cpp): the holding is published in the
// application's lease table, its releases leave it idle, and the next
// acquisition of the same lock takes it without asking. To the deposition
// the lease is one holding until it is recalled; its release clock is the
// clock at the last release made under it.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "clock_pool.h"
#include "messages.h"
#include "outbox.h"
#include "peer_queue.h"
#include "vcx/call_program.h"
#include "vcx/channel/lease_table.h"
#include "vcx/vector_clock.h"

namespace vcx::vclock {

class LockRequests {
 public:
  // `lease_table`: the application's lease table, or null (no leases).
  using LeaseTableOf = std::function<channel::LeaseTable*()>;
  LockRequests(ClockPool& pool, Outbox& out, LeaseTableOf lease_table)
      : pool_(pool), out_(out), lease_table_(std::move(lease_table)) {}

  // As the program `event_seq` at ops[first..] is queued: numbers its
  // acquisitions and releases (Op::value), asks for and hands back its
  // locks, ends the leases of freed objects. Returns how many grants the
  // program now waits for before any reply may pass it.
  std::uint32_t request(std::deque<Op>& ops, std::size_t first, std::uint64_t event_seq);
  // Grant: returns the program it was for (one of its grants is in).
  std::uint64_t on_grant(Rank src, const P2PHeader& h);
  void on_grant_clock(Rank src, const P2PHeader& h, PooledClock clock);
  void on_recall(Rank src, const P2PHeader& h);

  // The engine reached an Acquire whose program's grants are all in:
  // merges the grant's clock (false: not in yet).
  bool acquire(const Op& op, VectorClock& clock);
  // The engine reached a Release: this process's clock goes to the
  // deposition (or stays with the lease).
  void release(const Op& op, ClockSpan clock);

  // The deposition whose order grant the program `event_seq` waits for.
  std::optional<Rank> waiting_for_grant(std::uint64_t event_seq) const;
  std::size_t pending_grants() const { return grants_.size(); }
  std::uint64_t leased_acquisitions() const { return leased_acquisitions_; }

 private:
  // A holding of a lock that its application may keep after releasing it
  // (vcx/channel/lease_table.h). It lives from the request until the
  // deposition has the lock back and the engine ran every release made
  // under it.
  struct Lease {
    enum class Phase : std::uint8_t {
      Requested,  // asked for a leasable grant
      Published,  // granted, in the application's table
      Recalling,  // the application holds it and gives it back at its release
      Ended,      // back at the deposition; its last release clock is to follow
    };
    PeerQueue lock{};
    std::uint64_t number = 0;  // the holding at the deposition
    std::uint64_t object = 0;  // the application's name of the lock
    std::uint32_t target = 0;
    std::uint16_t flags = 0;   // kResourceShared of the holding
    Phase phase = Phase::Requested;
    int slot = -1;
    std::uint64_t releases_read = 0;
    std::uint64_t releases_executed = 0;
    std::uint64_t releases_total = 0;  // known once Ended
    PooledClock last_release;          // the clock at the last release run
  };
  struct OrderWait {
    QueuePosition key;  // (deposition, resource), acquisition number
    std::uint64_t event_seq;
    // The release read before the grant came (an application never does
    // that; a program fed to the engine at once may), sent after it.
    bool release_read = false;
    std::uint16_t release_flags = 0;
    // Acquisitions of one call are requested one after the other.
    bool requested = false;
    std::uint16_t flags = 0;
  };

  // Leases (leases.cpp).
  Lease* find_lease(const PeerQueue& lock, std::uint64_t number);
  Lease* find_live_lease(const PeerQueue& lock);
  void lease_granted(Lease& l, bool lease_allowed);
  // A release read from the application; true when it hands nothing back.
  bool lease_release_read(const Op& op, Lease& l);
  // A release under the lease ran; true when the lease is over.
  bool lease_release_executed(Lease& l, ClockSpan clock);
  void take_lease(Lease& l);
  void end_lease(Lease& l, std::uint64_t releases_total);
  void finish_lease(Lease& l);
  void end_leases_of(std::uint64_t object);

  ClockPool& pool_;
  Outbox& out_;
  LeaseTableOf lease_table_;
  // Grants received, by (deposition, resource, number).
  std::unordered_map<QueuePosition, PooledClock, QueuePositionHash> grants_;
  std::uint64_t acquisitions_ = 0;  // numbers this process's acquisitions
  // This process's holdings by (deposition, resource): the acquisition
  // number its release refers to.
  std::unordered_map<PeerQueue, std::uint64_t, PeerQueueHash> held_;
  std::vector<OrderWait> order_waits_;
  // One per leasable request until it is granted, then per lease until its
  // last release ran (a lock may have several ended leases while the
  // engine lags behind its application).
  std::vector<Lease> leases_;
  std::uint64_t leased_acquisitions_ = 0;
};

}  // namespace vcx::vclock
