// One-sided communication (docs/clock-rules.md, "One-sided communication"):
// fence and free are all-to-all on the window's group; post/start/complete/
// wait are point-to-point signals on two queues per window (paper 001,
// R3/R4); locks are resources deposited at the target.
#include <algorithm>
#include <string>

#include "event_payload.h"
#include "mpi_translator.h"

namespace vcx::mpi {
namespace {

// Above every MPI tag and the neighbourhood queue.
constexpr std::uint64_t kPostQueue = std::uint64_t{1} << 41;
constexpr std::uint64_t kCompleteQueue = (std::uint64_t{1} << 41) + 1;

std::uint64_t lock_id(GroupId win, Rank target) { return hash_combine(win.value, target.value); }

}  // namespace

MpiTranslator::WinData& MpiTranslator::win(std::uint64_t handle) {
  auto it = windows_.find(handle);
  if (it == windows_.end())
    host_.fatal("mpi: rank " + std::to_string(self_.value) + " used window handle " +
                std::to_string(handle) + " that vcx did not see being created");
  return *it->second;
}

void MpiTranslator::on_win_create(const WinCreateEvent& e, ExchangeControl& ctl) {
  // Windows are made collectively over their communicator, like
  // communicators, and numbered in the same sequence.
  const CommPtr& c = comm(e.comm);
  const std::uint64_t n = ++c->constructions;
  auto w = std::make_shared<WinData>();
  w->members = c->members;
  const Rank lowest = *std::min_element(w->members.begin(), w->members.end());
  w->id = GroupId{hash_combine(derived_comm_id(c->id, n, lowest).value, 0x57494e44ULL)};
  ctl.register_group(w->id, w->members);
  windows_[e.win] = std::move(w);
}

void MpiTranslator::on_win_group(Family f, const std::uint8_t* payload, std::size_t size,
                                 ExchangeControl& ctl, CallProgram& out) {
  WinGroupEvent e{};
  if (!read_array(payload, size, 0, 1, &e)) host_.fatal("mpi: short window event");
  std::vector<std::int32_t> ranks(e.count);
  if (!read_array(payload, size, sizeof e, ranks.size(), ranks.data()))
    host_.fatal("mpi: truncated window event");
  WinData& w = win(e.win);
  std::vector<Rank> group;
  for (const std::int32_t r : ranks) {
    if (r < 0 || static_cast<std::uint32_t>(r) >= world_size_)
      host_.fatal("mpi: a window group names world rank " + std::to_string(r));
    group.push_back(Rank{static_cast<std::uint32_t>(r)});
  }
  if (!group.empty()) out.mark_clocked();
  if (f == Family::WinPost) {
    // Exposure epoch: tell each origin it may access.
    const QueueId q{w.id.value, kPostQueue};
    for (const Rank o : group) {
      Op op;
      op.kind = OpKind::Signal;
      op.peer = o;
      op.queue = q;
      op.value = ctl.reserve_send(o, q).seq;
      out.push(op);
    }
    w.exposure = std::move(group);
    return;
  }
  // Access epoch: wait for each target's post.
  const QueueId q{w.id.value, kPostQueue};
  for (const Rank t : group) {
    const ReceiveToken tok = ctl.new_receive(false);
    ctl.bind_receive(tok, t, q);
    Op op;
    op.kind = OpKind::Wait;
    op.value = tok.value;
    out.push(op);
  }
  w.access = std::move(group);
}

void MpiTranslator::on_win(Family f, const WinEvent& e, ExchangeControl& ctl, CallProgram& out) {
  WinData& w = win(e.win);
  auto acquire = [&](Rank target, bool shared, std::uint16_t lease_flags) {
    Op op;
    op.kind = OpKind::Acquire;
    op.flags = static_cast<std::uint16_t>((shared ? kResourceShared : 0) | lease_flags);
    op.peer = target;
    op.queue = QueueId{lock_id(w.id, target), 0};
    // The application names a lock it may lease by window handle and
    // target rank in the window.
    op.lease_object = e.win;
    op.lease_target = static_cast<std::uint32_t>(e.rank);
    out.push(op);
  };
  auto release = [&](Rank target, bool shared, std::uint16_t lease_flags) {
    Op op;
    op.kind = OpKind::Release;
    op.flags = static_cast<std::uint16_t>((shared ? kResourceShared : 0) | lease_flags);
    op.peer = target;
    op.queue = QueueId{lock_id(w.id, target), 0};
    out.push(op);
  };
  switch (f) {
    case Family::WinFence:
    case Family::WinFree: {
      out.mark_clocked();
      Op op;
      op.kind = OpKind::CollectiveContribute;
      op.flags = kCollectiveBlocking;
      op.collective = CollectiveRef{w.id, ++w.collectives, CollectiveKind::AllToAll, Rank{}};
      out.push(op);
      op.kind = OpKind::CollectiveComplete;
      op.flags = 0;
      out.push(op);
      if (f == Family::WinFree) {
        // No lock on this window is acquired again: its state here can go,
        // and so can this process's leases of its locks.
        op.kind = OpKind::Retire;
        op.queue = QueueId{lock_id(w.id, self_), 0};
        out.push(op);
        Op end;
        end.kind = OpKind::EndLeases;
        end.lease_object = e.win;
        out.push(end);
        windows_.erase(e.win);
      }
      return;
    }
    case Family::WinComplete: {
      const QueueId q{w.id.value, kCompleteQueue};
      if (!w.access.empty()) out.mark_clocked();
      for (const Rank t : w.access) {
        Op op;
        op.kind = OpKind::Signal;
        op.peer = t;
        op.queue = q;
        op.value = ctl.reserve_send(t, q).seq;
        out.push(op);
      }
      w.access.clear();
      return;
    }
    case Family::WinWait: {
      // An MPI_Win_test that returned false completed nothing.
      if (out.call() == static_cast<std::uint16_t>(Call::Win_test) && e.arg == 0)
        return;
      const QueueId q{w.id.value, kCompleteQueue};
      if (!w.exposure.empty()) out.mark_clocked();
      for (const Rank o : w.exposure) {
        const ReceiveToken tok = ctl.new_receive(false);
        ctl.bind_receive(tok, o, q);
        Op op;
        op.kind = OpKind::Wait;
        op.value = tok.value;
        out.push(op);
      }
      w.exposure.clear();
      return;
    }
    // A lock taken with MPI_MODE_NOCHECK is no lock in MPI: it orders
    // nothing and waits for nothing, so it maps to nothing, and so does its
    // unlock (the program synchronises by other means; clock-rules.md).
    case Family::WinLock: {
      const Rank target = world_of(w.members, e.rank);
      if (e.arg & kLockNoCheck) {
        w.held_nocheck.insert(target.value);
        return;
      }
      const bool shared = (e.arg & kLockTypeMask) == kLockShared;
      out.mark_clocked();
      // A single lock may be kept as a lease; one taken under the lease
      // asked nobody.
      acquire(target, shared,
              static_cast<std::uint16_t>((e.arg & kLockLeased) ? kResourceLeased : kResourceLeasable));
      w.held[target.value] = shared;
      return;
    }
    case Family::WinUnlock: {
      const Rank target = world_of(w.members, e.rank);
      if (w.held_nocheck.erase(target.value) > 0) return;
      auto it = w.held.find(target.value);
      if (it == w.held.end()) host_.fatal("mpi: MPI_Win_unlock without MPI_Win_lock");
      out.mark_clocked();
      std::uint16_t lease_flags = 0;
      if (e.arg & kLockLeased) lease_flags |= kResourceLeased;
      if (e.arg & kLockLeaseEnded) lease_flags |= kResourceLeaseEnd;
      release(target, it->second, lease_flags);
      w.held.erase(it);
      return;
    }
    case Family::WinLockAll:
      if (e.arg & kLockNoCheck) {
        w.all_nocheck = true;
        return;
      }
      out.mark_clocked();
      for (const Rank t : w.members) acquire(t, true, 0);
      return;
    case Family::WinUnlockAll:
      if (w.all_nocheck) {
        w.all_nocheck = false;
        return;
      }
      out.mark_clocked();
      for (const Rank t : w.members) release(t, true, 0);
      return;
    default:
      host_.fatal("mpi: unexpected window event");
  }
}

}  // namespace vcx::mpi
