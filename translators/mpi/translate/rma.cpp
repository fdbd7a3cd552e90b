// One-sided communication (docs/clock-rules.md, "One-sided communication"):
// fence and free are all-to-all on the window's group; post/start/complete/
// wait are point-to-point signals on two queues per window (a post orders
// the start it matches, a complete the wait it matches); locks are resources
// deposited at the target.
#include <algorithm>
#include <string>

#include "event_payload.h"
#include "mpi_translator.h"

namespace vcx::mpi {
namespace {

// Above every MPI tag and the neighbourhood queue.
constexpr std::uint64_t kPostQueue = std::uint64_t{1} << 41;
constexpr std::uint64_t kCompleteQueue = (std::uint64_t{1} << 41) + 1;

}  // namespace

std::uint64_t MpiTranslator::lock_id(GroupId win, Rank target) {
  return hash_combine(win.value, target.value);
}

MpiTranslator::WinData& MpiTranslator::win(std::uint64_t handle) {
  auto it = windows_.find(handle);
  if (it == windows_.end())
    host_.fatal("mpi: rank " + std::to_string(self_.value) + " used window handle " +
                std::to_string(handle) + " that vcx did not see being created");
  return *it->second;
}

void MpiTranslator::on_win_create(Call call, const WinCreateEvent& e, ExchangeControl& ctl,
                                  CallProgram& out) {
  // Windows are made collectively over their communicator, like
  // communicators, and numbered in the same sequence.
  const CommPtr& c = comm(e.comm);
  const std::uint64_t n = ++c->constructions;
  auto w = std::make_shared<WinData>();
  w->members = c->members;
  const Rank lowest = *std::min_element(w->members.begin(), w->members.end());
  w->id = GroupId{hash_combine(derived_comm_id(c->id, n, lowest).value, 0x57494e44ULL)};
  ctl.register_group(w->id, w->members);
  if (notes_wanted()) {
    // This member's memory, which accesses name by displacement.
    const bool dynamic = call == Call::Win_create_dynamic;
    RegionNote r{};
    r.space = space_of(w->id, self_);
    r.base = dynamic ? 0 : e.base;
    r.bytes = dynamic ? 0 : e.bytes;
    r.pc = e.pc;
    r.unit = dynamic ? 1 : (e.disp_unit == 0 ? 1 : e.disp_unit);
    r.kind = dynamic ? RegionKind::MpiDynamicWindow : RegionKind::MpiWindow;
    r.ordinal = windows_made_;
    out.add_note(NoteKind::Region, r);
  }
  ++windows_made_;
  windows_[e.win] = std::move(w);
}

bool MpiTranslator::notes_wanted() {
  if (notes_wanted_ < 0) notes_wanted_ = host_.notes_wanted() ? 1 : 0;
  return notes_wanted_ == 1;
}

std::uint64_t MpiTranslator::space_of(GroupId win, Rank member) {
  return hash_combine(hash_combine(win.value, member.value), 0x4d454d4f5259ULL);
}

// A data call accesses the target range (written by puts and accumulates,
// read by gets; the accumulate family atomically) and its origin and result
// buffers here (read and written). The target side is complete when the
// operation is complete at the target (fence, complete, unlock, flush), the
// buffers when it is complete locally (also flush_local, and the request's
// completion); a fetching operation has read the target once its result is
// here, so its target side completes locally too.
void MpiTranslator::on_rma_access(Call call, const RmaAccessEvent& e, const Payload& p,
                                  CallProgram& out) {
  if (!notes_wanted()) return;
  WinData& w = win(e.win);
  const Rank target = world_of(w.members, e.target_rank);
  const bool fetching = e.kind != RmaKind::Put && e.kind != RmaKind::Accumulate;
  const bool atomic = e.kind != RmaKind::Put && e.kind != RmaKind::Get;
  auto add = [&](std::uint64_t space, std::uint64_t offset, std::uint64_t bytes, Rank owner,
                 AccessMode mode, bool is_atomic, bool local, std::int64_t byte_offset = 0) {
    AccessNote a{};
    a.id = ++next_access_id_;
    a.space = space;
    a.offset = offset;
    a.byte_offset = byte_offset;
    a.bytes = bytes;
    a.pc = e.pc;
    a.owner = owner.value;
    if (is_atomic) {
      // Compare-and-swap is an operation of its own.
      a.atomic_op = e.kind == RmaKind::CompareAndSwap ? 0xffffffffu : e.op;
      if (a.atomic_op == 0) a.atomic_op = 0xfffffffeu;
      a.atomic_type = e.basic_type;
      a.atomic_unit = e.basic_size;
      if (e.flags & kRmaNoOp) a.flags |= kAccessAtomicRead;
    }
    a.call = static_cast<std::uint16_t>(call);
    a.mode = mode;
    out.add_note(NoteKind::Access, a);
    w.open.push_back(WinData::OpenAccess{a.id, target.value, local, e.request});
  };
  const bool reads_only = e.kind == RmaKind::Get || (e.flags & kRmaNoOp);
  const AccessMode target_mode = reads_only ? AccessMode::Read : AccessMode::Write;
  if (e.flags & kRmaTargetDense) {
    add(space_of(w.id, target), static_cast<std::uint64_t>(e.target_disp), e.target_bytes,
        target, target_mode, atomic, fetching);
  } else {
    // A datatype with gaps: one access per block it touches, offsets in
    // bytes from the target address. A type the interceptor did not
    // describe is left out rather than widened to its extent, which could
    // invent races.
    RmaBlock b;
    for (std::uint32_t i = 0; i < e.target_blocks; ++i) {
      if (!read_array(p.data(), p.size(), sizeof e + i * sizeof b, 1, &b)) break;
      add(space_of(w.id, target), static_cast<std::uint64_t>(e.target_disp), b.bytes, target,
          target_mode, atomic, fetching, b.offset);
    }
  }
  if (e.origin_addr && e.origin_bytes && (e.flags & kRmaOriginDense))
    add(0, e.origin_addr, e.origin_bytes, self_, AccessMode::Read, false, true);
  if (e.result_addr && e.result_bytes && (e.flags & kRmaResultDense))
    add(0, e.result_addr, e.result_bytes, self_, AccessMode::Write, false, true);
  if (e.request) rma_requests_[e.request] = windows_.at(e.win);
}

template <class Which>
void MpiTranslator::complete_accesses(WinData& w, CallProgram& out, std::uint64_t pc,
                                      Which&& which) {
  out.complete_accesses(w.open, which, pc);
}

bool MpiTranslator::complete_rma_request(std::uint64_t request, CallProgram& out) {
  auto it = rma_requests_.find(request);
  if (it == rma_requests_.end()) return false;
  const WinPtr w = std::move(it->second);
  rma_requests_.erase(it);
  // MPI_Rput and MPI_Raccumulate requests complete locally; MPI_Rget and
  // MPI_Rget_accumulate ones have their data, so they read the target too.
  complete_accesses(*w, out, 0, [&](const WinData::OpenAccess& a) {
    return a.request == request && a.local;
  });
  return true;
}

void MpiTranslator::on_win_flush(Call call, const WinEvent& e, CallProgram& out) {
  if (!notes_wanted()) return;
  WinData& w = win(e.win);
  const bool all = call == Call::Win_flush_all || call == Call::Win_flush_local_all;
  const bool local = call == Call::Win_flush_local || call == Call::Win_flush_local_all;
  // A flush of MPI_PROC_NULL completes nothing.
  if (!all && e.rank < 0) return;
  const std::uint32_t target = all ? 0 : world_of(w.members, e.rank).value;
  complete_accesses(w, out, e.pc, [&](const WinData::OpenAccess& a) {
    return (all || a.target == target) && (!local || a.local);
  });
}

void MpiTranslator::on_win_attach(Call call, const WinAttachEvent& e, CallProgram& out) {
  if (!notes_wanted() || call != Call::Win_attach) return;
  WinData& w = win(e.win);
  // Memory of a dynamic window: accesses name it by address.
  RegionNote r{};
  r.space = space_of(w.id, self_);
  r.base = e.base;
  r.bytes = e.bytes;
  r.pc = e.pc;
  r.unit = 1;
  r.kind = RegionKind::MpiDynamicWindow;
  out.add_note(NoteKind::Region, r);
}

// The program's loads and stores (a build with the vcx compiler wrappers):
// window memory by window and member, offsets in bytes from the member's
// base (a dynamic window's: addresses); the buffers of operations in
// flight by address, like those operations' own accesses to them.
void MpiTranslator::on_local_accesses(const Payload& p, CallProgram& out) {
  if (!notes_wanted()) return;
  const bool ok = out.add_local_accesses(
      {p.data(), p.size()}, static_cast<std::uint16_t>(Call::Load),
      static_cast<std::uint16_t>(Call::Store), next_access_id_,
      [&](const LocalAccessRecord& r, AccessNote& a) {
        if (r.kind == LocalAccessKind::Buffer) {
          a.offset = r.offset;
          return true;
        }
        auto it = windows_.find(r.tag);
        if (it == windows_.end()) return false;
        a.space = space_of(it->second->id, Rank{static_cast<std::uint32_t>(r.owner)});
        a.byte_offset = static_cast<std::int64_t>(r.offset);
        return true;
      });
  if (!ok) host_.fatal("mpi: malformed local access event from rank " + std::to_string(self_.value));
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
      out.push(Op::signal(ctl.reserve_send(o, q)));
      count_epoch_signal(Direction::Sent, w, o, kPostSignalTag);
    }
    w.exposure = std::move(group);
    return;
  }
  // Access epoch: wait for each target's post.
  const QueueId q{w.id.value, kPostQueue};
  for (const Rank t : group) {
    const ReceiveToken tok = ctl.new_receive(false);
    ctl.bind_receive(tok, t, q);
    out.push(Op::wait(tok));
    // Counted as taken: the posts of the earlier epochs toward t, not this
    // one's, which MPI_Win_complete may still wait for.
    auto [taken, first] =
        received_counts_.try_emplace(MessageKey{w.id.value, t.value, kPostSignalTag}, 0);
    if (!first) ++taken->second;
  }
  w.access = std::move(group);
}

