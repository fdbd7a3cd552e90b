// The MPI translator: raw MPI events → exchange primitives (DESIGN §3.1).
//
// Point-to-point queues are (source, destination, communicator, tag). MPI
// matches messages of one source to receives in posting order, so receives
// are bound to queue positions in posting order; a receive whose source or
// tag is a wildcard is bound once its status is known, and receives posted
// after it that it could have taken wait for it.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "../common/mpi_events.h"
#include "comm_table.h"
#include "vcx/plugin.h"
#include "vcx/translator.h"

namespace vcx::mpi {

class MpiTranslator final : public Translator, public PendingReceives, public Plugin {
 public:
  explicit MpiTranslator(ToolHost& host);

  Translator* translator() override { return this; }

  Model model() const override { return Model::Mpi; }
  const char* call_name(std::uint16_t call) const override;
  void translate(const EventHeader& ev, ExchangeControl& ctl, CallProgram& out) override;

  // PendingReceives: an unresolved wildcard receive could still take it.
  bool could_bind_later(Rank src, QueueId queue) const override;

 private:
  enum class ReqKind : std::uint8_t { Send, SyncSend, Receive, Nothing };
  struct Request {
    ReqKind kind = ReqKind::Nothing;
    SendToken send{};
    ReceiveToken receive{};
    CommPtr comm;
  };

  void on_init(const InitEvent& e, ExchangeControl& ctl);
  void on_send(Call call, const SendEvent& e, ExchangeControl& ctl, CallProgram& out);
  void on_recv(const RecvEvent& e, ExchangeControl& ctl, CallProgram& out);
  void on_irecv(const IrecvEvent& e, ExchangeControl& ctl, CallProgram& out);
  void on_completion(const std::uint8_t* payload, std::size_t size, ExchangeControl& ctl,
                     CallProgram& out);
  void on_sendrecv(const SendrecvEvent& e, ExchangeControl& ctl, CallProgram& out);
  void on_collective(Call call, const CollectiveEvent& e, ExchangeControl& ctl, CallProgram& out);
  void on_comm_create(const std::uint8_t* payload, std::size_t size, ExchangeControl& ctl);
  void on_comm_free(const CommFreeEvent& e);

  // Emits the signal of a send to comm rank `dest`; returns its token.
  SendToken emit_send(const CommPtr& c, std::int32_t dest, std::int32_t tag, bool sync,
                      ExchangeControl& ctl, CallProgram& out);
  // Posts a receive (wildcards allowed) and binds what can be bound.
  ReceiveToken post_receive(const CommPtr& c, std::int32_t source, std::int32_t tag,
                            ExchangeControl& ctl);
  // The receive's status is known: resolve it and bind what can be bound.
  void resolve_receive(const CommPtr& c, ReceiveToken t, std::int32_t status_source,
                       std::int32_t status_tag, ExchangeControl& ctl);
  void bind_ready(CommData& c, ExchangeControl& ctl);
  // A posted receive that will never match (cancelled): stop holding others back.
  void forget_posted(CommData& c, ReceiveToken t, ExchangeControl& ctl);

  const CommPtr& comm(std::uint64_t handle);
  Rank world_of(const CommData& c, std::int32_t comm_rank);
  static QueueId queue_of(const CommData& c, std::int32_t tag) {
    return QueueId{c.id.value, static_cast<std::uint64_t>(static_cast<std::uint32_t>(tag))};
  }

  ToolHost& host_;
  Rank self_;
  std::uint32_t world_size_;
  std::unordered_map<std::uint64_t, CommPtr> comms_;
  std::unordered_map<GroupId, std::weak_ptr<CommData>> by_id_;
  std::unordered_map<std::uint64_t, Request> requests_;
  std::size_t unbound_ = 0;  // posted receives not yet bound, over all communicators
  bool pending_registered_ = false;
};

}  // namespace vcx::mpi
