#include "mpi_translator.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace vcx::mpi {
namespace {

template <class T>
T read_payload(const EventHeader& ev, ToolHost& host) {
  if (ev.payload_size < sizeof(T))
    host.fatal("mpi: event " + std::to_string(ev.type) + " is too short (mixed vcx versions?)");
  T t;
  std::memcpy(&t, &ev + 1, sizeof(T));
  return t;
}

Op wait_op(ReceiveToken t) {
  Op op;
  op.kind = OpKind::Wait;
  op.value = t.value;
  return op;
}

Op snapshot_op(ReceiveToken t) {
  Op op;
  op.kind = OpKind::Snapshot;
  op.value = t.value;
  return op;
}

bool could_match(const PostedReceive& p, Rank src, std::int32_t tag) {
  return (p.want_source == kRankAny || p.want_source == static_cast<std::int32_t>(src.value)) &&
         (p.want_tag == kTagAny || p.want_tag == tag);
}

}  // namespace

MpiTranslator::MpiTranslator(ToolHost& host)
    : host_(host), self_(host.rank()), world_size_(host.world_size()) {}

const char* MpiTranslator::call_name(std::uint16_t call) const {
  return call < static_cast<std::uint16_t>(Call::Count) ? kCallNames[call] : "MPI_?";
}

const CommPtr& MpiTranslator::comm(std::uint64_t handle) {
  auto it = comms_.find(handle);
  if (it == comms_.end())
    host_.fatal("mpi: rank " + std::to_string(self_.value) + " used communicator handle " +
                std::to_string(handle) + " that vcx did not see being created");
  return it->second;
}

Rank MpiTranslator::world_of(const CommData& c, std::int32_t comm_rank) {
  if (comm_rank < 0 || static_cast<std::size_t>(comm_rank) >= c.members.size())
    host_.fatal("mpi: rank " + std::to_string(comm_rank) + " is outside a communicator of " +
                std::to_string(c.members.size()));
  return c.members[static_cast<std::size_t>(comm_rank)];
}