void MpiTranslator::on_win(Family f, const WinEvent& e, ExchangeControl& ctl, CallProgram& out) {
  WinData& w = win(e.win);
  auto acquire = [&](Rank target, bool shared, std::uint16_t lease_flags) {
    Op op = Op::acquire(target, lock_id(w.id, target),
                        static_cast<std::uint16_t>((shared ? kResourceShared : 0) | lease_flags));
    // The application names a lock it may lease by window handle and
    // target rank in the window.
    op.lease_object = e.win;
    op.lease_target = static_cast<std::uint32_t>(e.rank);
    out.push(op);
  };
  auto release = [&](Rank target, bool shared, std::uint16_t lease_flags) {
    out.push(Op::release(target, lock_id(w.id, target),
                         static_cast<std::uint16_t>((shared ? kResourceShared : 0) | lease_flags)));
  };
  switch (f) {
    case Family::WinFence:
    case Family::WinFree: {
      complete_accesses(w, out, e.pc, [](const WinData::OpenAccess&) { return true; });
      out.mark_clocked();
      const CollectiveRef fence{w.id, ++w.collectives, CollectiveKind::AllToAll, Rank{}};
      out.push(Op::contribute(fence, kCollectiveBlocking));
      out.push(Op::complete(fence));
      if (f == Family::WinFree) {
        // Its memory is no longer exposed (the addresses may come back in
        // another window).
        if (notes_wanted()) out.add_note(NoteKind::RegionEnd, RegionEndNote{space_of(w.id, self_)});
        // No lock on this window is acquired again: its state here can go,
        // and so can this process's leases of its locks.
        out.push(Op::retire(lock_id(w.id, self_)));
        out.push(Op::end_leases(e.win));
        windows_.erase(e.win);
      }
      return;
    }
    case Family::WinComplete: {
      complete_accesses(w, out, e.pc, [](const WinData::OpenAccess&) { return true; });
      const QueueId q{w.id.value, kCompleteQueue};
      if (!w.access.empty()) out.mark_clocked();
      for (const Rank t : w.access) {
        out.push(Op::signal(ctl.reserve_send(t, q)));
        count_epoch_signal(Direction::Sent, w, t, kCompleteSignalTag);
      }
      w.completed_access = std::move(w.access);
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
        out.push(Op::wait(tok));
        count_epoch_signal(Direction::Received, w, o, kCompleteSignalTag);
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
      complete_accesses(w, out, e.pc,
                        [&](const WinData::OpenAccess& a) { return a.target == target.value; });
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
      w.holds_all = true;
      return;
    case Family::WinUnlockAll:
      complete_accesses(w, out, e.pc, [](const WinData::OpenAccess&) { return true; });
      if (w.all_nocheck) {
        w.all_nocheck = false;
        return;
      }
      out.mark_clocked();
      for (const Rank t : w.members) release(t, true, 0);
      w.holds_all = false;
      return;
    default:
      host_.fatal("mpi: unexpected window event");
  }
}

}  // namespace vcx::mpi
