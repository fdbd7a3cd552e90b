#include "mpi_translator.h"

#include <cstring>
#include <string>

#include "event_payload.h"

namespace vcx::mpi {

MpiTranslator::MpiTranslator(ToolHost& host)
    : host_(host), self_(host.rank()), world_size_(host.world_size()) {}

const char* MpiTranslator::call_name(std::uint16_t call) const {
  if (call >= static_cast<std::uint16_t>(Call::Count)) return "MPI_?";
  if (kCallFamily[call] == Family::LocalAccess)
    return call == static_cast<std::uint16_t>(Call::Store) ? "store" : "load";
  if (kCallFamily[call] == Family::Annotate)
    return kAnnotationNames[call - static_cast<std::uint16_t>(Call::Annotate_tick)];
  return kCallNames[call];
}

const CommPtr& MpiTranslator::comm(std::uint64_t handle) {
  auto it = comms_.find(handle);
  if (it == comms_.end())
    host_.fatal("mpi: rank " + std::to_string(self_.value) + " used communicator handle " +
                std::to_string(handle) + " that vcx did not see being created");
  return it->second;
}

Rank MpiTranslator::world_of(const std::vector<Rank>& group, std::int32_t rank) {
  if (rank < 0 || static_cast<std::size_t>(rank) >= group.size())
    host_.fatal("mpi: rank " + std::to_string(rank) + " is outside a group of " +
                std::to_string(group.size()));
  return group[static_cast<std::size_t>(rank)];
}

void MpiTranslator::translate(const EventHeader& ev, ExchangeControl& ctl, CallProgram& out) {
  // The rank went on since it was seen waiting for a lock.
  acquiring_ = 0;
  acquiring_all_ = nullptr;
  if (receive_notes_wanted_ < 0) receive_notes_wanted_ = host_.receive_notes_wanted() ? 1 : 0;
  if (receive_notes_wanted_ == 0) return dispatch(ev, ctl, out);
  ReceiveNoting noting(ctl, out);
  noting_ = &noting;
  dispatch(ev, noting, out);
  noting_ = nullptr;
}

void MpiTranslator::dispatch(const EventHeader& ev, ExchangeControl& ctl, CallProgram& out) {
  if (ev.type >= static_cast<std::uint16_t>(Call::Count))
    host_.fatal("mpi: unknown event type " + std::to_string(ev.type) +
                " (interceptor and translator from different vcx versions?)");
  const auto call = static_cast<Call>(ev.type);
  const Payload p(ev, host_);
  switch (kCallFamily[ev.type]) {
    case Family::Init: on_init(p.as<InitEvent>(), ctl); break;
    case Family::Finalize: break;
    case Family::Abort: break;  // the application job ends; the tools notice
    case Family::Send: on_send(call, p.as<SendEvent>(), ctl, out); break;
    case Family::SendInit: on_send_init(call, p.as<SendEvent>()); break;
    case Family::Recv: on_recv(p.as<RecvEvent>(), ctl, out); break;
    case Family::Irecv: on_irecv(p.as<IrecvEvent>(), ctl, out); break;
    case Family::RecvInit: on_recv_init(p.as<IrecvEvent>()); break;
    case Family::Start: on_start(p.data(), p.size(), ctl, out); break;
    case Family::RequestFree: on_request_free(p.as<RequestEvent>(), ctl); break;
    case Family::Mprobe: on_mprobe(p.as<MprobeEvent>(), ctl, out); break;
    case Family::Mrecv: on_mrecv(call, p.as<MrecvEvent>(), ctl, out); break;
    case Family::Cancel: on_cancel(p.as<RequestEvent>(), ctl); break;
    case Family::Completion: on_completion(call, p.data(), p.size(), ctl, out); break;
    case Family::Sendrecv: on_sendrecv(p.as<SendrecvEvent>(), ctl, out); break;
    case Family::Isendrecv: on_isendrecv(p.as<IsendrecvEvent>(), ctl, out); break;
    case Family::Collective:
    case Family::Icollective: on_collective(call, p.as<CollectiveEvent>(), ctl, out); break;
    case Family::Pcollective: on_pcollective(call, p.as<CollectiveEvent>()); break;
    case Family::CommCreate: on_comm_create(call, p.data(), p.size(), ctl); break;
    case Family::CommFree: on_comm_free(p.as<CommFreeEvent>()); break;
    case Family::WinCreate: on_win_create(call, p.as<WinCreateEvent>(), ctl, out); break;
    case Family::WinPost:
    case Family::WinStart: on_win_group(kCallFamily[ev.type], p.data(), p.size(), ctl, out); break;
    case Family::WinFree:
    case Family::WinFence:
    case Family::WinComplete:
    case Family::WinWait:
    case Family::WinLock:
    case Family::WinUnlock:
    case Family::WinLockAll:
    case Family::WinUnlockAll: on_win(kCallFamily[ev.type], p.as<WinEvent>(), ctl, out); break;
    case Family::RmaAccess: on_rma_access(call, p.as<RmaAccessEvent>(), p, out); break;
    case Family::WinFlush: on_win_flush(call, p.as<WinEvent>(), out); break;
    case Family::WinAttach: on_win_attach(call, p.as<WinAttachEvent>(), out); break;
    case Family::LocalAccess: on_local_accesses(p, out); break;
    case Family::Annotate: on_annotate(call, p.as<AnnotateEvent>(), ctl, out); break;
  }
}

bool MpiTranslator::could_bind_later(Rank src, QueueId queue) const {
  if (unbound_ == 0) return false;
  auto it = by_id_.find(GroupId{queue.a});
  if (it == by_id_.end()) return false;
  const CommPtr c = it->second.lock();
  if (!c) return false;
  const auto tag = static_cast<std::int32_t>(static_cast<std::uint32_t>(queue.b));
  // Receives resolved but still unbound wait for an unresolved one that could
  // match the same queue, so looking at the unresolved ones is enough.
  for (const PostedReceive& p : c->posted) {
    if (p.resolved) continue;
    if ((p.want_source == kRankAny || p.want_source == static_cast<std::int32_t>(src.value)) &&
        (p.want_tag == kTagAny || p.want_tag == tag))
      return true;
  }
  return false;
}

}  // namespace vcx::mpi
