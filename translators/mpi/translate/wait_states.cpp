// What a rank blocked in an MPI call waits for (vcx/wait_state.h), and the
// counts of its messages that others' waits depend on.
#include <algorithm>
#include <string>
#include <string_view>

#include "mpi_translator.h"

namespace vcx::mpi {
namespace {

std::string rank_list(const std::vector<Rank>& ranks) {
  std::string s;
  for (const Rank r : ranks) s += (s.empty() ? "" : ",") + std::to_string(r.value);
  return s;
}

}  // namespace

std::uint16_t MpiTranslator::operation_of(std::uint16_t call) {
  const std::string_view name = kCallNames[call];
  return name.size() > 2 && name.substr(name.size() - 2) == "_c"
             ? static_cast<std::uint16_t>(call - 1)
             : call;
}

void MpiTranslator::note_collective(CommData& c, std::uint64_t instance, Call call,
                                    std::int32_t root) {
  const CollKind kind = kCallCollKind[static_cast<std::size_t>(call)];
  const bool rooted = kind == CollKind::OneToAll || kind == CollKind::AllToOne;
  std::int32_t world_root = -1;
  if (rooted && root >= 0 && static_cast<std::size_t>(root) < c.members.size())
    world_root = static_cast<std::int32_t>(c.members[static_cast<std::size_t>(root)].value);
  c.recent.push_back({instance, operation_of(static_cast<std::uint16_t>(call)), world_root});
  if (c.recent.size() > CommData::kRecentCollectives) c.recent.pop_front();
}

std::size_t MpiTranslator::MessageKeyHash::operator()(const MessageKey& k) const noexcept {
  return static_cast<std::size_t>(
      hash_combine(hash_combine(k.comm, k.peer), static_cast<std::uint32_t>(k.tag)));
}

void MpiTranslator::count_message(Direction d, const CommData& c, Rank peer, std::int32_t tag) {
  auto& counts = d == Direction::Sent ? sent_counts_ : received_counts_;
  ++counts[MessageKey{c.id.value, peer.value, tag}];
}

void MpiTranslator::count_epoch_signal(Direction d, const WinData& w, Rank peer,
                                       std::int32_t tag) {
  auto& counts = d == Direction::Sent ? sent_counts_ : received_counts_;
  ++counts[MessageKey{w.id.value, peer.value, tag}];
}

// Fence: every member of the window's group in the same fence (MPI 4.0,
// 12.5.1: collective over the group; MPI_Win_free counts among them but is
// not marked). MPI_Win_start, MPI_Win_complete: a post of each target of
// the epoch (12.5.2: either may wait for them). MPI_Win_wait: a complete of
// each origin of the exposure epoch.
const MpiTranslator::WinData* MpiTranslator::find_window(std::uint64_t handle) const {
  auto it = windows_.find(handle);
  return it == windows_.end() ? nullptr : it->second.get();
}

bool MpiTranslator::window_wait(Family f, const channel::BlockedCall& blocked, WaitState* out) {
  const auto e = blocked.payload_as<WinEvent>();
  const WinData* wp = find_window(e.win);
  if (!wp) return false;
  const WinData& w = *wp;
  const std::string name = call_name(blocked.call);
  out->pc = e.pc;
  if (f == Family::WinFence) {
    WaitCondition c;
    c.need = WaitNeed::Collective;
    c.comm = w.id.value;
    c.instance = w.collectives;  // its event was translated: the latest instance
    c.call = static_cast<std::uint16_t>(Call::Win_fence);
    c.ranks = w.members;
    out->call = name + "(the window of world ranks " + rank_list(w.members) + ")";
    out->conditions.push_back(std::move(c));
    return true;
  }
  // Events translated: start's (its access epoch is open), complete's (it
  // closed it); wait's comes after the call.
  const bool accessing = f != Family::WinWait;
  const std::vector<Rank>& peers = f == Family::WinStart      ? w.access
                                   : f == Family::WinComplete ? w.completed_access
                                                              : w.exposure;
  if (peers.empty()) return false;
  for (const Rank p : peers) {
    WaitCondition c;
    c.need = WaitNeed::Message;
    c.comm = w.id.value;
    c.tag = accessing ? kPostSignalTag : kCompleteSignalTag;
    c.ranks.push_back(p);
    out->conditions.push_back(std::move(c));
  }
  out->call = name + (accessing ? "(the posts of world ranks " : "(the completes of world ranks ") +
              rank_list(peers) + ")";
  return true;
}

std::string MpiTranslator::comm_name(const CommData& c) const {
  if (c.id == world_comm_id()) return "MPI_COMM_WORLD";
  if (c.id == self_comm_id(self_)) return "MPI_COMM_SELF";
  return std::string(c.inter ? "the intercommunicator with world ranks " : "the communicator of world ranks ") +
         rank_list(c.inter ? c.remote : c.members);
}

const CommData* MpiTranslator::find_comm(std::uint64_t handle) const {
  auto it = comms_.find(handle);
  return it == comms_.end() ? nullptr : it->second.get();
}

bool MpiTranslator::valid_peer(const CommData& c, std::int32_t rank) {
  if (rank == kRankAny || is_forced_source(rank)) {
    if (is_forced_source(rank)) rank = unforced_source(rank);
    else return true;
  }
  return rank >= 0 && static_cast<std::size_t>(rank) < c.peers().size();
}

WaitCondition MpiTranslator::message_condition(const CommData& c, std::int32_t source,
                                               std::int32_t tag) {
  WaitCondition w;
  w.need = WaitNeed::Message;
  w.comm = c.id.value;
  w.tag = tag == kTagAny ? WaitCondition::kAnyTag : tag;
  if (is_forced_source(source)) source = unforced_source(source);
  if (source == kRankAny)
    w.ranks = c.peers();
  else
    w.ranks.push_back(peer_of(c, source));
  return w;
}

std::string MpiTranslator::source_text(const CommData& c, std::int32_t source) {
  if (is_forced_source(source)) source = unforced_source(source);
  if (source == kRankAny) return "MPI_ANY_SOURCE";
  const Rank w = peer_of(c, source);
  return w.value == static_cast<std::uint32_t>(source)
             ? std::to_string(source)
             : std::to_string(source) + " (world rank " + std::to_string(w.value) + ")";
}

std::string MpiTranslator::tag_text(std::int32_t tag) {
  return tag == kTagAny ? "MPI_ANY_TAG" : std::to_string(tag);
}

// A non-root of a one-to-all call needs the root's data only: which other
// members relay it is the library's choice.
void MpiTranslator::wait_for_root_only(WaitCondition& c) const {
  const Rank root{static_cast<std::uint32_t>(c.root)};
  if (root != self_) c.ranks.assign(1, root);
}

bool MpiTranslator::receive_wait(const std::string& name, std::uint64_t comm_handle,
                                 std::int32_t source, std::int32_t tag, std::uint64_t pc,
                                 WaitState* out) {
  if (source == kRankProcNull) return false;
  const CommData* cp = find_comm(comm_handle);
  if (!cp || !valid_peer(*cp, source)) return false;
  const CommData& c = *cp;
  out->call = name + "(source " + source_text(c, source) + ", tag " + tag_text(tag) + ", " +
              comm_name(c) + ")";
  out->pc = pc;
  out->conditions.push_back(message_condition(c, source, tag));
  return true;
}

bool MpiTranslator::wait_state(const channel::BlockedCall& blocked, WaitState* out) {
  if (blocked.model != Model::Mpi || blocked.call >= static_cast<std::uint16_t>(Call::Count))
    return false;
  const auto call = static_cast<Call>(blocked.call);
  const std::string name = call_name(blocked.call);
  const Family family = kCallFamily[blocked.call];
  out->all_of = true;
  acquiring_ = 0;
  acquiring_all_ = nullptr;
  switch (family) {
    case Family::Recv: {
      const auto e = blocked.payload_as<RecvEvent>();
      return receive_wait(name, e.comm, e.source, e.tag, e.pc, out);
    }
    case Family::Sendrecv: {
      const auto e = blocked.payload_as<SendrecvEvent>();
      const CommData* cp = find_comm(e.comm);
      if (!cp) return false;
      const CommData& c = *cp;
      if ((e.dest != kRankProcNull && !valid_peer(c, e.dest)) ||
          (e.source != kRankProcNull && !valid_peer(c, e.source)))
        return false;
      out->call = name + "(dest " + (e.dest == kRankProcNull ? std::string("MPI_PROC_NULL")
                                                              : source_text(c, e.dest)) +
                  ", send tag " + std::to_string(e.send_tag) + ", source " +
                  (e.source == kRankProcNull ? std::string("MPI_PROC_NULL")
                                             : source_text(c, e.source)) +
                  ", receive tag " + tag_text(e.recv_tag) + ", " + comm_name(c) + ")";
      out->pc = e.pc;
      // The send may be on its way already (its event comes after the
      // call); the receive needs its message in every case. Not waiting for
      // the send's receiver errs towards "can return": MPI may have
      // buffered it.
      if (e.dest != kRankProcNull)
        out->sending.push_back(MessageCount{peer_of(c, e.dest), c.id.value, e.send_tag, 1});
      if (e.source != kRankProcNull) out->conditions.push_back(message_condition(c, e.source, e.recv_tag));
      return !out->conditions.empty();
    }
    case Family::Mprobe: {
      const auto e = blocked.payload_as<MprobeEvent>();
      return receive_wait(name, e.comm, e.source, e.tag, e.pc, out);
    }
    case Family::Send: {
      const auto e = blocked.payload_as<SendEvent>();
      if (e.dest == kRankProcNull || e.mode == SendMode::Buffered) return false;
      const CommData* cp = find_comm(e.comm);
      if (!cp) return false;
      const CommData& c = *cp;
      if (!valid_peer(c, e.dest) || e.dest == kRankAny) return false;
      out->call = name + "(dest " + source_text(c, e.dest) + ", tag " + std::to_string(e.tag) +
                  ", " + comm_name(c) + ")";
      WaitCondition w;
      w.need = WaitNeed::Receiver;
      w.comm = c.id.value;
      w.tag = e.tag;
      w.ranks.push_back(peer_of(c, e.dest));
      out->conditions.push_back(std::move(w));
      return true;
    }
    case Family::Collective: {
      const auto e = blocked.payload_as<CollectiveEvent>();
      const CommData* cp = find_comm(e.comm);
      if (!cp) return false;
      const CommData& c = *cp;
      const CollKind kind = kCallCollKind[blocked.call];
      if (kind == CollKind::Neighbor || c.inter) return false;  // not followed yet
      WaitCondition w;
      w.need = WaitNeed::Collective;
      w.comm = c.id.value;
      w.instance = c.collectives;  // its event was translated: the latest instance
      w.call = operation_of(blocked.call);
      w.ranks = c.members;
      const bool rooted = kind == CollKind::OneToAll || kind == CollKind::AllToOne;
      out->call = name + "(";
      if (rooted && (e.root < 0 || static_cast<std::size_t>(e.root) >= c.members.size()))
        return false;
      if (rooted) {
        w.root = static_cast<std::int32_t>(peer_of(c, e.root).value);
        out->call += "root " + source_text(c, e.root) + ", ";
        if (kind == CollKind::OneToAll) wait_for_root_only(w);
      }
      out->call += comm_name(c) + ")";
      out->conditions.push_back(std::move(w));
      return true;
    }
    case Family::Completion: {
      const auto e = blocked.payload_as<BlockedWait>();
      out->all_of = call == Call::Wait || call == Call::Waitall;
      if (e.listed < e.count) {
        // Requests beyond those the slot names: nothing certain to say.
        out->conditions.push_back(WaitCondition{});
      }
      std::string what;
      for (std::uint32_t i = 0; i < e.listed; ++i) {
        auto it = requests_.find(e.requests[i]);
        if (it == requests_.end() || (it->second.persistent && !it->second.active)) continue;
        const Request& r = it->second;
        WaitCondition w;
        std::string item;
        switch (r.kind) {
          case ReqKind::Receive:
            if (r.probed) {
              item = "receive of a probed message";
              break;  // its message is there: Unknown, never a wait
            }
            w = message_condition(*r.comm, r.wildcard ? kRankAny : r.peer, r.tag);
            item = "receive from " + source_text(*r.comm, r.wildcard ? kRankAny : r.peer) +
                   ", tag " + tag_text(r.tag);
            break;
          case ReqKind::SyncSend:
          case ReqKind::Send:
            w.need = WaitNeed::Receiver;
            w.comm = r.comm->id.value;
            w.tag = r.tag;
            w.ranks.push_back(peer_of(*r.comm, r.peer));
            item = "send to " + source_text(*r.comm, r.peer) + ", tag " + std::to_string(r.tag);
            break;
          case ReqKind::Collective:
            if (r.persistent || !r.comm || r.comm->inter ||
                kCallCollKind[static_cast<std::size_t>(r.call)] == CollKind::Neighbor) {
              item = "collective";
              break;  // Unknown
            }
            w.need = WaitNeed::Collective;
            w.comm = r.comm->id.value;
            w.instance = r.instance;
            w.call = operation_of(static_cast<std::uint16_t>(r.call));
            w.ranks = r.comm->members;
            if (const CollKind k = kCallCollKind[static_cast<std::size_t>(r.call)];
                k == CollKind::OneToAll || k == CollKind::AllToOne) {
              w.root = static_cast<std::int32_t>(peer_of(*r.comm, r.root).value);
              if (k == CollKind::OneToAll) wait_for_root_only(w);
            }
            item = std::string(call_name(static_cast<std::uint16_t>(r.call)));
            break;
          case ReqKind::Nothing:
            continue;  // complete at once
        }
        if (r.comm) item += " on " + comm_name(*r.comm);
        what += (what.empty() ? "" : "; ") + item;
        out->conditions.push_back(std::move(w));
      }
      if (out->conditions.empty()) return false;
      out->call = name + "(" + what + (e.listed < e.count ? "; …" : "") + ")";
      return true;
    }
    case Family::WinLock: {
      // Waiting for the tool's grant, which follows the holders' releases
      // (wrappers_rma.cpp): for the holders.
      const auto e = blocked.payload_as<WinEvent>();
      const WinData* wp = find_window(e.win);
      if (!wp || (e.arg & kLockNoCheck)) return false;
      const WinData& w = *wp;
      if (e.rank < 0 || static_cast<std::size_t>(e.rank) >= w.members.size()) return false;
      const Rank target = w.members[static_cast<std::size_t>(e.rank)];
      WaitCondition c;
      c.need = WaitNeed::Lock;
      c.resource = lock_id(w.id, target);
      c.shared = (e.arg & kLockTypeMask) == kLockShared;
      c.ranks = w.members;
      acquiring_ = c.resource;
      out->call = name + (c.shared ? "(MPI_LOCK_SHARED" : "(MPI_LOCK_EXCLUSIVE") + ", rank " +
                  std::to_string(e.rank) + " (world rank " + std::to_string(target.value) +
                  "), the window of world ranks " + rank_list(w.members) + ")";
      out->pc = blocked.call_site;
      out->conditions.push_back(std::move(c));
      return true;
    }
    case Family::WinLockAll: {
      // A shared lock of every member's window: for exclusive holders.
      const auto e = blocked.payload_as<WinEvent>();
      const WinData* wp = find_window(e.win);
      if (!wp || (e.arg & kLockNoCheck)) return false;
      const WinData& w = *wp;
      for (const Rank t : w.members) {
        WaitCondition c;
        c.need = WaitNeed::Lock;
        c.resource = lock_id(w.id, t);
        c.shared = true;
        c.ranks = w.members;
        out->conditions.push_back(std::move(c));
      }
      acquiring_all_ = &w;
      out->call = name + "(the window of world ranks " + rank_list(w.members) + ")";
      out->pc = blocked.call_site;
      return true;
    }
    case Family::WinFence:
    case Family::WinStart:
    case Family::WinComplete:
      return window_wait(family, blocked, out);
    case Family::WinWait:
      if (call != Call::Win_wait) return false;
      return window_wait(family, blocked, out);
    default:
      return false;
  }
}

void MpiTranslator::wait_facts(WaitFacts* out) const {
  for (const auto& [k, n] : sent_counts_)
    out->sent.push_back(MessageCount{Rank{k.peer}, k.comm, k.tag, n});
  for (const auto& [k, n] : received_counts_)
    out->received.push_back(MessageCount{Rank{k.peer}, k.comm, k.tag, n});
  for (const auto& [id, r] : requests_)
    if (r.kind == ReqKind::Receive && (!r.persistent || r.active)) ++out->pending_receives;
  for (const auto& [handle, c] : comms_) {
    if (!c->collectives) continue;
    if (std::any_of(out->collectives.begin(), out->collectives.end(),
                    [&](const WaitFacts::Instances& i) { return i.comm == c->id.value; }))
      continue;  // another handle of the same communicator
    WaitFacts::Instances i{c->id.value, c->collectives, {}};
    for (const CommData::RecentCollective& r : c->recent)
      i.recent.push_back(WaitFacts::Operation{r.instance, r.call, r.root});
    out->collectives.push_back(std::move(i));
  }
  for (const auto& [handle, w] : windows_) {
    if (w->collectives) out->collectives.push_back(WaitFacts::Instances{w->id.value, w->collectives, {}});
    for (const auto& [target, shared] : w->held) {
      const std::uint64_t id = lock_id(w->id, Rank{target});
      if (id != acquiring_) (shared ? out->locks_held_shared : out->locks_held).push_back(id);
    }
    if (w->holds_all && w.get() != acquiring_all_)
      for (const Rank t : w->members) out->locks_held_shared.push_back(lock_id(w->id, t));
  }
}

}  // namespace vcx::mpi