void MpiTranslator::translate(const EventHeader& ev, ExchangeControl& ctl, CallProgram& out) {
  const auto call = static_cast<Call>(ev.type);
  const auto* payload = reinterpret_cast<const std::uint8_t*>(&ev + 1);
  switch (call) {
    case Call::Init:
    case Call::Init_thread:
      on_init(read_payload<InitEvent>(ev, host_), ctl);
      break;
    case Call::Finalize:
      break;
    case Call::Send:
    case Call::Bsend:
    case Call::Rsend:
    case Call::Ssend:
    case Call::Isend:
    case Call::Ibsend:
    case Call::Irsend:
    case Call::Issend:
      on_send(call, read_payload<SendEvent>(ev, host_), ctl, out);
      break;
    case Call::Recv:
      on_recv(read_payload<RecvEvent>(ev, host_), ctl, out);
      break;
    case Call::Irecv:
      on_irecv(read_payload<IrecvEvent>(ev, host_), ctl, out);
      break;
    case Call::Wait:
    case Call::Waitall:
    case Call::Waitany:
    case Call::Waitsome:
    case Call::Test:
    case Call::Testall:
    case Call::Testany:
    case Call::Testsome:
      on_completion(payload, ev.payload_size, ctl, out);
      break;
    case Call::Sendrecv:
    case Call::Sendrecv_replace:
      on_sendrecv(read_payload<SendrecvEvent>(ev, host_), ctl, out);
      break;
    case Call::Barrier:
    case Call::Bcast:
    case Call::Reduce:
    case Call::Allreduce:
      on_collective(call, read_payload<CollectiveEvent>(ev, host_), ctl, out);
      break;
    case Call::Comm_dup:
    case Call::Comm_split:
    case Call::Comm_create:
      on_comm_create(payload, ev.payload_size, ctl);
      break;
    case Call::Comm_free:
      on_comm_free(read_payload<CommFreeEvent>(ev, host_));
      break;
    default:
      host_.fatal("mpi: unknown event type " + std::to_string(ev.type));
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
  for (const PostedReceive& p : c->posted)
    if (!p.resolved && could_match(p, src, tag)) return true;
  return false;
}

void MpiTranslator::on_init(const InitEvent& e, ExchangeControl& ctl) {
  if (static_cast<std::uint32_t>(e.world_size) != world_size_ ||
      static_cast<std::uint32_t>(e.world_rank) != self_.value)
    host_.fatal("mpi: the application's world does not match the tool job");
  auto world = std::make_shared<CommData>();
  world->id = world_comm_id();
  world->members.resize(world_size_);
  for (std::uint32_t r = 0; r < world_size_; ++r) world->members[r] = Rank{r};
  if (!pending_registered_) {
    ctl.add_pending_receives(this);
    pending_registered_ = true;
  }
  ctl.register_group(world->id, world->members);
  by_id_[world->id] = world;
  comms_[e.comm_world] = world;

  auto self = std::make_shared<CommData>();
  self->id = self_comm_id(self_);
  self->members = {self_};
  ctl.register_group(self->id, self->members);
  by_id_[self->id] = self;
  comms_[e.comm_self] = self;
}

SendToken MpiTranslator::emit_send(const CommPtr& c, std::int32_t dest, std::int32_t tag,
                                   bool sync, ExchangeControl& ctl, CallProgram& out) {
  const Rank dst = world_of(*c, dest);
  const QueueId q = queue_of(*c, tag);
  const SendToken t = ctl.reserve_send(dst, q);
  Op op;
  op.kind = OpKind::Signal;
  op.flags = sync ? kSignalSynchronous : 0;
  op.peer = dst;
  op.queue = q;
  op.value = t.seq;
  out.push(op);
  return t;
}

void MpiTranslator::on_send(Call call, const SendEvent& e, ExchangeControl& ctl, CallProgram& out) {
  const bool nonblocking = call == Call::Isend || call == Call::Ibsend || call == Call::Irsend ||
                           call == Call::Issend;
  const bool sync = e.mode == SendMode::Synchronous;
  if (e.dest == kRankProcNull) {
    if (nonblocking) requests_[e.request] = Request{};
    return;  // no partner, no synchronisation
  }
  const CommPtr& c = comm(e.comm);
  out.mark_clocked();
  const SendToken t = emit_send(c, e.dest, e.tag, sync, ctl, out);
  if (nonblocking) {
    Request r;
    r.kind = sync ? ReqKind::SyncSend : ReqKind::Send;
    r.send = t;
    r.comm = c;
    requests_[e.request] = std::move(r);
  } else if (sync) {
    Op op;
    op.kind = OpKind::WaitAck;
    op.peer = t.dst;
    op.queue = t.queue;
    op.value = t.seq;
    out.push(op);
  }
}

ReceiveToken MpiTranslator::post_receive(const CommPtr& c, std::int32_t source, std::int32_t tag,
                                         ExchangeControl& ctl) {
  PostedReceive p;
  p.token = ctl.new_receive();
  p.want_source = source == kRankAny ? kRankAny
                                     : static_cast<std::int32_t>(world_of(*c, source).value);
  p.want_tag = tag;
  if (p.want_source != kRankAny && p.want_tag != kTagAny) {
    p.resolved = true;
    p.source = Rank{static_cast<std::uint32_t>(p.want_source)};
    p.tag = p.want_tag;
  }
  c->posted.push_back(p);
  ++unbound_;
  bind_ready(*c, ctl);
  return p.token;
}

void MpiTranslator::resolve_receive(const CommPtr& c, ReceiveToken t, std::int32_t status_source,
                                    std::int32_t status_tag, ExchangeControl& ctl) {
  for (PostedReceive& p : c->posted) {
    if (p.token != t) continue;
    if (!p.resolved) {
      p.resolved = true;
      p.source = world_of(*c, status_source);
      p.tag = status_tag;
    }
    break;
  }
  bind_ready(*c, ctl);
}

void MpiTranslator::forget_posted(CommData& c, ReceiveToken t, ExchangeControl& ctl) {
  for (auto it = c.posted.begin(); it != c.posted.end(); ++it) {
    if (it->token != t) continue;
    c.posted.erase(it);
    --unbound_;
    bind_ready(c, ctl);  // receives it held back may be placed now
    return;
  }
}

void MpiTranslator::bind_ready(CommData& c, ExchangeControl& ctl) {
  // A resolved receive takes the next position of its queue unless an
  // earlier receive still in the list could take a message of that queue
  // before it: an unresolved one that could match, or a resolved one of the
  // same queue that is itself waiting.
  for (std::size_t i = 0; i < c.posted.size();) {
    const PostedReceive& p = c.posted[i];
    bool blocked = !p.resolved;
    for (std::size_t j = 0; !blocked && j < i; ++j) {
      const PostedReceive& e = c.posted[j];
      blocked = e.resolved ? (e.source == p.source && e.tag == p.tag)
                           : could_match(e, p.source, p.tag);
    }
    if (blocked) {
      ++i;
      continue;
    }
    ctl.bind_receive(p.token, p.source, queue_of(c, p.tag));
    c.posted.erase(c.posted.begin() + static_cast<std::ptrdiff_t>(i));
    --unbound_;
  }
}

void MpiTranslator::on_recv(const RecvEvent& e, ExchangeControl& ctl, CallProgram& out) {
  if (e.source == kRankProcNull || e.status_source == kRankProcNull) return;
  const CommPtr& c = comm(e.comm);
  out.mark_clocked();
  const ReceiveToken t = post_receive(c, e.source, e.tag, ctl);
  resolve_receive(c, t, e.status_source, e.status_tag, ctl);
  out.push(wait_op(t));
  out.push(snapshot_op(t));
}

void MpiTranslator::on_irecv(const IrecvEvent& e, ExchangeControl& ctl, CallProgram& out) {
  Request r;
  if (e.source != kRankProcNull) {
    r.kind = ReqKind::Receive;
    r.comm = comm(e.comm);
    r.receive = post_receive(r.comm, e.source, e.tag, ctl);
    // A synchronous sender is answered with the clock at posting time.
    out.push(snapshot_op(r.receive));
  }
  requests_[e.request] = std::move(r);
}

void MpiTranslator::on_completion(const std::uint8_t* payload, std::size_t size,
                                  ExchangeControl& ctl, CallProgram& out) {
  CompletionEvent head;
  if (size < sizeof head) host_.fatal("mpi: short completion event");
  std::memcpy(&head, payload, sizeof head);
  if (size < sizeof head + head.count * sizeof(Completion))
    host_.fatal("mpi: truncated completion event");
  for (std::uint32_t i = 0; i < head.count; ++i) {
    Completion c;
    std::memcpy(&c, payload + sizeof head + i * sizeof(Completion), sizeof c);
    auto it = requests_.find(c.request);
    if (it == requests_.end()) continue;  // a request vcx does not clock
    Request r = std::move(it->second);
    requests_.erase(it);
    switch (r.kind) {
      case ReqKind::Receive:
        if (c.cancelled || c.source == kRankProcNull) {
          forget_posted(*r.comm, r.receive, ctl);
          ctl.drop_receive(r.receive);
          break;
        }
        resolve_receive(r.comm, r.receive, c.source, c.tag, ctl);
        out.mark_clocked();
        out.push(wait_op(r.receive));
        break;
      case ReqKind::SyncSend: {
        out.mark_clocked();
        Op op;
        op.kind = OpKind::WaitAck;
        op.peer = r.send.dst;
        op.queue = r.send.queue;
        op.value = r.send.seq;
        out.push(op);
        break;
      }
      case ReqKind::Send:
      case ReqKind::Nothing:
        break;
    }
  }
}

void MpiTranslator::on_sendrecv(const SendrecvEvent& e, ExchangeControl& ctl, CallProgram& out) {
  const CommPtr& c = comm(e.comm);
  if (e.dest != kRankProcNull) {
    out.mark_clocked();
    emit_send(c, e.dest, e.send_tag, false, ctl, out);
  }
  if (e.source != kRankProcNull && e.status_source != kRankProcNull) {
    out.mark_clocked();
    const ReceiveToken t = post_receive(c, e.source, e.recv_tag, ctl);
    resolve_receive(c, t, e.status_source, e.status_tag, ctl);
    out.push(wait_op(t));
    out.push(snapshot_op(t));
  }
}

void MpiTranslator::on_collective(Call call, const CollectiveEvent& e, ExchangeControl& ctl,
                                  CallProgram& out) {
  const CommPtr& c = comm(e.comm);
  CollectiveRef ref;
  ref.group = c->id;
  ref.instance = ++c->collectives;
  switch (call) {
    case Call::Bcast:
      ref.kind = CollectiveKind::OneToAll;
      ref.root = world_of(*c, e.root);
      break;
    case Call::Reduce:
      ref.kind = CollectiveKind::AllToOne;
      ref.root = world_of(*c, e.root);
      break;
    default:
      ref.kind = CollectiveKind::AllToAll;
      break;
  }
  out.mark_clocked();
  Op op;
  op.kind = OpKind::CollectiveContribute;
  op.flags = kCollectiveBlocking;
  op.collective = ref;
  out.push(op);
  op.kind = OpKind::CollectiveComplete;
  out.push(op);
}

void MpiTranslator::on_comm_create(const std::uint8_t* payload, std::size_t size,
                                   ExchangeControl& ctl) {
  CommCreateEvent e;
  if (size < sizeof e) host_.fatal("mpi: short communicator event");
  std::memcpy(&e, payload, sizeof e);
  if (size < sizeof e + e.nranks * sizeof(std::int32_t))
    host_.fatal("mpi: truncated communicator event");
  const CommPtr& parent = comm(e.parent);
  const std::uint64_t n = ++parent->constructions;
  if (e.is_null) return;
  auto c = std::make_shared<CommData>();
  if (e.same_group) {
    c->members = parent->members;
  } else {
    c->members.resize(e.nranks);
    for (std::uint32_t i = 0; i < e.nranks; ++i) {
      std::int32_t w;
      std::memcpy(&w, payload + sizeof e + i * sizeof w, sizeof w);
      if (w < 0 || static_cast<std::uint32_t>(w) >= world_size_)
        host_.fatal("mpi: a new communicator names world rank " + std::to_string(w));
      c->members[i] = Rank{static_cast<std::uint32_t>(w)};
    }
  }
  if (c->members.empty()) host_.fatal("mpi: a new communicator without members");
  const Rank lowest = *std::min_element(c->members.begin(), c->members.end());
  c->id = derived_comm_id(parent->id, n, lowest);
  ctl.register_group(c->id, c->members);
  by_id_[c->id] = c;
  comms_[e.newcomm] = std::move(c);
}

void MpiTranslator::on_comm_free(const CommFreeEvent& e) {
  // Pending requests keep their communicator alive through their pointer.
  comms_.erase(e.comm);
}

}  // namespace vcx::mpi
