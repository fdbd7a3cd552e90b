// The deposition of locks: the resources (MPI window locks, annotated
// resources) whose holdings this tool orders, and the clocks each grant
// merges (docs/clock-rules.md, "Resources").
//
// Order and clocks travel separately. The requester's tool asks for the lock
// as soon as it reads the acquisition (Acquire) and hands it back as soon as
// it reads the release (Release); exclusive requests are granted in arrival
// order, shared ones whenever no exclusive holder exists, at once (Grant).
// The application takes the lock only after that grant, so the order of the
// holdings is the one decided here, whatever the timing of tool messages.
//
// The clocks follow when the engines reach the calls: a release sends the
// releaser's clock (ReleaseClock), and a grant's clock (GrantClock) goes out
// once every release ordered before it that it merges has arrived. An
// exclusive grant merges the last exclusive release and the shared releases
// since (every earlier release, transitively), a shared grant the first.
// A deposit (kResourceDeposit) is granted at once, holds nothing and merges
// nothing; its release adds its clock to the exclusive one. A fetch
// (kResourceFetch) is a shared acquisition that holds nothing. A resource is
// used either with deposits and fetches (OpenSHMEM locks, annotated
// resources) or with exclusive and shared holdings (MPI window locks), never
// both: an exclusive release replaces the clock the deposits accumulated.
//
// A grant may let its holder keep the lock as a lease (kResourceLeasable)
// when nobody else waits; it is recalled (Recall) as soon as somebody does.
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "clock_pool.h"
#include "messages.h"
#include "outbox.h"

namespace vcx::vclock {

class LockDeposition {
 public:
  LockDeposition(ClockPool& pool, Outbox& out) : pool_(pool), out_(out) {}

  // Acquire, Release, ReleaseClock from `src` (queue_a: the resource; seq:
  // the requester's acquisition number; flags: ResourceFlags).
  void on_acquire(Rank src, const P2PHeader& h);
  void on_release(Rank src, const P2PHeader& h);
  void on_release_clock(Rank src, const P2PHeader& h, PooledClock clock);
  // The resource is freed: it goes once its last releases are in.
  void retire(std::uint64_t resource);

  std::size_t resources() const { return locks_.size(); }

 private:
  // One holding of a lock: the requester and its acquisition number.
  struct HoldingId {
    Rank rank{};
    std::uint64_t number = 0;
    bool operator==(const HoldingId&) const = default;
  };
  struct Request {
    Rank requester;
    std::uint64_t number;
    bool shared;
    std::uint16_t flags;  // the acquisition's ResourceFlags
  };
  // A grant whose clock waits for release clocks.
  struct PendingGrant {
    Rank to;
    std::uint64_t number;
    std::uint16_t flags;
    PooledClock partial;  // the needed releases that arrived, merged
    std::vector<HoldingId> needs;
  };
  struct Lock {
    // Order.
    std::uint32_t shared_holders = 0;
    bool exclusive_held = false;
    std::deque<Request> waiting;
    bool retired = false;  // freed once its holders released it
    // Clocks every later grant merges: the last exclusive holder's release
    // (for deposits: every deposit's), and the shared releases since, each
    // as far as arrived; the holdings whose release clocks are still to come.
    PooledClock exclusive_release;
    PooledClock shared_releases;
    std::vector<HoldingId> exclusive_pending;
    std::vector<HoldingId> shared_pending;
    std::vector<PendingGrant> grants;
    // Holders that may keep the lock as a lease and were not recalled yet.
    std::vector<HoldingId> leased;
  };

  void grant(Rank to, std::uint64_t resource, std::uint64_t number, std::uint16_t flags, Lock& l);
  void grant_waiting(std::uint64_t resource, Lock& l);
  void recall_leases(std::uint64_t resource, Lock& l);
  Lock& existing(std::uint64_t resource);
  void maybe_free(std::uint64_t resource);

  ClockPool& pool_;
  Outbox& out_;
  std::unordered_map<std::uint64_t, Lock> locks_;
};

}  // namespace vcx::vclock
