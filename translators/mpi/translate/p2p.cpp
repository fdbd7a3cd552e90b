// Point-to-point: sends, receives, persistent requests, matched probes,
// completions (docs/clock-rules.md, "Point-to-point").
#include <cstring>
#include <string>

#include <spdlog/spdlog.h>

#include "event_payload.h"
#include "mpi_translator.h"

namespace vcx::mpi {
namespace {

// Standard and synchronous sends complete only once their receive is
// posted when MPI does not buffer (MPI 4.0, 3.4); buffered and ready ones
// need nothing of the receiver to complete.
bool needs_receiver(SendMode m) { return m == SendMode::Standard || m == SendMode::Synchronous; }

std::uint16_t wait_flags(std::int32_t asked_source) {
  return asked_source == kRankAny ? std::uint16_t{kWaitWildcard} : std::uint16_t{0};
}

// A blocking receive: posted by the call that completes it.
std::uint16_t posted_here(std::int32_t asked_source) {
  return static_cast<std::uint16_t>(wait_flags(asked_source) | kWaitPostedInCall);
}

bool could_match(const PostedReceive& p, Rank src, std::int32_t tag) {
  return (p.want_source == kRankAny || p.want_source == static_cast<std::int32_t>(src.value)) &&
         (p.want_tag == kTagAny || p.want_tag == tag);
}

}  // namespace

SendToken MpiTranslator::emit_send(const CommPtr& c, std::int32_t dest, std::int32_t tag,
                                   bool sync, std::uint64_t bytes, ExchangeControl& ctl,
                                   CallProgram& out) {
  const Rank dst = peer_of(*c, dest);
  const QueueId q = queue_of(*c, tag);
  const SendToken t = ctl.reserve_send(dst, q);
  count_message(Direction::Sent, *c, dst, tag);
  out.push(Op::signal(t, sync ? kSignalSynchronous : 0, bytes));
  return t;
}

void MpiTranslator::on_send(Call, const SendEvent& e, ExchangeControl& ctl, CallProgram& out) {
  const bool nonblocking = e.request != 0;
  const bool sync = e.mode == SendMode::Synchronous;
  if (e.dest == kRankProcNull) {
    if (nonblocking) requests_[e.request] = Request{};
    return;  // no partner, no synchronisation
  }
  const CommPtr& c = comm(e.comm);
  out.mark_clocked();
  const SendToken t = emit_send(c, e.dest, e.tag, sync, e.bytes, ctl, out);
  if (nonblocking) {
    Request r;
    r.kind = sync ? ReqKind::SyncSend : ReqKind::Send;
    r.send = t;
    r.comm = c;
    r.peer = e.dest;
    r.tag = e.tag;
    r.needs_receiver = needs_receiver(e.mode);
    requests_[e.request] = std::move(r);
    return;
  }
  if (sync) {
    out.push(Op::wait_ack(t));
    if (noting_) noting_->sync_send_completed(t);
  }
  if (needs_receiver(e.mode)) out.push(Op::send_completed(t));
}

void MpiTranslator::on_send_init(Call call, const SendEvent& e) {
  Request r;
  r.persistent = true;
  r.call = call;
  if (e.dest != kRankProcNull) {
    r.kind = e.mode == SendMode::Synchronous ? ReqKind::SyncSend : ReqKind::Send;
    r.comm = comm(e.comm);
    r.peer = e.dest;
    r.tag = e.tag;
    r.bytes = e.bytes;
    r.needs_receiver = needs_receiver(e.mode);
  }
  requests_[e.request] = std::move(r);
}

void MpiTranslator::on_recv_init(const IrecvEvent& e) {
  Request r;
  r.persistent = true;
  r.call = Call::Recv_init;
  if (e.source != kRankProcNull) {
    r.kind = ReqKind::Receive;
    r.comm = comm(e.comm);
    r.peer = e.source;
    r.tag = e.tag;
    r.wildcard = e.source == kRankAny;
  }
  requests_[e.request] = std::move(r);
}

void MpiTranslator::start_p2p(Request& r, std::uint64_t pc, ExchangeControl& ctl,
                              CallProgram& out, std::int32_t source) {
  r.active = true;
  switch (r.kind) {
    case ReqKind::Send:
    case ReqKind::SyncSend:
      out.mark_clocked();
      r.send = emit_send(r.comm, r.peer, r.tag, r.kind == ReqKind::SyncSend, r.bytes, ctl, out);
      break;
    case ReqKind::Receive:
      r.receive = post_receive(r.comm, is_forced_source(source) ? source : r.peer, r.tag, pc,
                               ctl);
      out.push(Op::snapshot(r.receive));
      break;
    default:
      break;
  }
}

void MpiTranslator::on_start(const std::uint8_t* payload, std::size_t size, ExchangeControl& ctl,
                             CallProgram& out) {
  StartEvent head;
  if (!read_array(payload, size, 0, 1, &head)) host_.fatal("mpi: short start event");
  const std::size_t sources_at = sizeof head + std::size_t{head.count} * sizeof(std::uint64_t);
  for (std::uint32_t i = 0; i < head.count; ++i) {
    std::uint64_t handle;
    if (!read_array(payload, size, sizeof head + i * sizeof handle, 1, &handle))
      host_.fatal("mpi: truncated start event");
    // A replay may force a persistent wildcard receive's source for this start.
    std::int32_t source = kStartAsPosted;
    if ((head.flags & kStartForcedSources) != 0 &&
        !read_array(payload, size, sources_at + i * sizeof source, 1, &source))
      host_.fatal("mpi: truncated start event (forced sources)");
    auto it = requests_.find(handle);
    if (it == requests_.end() || !it->second.persistent) continue;
    Request& r = it->second;
    if (r.kind == ReqKind::Collective) {
      start_collective(r.call, r.comm, r.root, false, ctl, out, r);
    } else {
      start_p2p(r, head.pc, ctl, out, source);
    }
  }
}

void MpiTranslator::on_cancel(const RequestEvent& e, ExchangeControl& ctl) {
  // The outcome comes with the completion; until then a receive may have
  // matched nothing, and receives after it on its queue must not merge.
  auto it = requests_.find(e.request);
  if (it == requests_.end()) return;
  Request& r = it->second;
  r.cancel_requested = true;
  if (r.kind == ReqKind::Receive && r.receive) ctl.hold_receive(r.receive);
}

void MpiTranslator::on_request_free(const RequestEvent& e, ExchangeControl& ctl) {
  // An active request completes without being reported; what it waited for
  // is never merged, as MPI gives the program no completion either.
  auto it = requests_.find(e.request);
  if (it == requests_.end()) return;
  const Request& r = it->second;
  if (!r.persistent || r.active) {
    if (r.kind == ReqKind::SyncSend && r.send) ctl.discard_answer(r.send);
    if (r.kind == ReqKind::Receive && r.receive) {
      r.comm->order.completed(r.receive, ctl);
      ctl.abandon_receive(r.receive);
    }
  }
  requests_.erase(it);
}

ReceiveToken MpiTranslator::post_receive(const CommPtr& c, std::int32_t source, std::int32_t tag,
                                         std::uint64_t pc, ExchangeControl& ctl,
                                         bool completes_here) {
  // A wildcard receive a replay forced to one source matches only that one,
  // and stays one of the program's wildcard receives for the analyses.
  const bool forced = is_forced_source(source);
  if (forced) source = unforced_source(source);
  PostedReceive p;
  p.token = ctl.new_receive();
  p.want_source =
      source == kRankAny ? kRankAny : static_cast<std::int32_t>(peer_of(*c, source).value);
  p.want_tag = tag;
  if (p.want_source != kRankAny && p.want_tag != kTagAny) {
    p.resolved = true;
    p.source = Rank{static_cast<std::uint32_t>(p.want_source)};
    p.tag = p.want_tag;
  }
  if (noting_)
    noting_->posted(p.token, c->id.value, p.want_source, p.want_tag, pc, forced);
  if (!completes_here || !c->order.idle()) c->order.posted(p.token, p.want_source, p.want_tag, ctl);
  if (p.resolved) c->order.matched(p.token, p.source, p.tag, ctl);
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
      p.source = peer_of(*c, status_source);
      p.tag = status_tag;
      c->order.matched(t, p.source, p.tag, ctl);
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
  const ReceiveToken t = post_receive(c, e.source, e.tag, e.pc, ctl, true);
  resolve_receive(c, t, e.status_source, e.status_tag, ctl);
  count_message(Direction::Received, *c, peer_of(*c, e.status_source), e.status_tag);
  c->order.completed(t, ctl);
  if (noting_) noting_->completed(t);
  out.push(Op::wait(t, posted_here(e.source), e.bytes));
  out.push(Op::snapshot(t));
}

void MpiTranslator::on_irecv(const IrecvEvent& e, ExchangeControl& ctl, CallProgram& out) {
  Request r;
  if (e.source != kRankProcNull) {
    r.kind = ReqKind::Receive;
    r.comm = comm(e.comm);
    r.receive = post_receive(r.comm, e.source, e.tag, e.pc, ctl);
    r.wildcard = e.source == kRankAny;
    r.peer = e.source;
    r.tag = e.tag;
    // A synchronous sender is answered with the clock at posting time.
    out.push(Op::snapshot(r.receive));
  }
  requests_[e.request] = std::move(r);
}

void MpiTranslator::on_mprobe(const MprobeEvent& e, ExchangeControl& ctl, CallProgram& out) {
  if (e.status_source == kRankProcNull) return;  // MPI_MESSAGE_NO_PROC
  // The probe matched the message: it takes its queue position here, and a
  // synchronous sender is answered with this clock.
  const CommPtr& c = comm(e.comm);
  const ReceiveToken t = post_receive(c, e.source, e.tag, e.pc, ctl);
  resolve_receive(c, t, e.status_source, e.status_tag, ctl);
  count_message(Direction::Received, *c, peer_of(*c, e.status_source), e.status_tag);
  out.push(Op::snapshot(t));
  messages_[e.message] = {t, c};
  if (e.source == kRankAny) wildcard_messages_.insert(e.message);
}

void MpiTranslator::on_mrecv(Call call, const MrecvEvent& e, ExchangeControl& ctl,
                             CallProgram& out) {
  auto it = messages_.find(e.message);
  if (it == messages_.end()) {
    if (e.request != 0) requests_[e.request] = Request{};
    return;  // MPI_MESSAGE_NO_PROC
  }
  auto [token, c] = std::move(it->second);
  messages_.erase(it);
  const bool wildcard = wildcard_messages_.erase(e.message) != 0;
  if (call == Call::Mrecv || call == Call::Mrecv_c) {
    c->order.completed(token, ctl);
    if (noting_) noting_->completed(token);
    out.mark_clocked();
    out.push(Op::wait(token, wildcard ? kWaitWildcard : 0, e.bytes));
    return;
  }
  Request r;
  r.kind = ReqKind::Receive;
  r.wildcard = wildcard;
  r.probed = true;
  r.receive = token;
  r.comm = std::move(c);
  requests_[e.request] = std::move(r);
}

void MpiTranslator::on_completion(Call call, const std::uint8_t* payload, std::size_t size,
                                  ExchangeControl& ctl, CallProgram& out) {
  // Only a call that waits for every request it names blocks until each
  // send's receive is posted; a test, or a wait for any of them, returns
  // with what has completed, which buffering may decide.
  const bool waits_for_all = call == Call::Wait || call == Call::Waitall;
  CompletionEvent head;
  if (!read_array(payload, size, 0, 1, &head)) host_.fatal("mpi: short completion event");
  for (std::uint32_t i = 0; i < head.count; ++i) {
    Completion c;
    if (!read_array(payload, size, sizeof head + i * sizeof c, 1, &c))
      host_.fatal("mpi: truncated completion event");
    auto it = requests_.find(c.request);
    if (it == requests_.end()) {
      complete_rma_request(c.request, out);  // a request vcx does not clock
      continue;
    }
    Request local;
    Request& r = it->second.persistent ? it->second : local;
    if (!it->second.persistent) {
      local = std::move(it->second);
      requests_.erase(it);
    }
    r.active = false;
    switch (r.kind) {
      case ReqKind::Receive:
        if (r.status_unreliable) {
          // Its match is unknown: placing it anywhere could invent an edge.
          if (!warned_isendrecv_wildcard_) {
            warned_isendrecv_wildcard_ = true;
            spdlog::warn(
                "rank {}: MPI_Isendrecv with MPI_ANY_SOURCE or MPI_ANY_TAG: this MPI does not "
                "report the matched message in the status, so vcx leaves that receive "
                "unclocked (its edge is missing; receives it could have matched are placed "
                "as if it matched nothing)",
                self_.value);
          }
          r.comm->order.unmatched(r.receive, ctl);
          forget_posted(*r.comm, r.receive, ctl);
          ctl.drop_receive(r.receive);
          break;
        }
        if (c.cancelled || c.source == kRankProcNull) {
          r.comm->order.unmatched(r.receive, ctl);
          forget_posted(*r.comm, r.receive, ctl);
          ctl.drop_receive(r.receive);
          break;
        }
        if (r.cancel_requested) ctl.release_hold(r.receive);  // the cancel failed
        r.cancel_requested = false;
        resolve_receive(r.comm, r.receive, c.source, c.tag, ctl);
        if (!r.probed) count_message(Direction::Received, *r.comm, peer_of(*r.comm, c.source), c.tag);
        r.comm->order.completed(r.receive, ctl);
        if (noting_) noting_->completed(r.receive);
        out.mark_clocked();
        out.push(Op::wait(r.receive, r.wildcard ? kWaitWildcard : 0, c.bytes));
        break;
      case ReqKind::SyncSend:
        if (c.cancelled) {
          warn_cancelled_send();
          ctl.discard_answer(r.send);
          break;
        }
        out.mark_clocked();
        out.push(Op::wait_ack(r.send));
        if (noting_) noting_->sync_send_completed(r.send);
        if (waits_for_all) out.push(Op::send_completed(r.send));
        break;
      case ReqKind::Collective:
        complete_collective(r, out);
        break;
      case ReqKind::Send:
        if (c.cancelled) {
          warn_cancelled_send();
          break;
        }
        if (waits_for_all && r.needs_receiver) out.push(Op::send_completed(r.send));
        break;
      case ReqKind::Nothing:
        break;
    }
  }
}

void MpiTranslator::warn_cancelled_send() {
  if (warned_cancelled_send_) return;
  warned_cancelled_send_ = true;
  spdlog::warn(
      "rank {}: a send was cancelled; vcx does not renumber its queue, so receives on it "
      "after this one may merge the wrong send's clock (MPICH never cancels sends)",
      self_.value);
}

void MpiTranslator::on_sendrecv(const SendrecvEvent& e, ExchangeControl& ctl, CallProgram& out) {
  const CommPtr& c = comm(e.comm);
  // The send completes with the call: without buffering, once its receive
  // is posted.
  SendToken sent{};
  if (e.dest != kRankProcNull) {
    out.mark_clocked();
    sent = emit_send(c, e.dest, e.send_tag, false, e.send_bytes, ctl, out);
  }
  if (e.source != kRankProcNull && e.status_source != kRankProcNull) {
    out.mark_clocked();
    const ReceiveToken t = post_receive(c, e.source, e.recv_tag, e.pc, ctl, true);
    resolve_receive(c, t, e.status_source, e.status_tag, ctl);
    count_message(Direction::Received, *c, peer_of(*c, e.status_source), e.status_tag);
    c->order.completed(t, ctl);
    if (noting_) noting_->completed(t);
    out.push(Op::wait(t, posted_here(e.source), e.recv_bytes));
    out.push(Op::snapshot(t));
  }
  if (sent) out.push(Op::send_completed(sent));
}

void MpiTranslator::on_isendrecv(const IsendrecvEvent& e, ExchangeControl& ctl,
                                 CallProgram& out) {
  // Like MPI_Isend and MPI_Irecv in one call: the send signals now, the
  // receive is posted now and waited for at the completion.
  Request r;
  r.comm = comm(e.comm);
  if (e.dest != kRankProcNull) {
    out.mark_clocked();
    emit_send(r.comm, e.dest, e.send_tag, false, e.send_bytes, ctl, out);
  }
  if (e.source != kRankProcNull) {
    r.kind = ReqKind::Receive;
    r.receive = post_receive(r.comm, e.source, e.recv_tag, e.pc, ctl);
    r.wildcard = e.source == kRankAny;
    r.peer = e.source;
    r.tag = e.recv_tag;
    r.status_unreliable = e.source == kRankAny || e.recv_tag == kTagAny;
    out.push(Op::snapshot(r.receive));
  }
  requests_[e.request] = std::move(r);
}

}  // namespace vcx::mpi
