// The MPI translator: raw MPI events → exchange primitives (docs/clock-rules.md).
//
// Point-to-point queues are (source, destination, communicator, tag). MPI
// matches messages of one source to receives in posting order, so receives
// are bound to queue positions in posting order; a receive whose source or
// tag is a wildcard is bound once its status is known, and receives posted
// after it that it could have taken wait for it.
//
// The implementation is split by concept: p2p.cpp (sends, receives,
// persistent requests, matched probes, completions), collectives.cpp
// (blocking, non-blocking, persistent, neighbourhood, intercommunicator),
// communicators.cpp (constructors and ids).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "../common/mpi_events.h"
#include "comm_table.h"
#include "receive_notes.h"
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
  enum class ReqKind : std::uint8_t {
    Nothing,     // nothing to do at completion (standard send, PROC_NULL, ...)
    Send,        // a started send that needs no answer
    SyncSend,    // waits for the receiver's answer at completion
    Receive,     // waits for its signal at completion
    Collective,  // completes a collective instance
  };
  // A pending or persistent request.
  struct Request {
    ReqKind kind = ReqKind::Nothing;
    SendToken send{};
    ReceiveToken receive{};
    CommPtr comm;
    // Collectives: the instance and whether this member waits at completion.
    CollectiveRef coll{};
    bool coll_waits = false;
    std::vector<ReceiveToken> neighbour_receives;
    // Persistent requests: what each MPI_Start initiates, and whether one
    // is in progress.
    bool persistent = false;
    bool active = false;
    // Persistent collectives match by their initialisation, not by the
    // order of starts: the number the _init call took in the
    // communicator's collective sequence, and the starts so far.
    std::uint64_t collective_init = 0;
    std::uint64_t collective_starts = 0;
    // The completion's status cannot be trusted to name the match (MPICH
    // 4.0.2 leaves an MPI_Isendrecv request's status empty).
    bool status_unreliable = false;
    bool wildcard = false;  // a receive posted for any source
    std::uint64_t bytes = 0;  // a persistent send's message size (traces)
    bool cancel_requested = false;  // MPI_Cancel was called on it
    Call call = Call::Count;
    std::int32_t peer = 0;  // destination or source (communicator rank)
    std::int32_t tag = 0;
    std::int32_t root = 0;
    std::uint64_t instance = 0;  // collectives: the instance it started
    bool probed = false;         // MPI_Imrecv: its message was matched by the probe
    // A send that completes only once its receive is posted when MPI does
    // not buffer (standard and synchronous modes).
    bool needs_receiver = false;
  };

  void dispatch(const EventHeader& ev, ExchangeControl& ctl, CallProgram& out);

  // ---- point-to-point (p2p.cpp) ----
  void on_send(Call call, const SendEvent& e, ExchangeControl& ctl, CallProgram& out);
  void on_send_init(Call call, const SendEvent& e);
  void on_recv(const RecvEvent& e, ExchangeControl& ctl, CallProgram& out);
  void on_irecv(const IrecvEvent& e, ExchangeControl& ctl, CallProgram& out);
  void on_recv_init(const IrecvEvent& e);
  void on_start(const std::uint8_t* payload, std::size_t size, ExchangeControl& ctl,
                CallProgram& out);
  void on_request_free(const RequestEvent& e, ExchangeControl& ctl);
  void on_cancel(const RequestEvent& e, ExchangeControl& ctl);
  void warn_cancelled_send();
  void on_mprobe(const MprobeEvent& e, ExchangeControl& ctl, CallProgram& out);
  void on_mrecv(Call call, const MrecvEvent& e, ExchangeControl& ctl, CallProgram& out);
  void on_completion(Call call, const std::uint8_t* payload, std::size_t size, ExchangeControl& ctl,
                     CallProgram& out);
  void on_sendrecv(const SendrecvEvent& e, ExchangeControl& ctl, CallProgram& out);
  void on_isendrecv(const IsendrecvEvent& e, ExchangeControl& ctl, CallProgram& out);

  // Emits the signal of a send to peer rank `dest`; returns its token.
  SendToken emit_send(const CommPtr& c, std::int32_t dest, std::int32_t tag, bool sync,
                      std::uint64_t bytes,
                      ExchangeControl& ctl, CallProgram& out);
  // Posts a receive (wildcards allowed) and binds what can be bound; `pc`
  // is the posting call's return address in the application (0 if unknown);
  // `completes_here`: the call also completes it (MPI_Recv, MPI_Sendrecv).
  ReceiveToken post_receive(const CommPtr& c, std::int32_t source, std::int32_t tag,
                            std::uint64_t pc, ExchangeControl& ctl,
                            bool completes_here = false);
  // The receive's status is known: resolve it and bind what can be bound.
  void resolve_receive(const CommPtr& c, ReceiveToken t, std::int32_t status_source,
                       std::int32_t status_tag, ExchangeControl& ctl);
  void bind_ready(CommData& c, ExchangeControl& ctl);
  // A posted receive that will never match (cancelled): stop holding others back.
  void forget_posted(CommData& c, ReceiveToken t, ExchangeControl& ctl);
  // Starts one persistent point-to-point request (by the call at `pc`).
  // `source`: the source a replay forced for this start (forced_source), or
  // kStartAsPosted.
  void start_p2p(Request& r, std::uint64_t pc, ExchangeControl& ctl, CallProgram& out,
                 std::int32_t source = kStartAsPosted);

  // ---- wait states for the deadlock analysis (wait_states.cpp) ----
 public:
  bool wait_state(const channel::BlockedCall& call, WaitState* out) override;
  void wait_facts(WaitFacts* out) const override;

 private:
  enum class Direction : std::uint8_t { Sent, Received };
  // The tags of window epoch signals counted as messages (never an MPI tag).
  static constexpr std::int32_t kPostSignalTag = -2, kCompleteSignalTag = -3;
  // One more message sent to or received from world rank `peer`.
  void count_message(Direction d, const CommData& c, Rank peer, std::int32_t tag);
  std::string comm_name(const CommData& c) const;
  // Collective `instance` on c is operation `call` (root: communicator rank).
  void note_collective(CommData& c, std::uint64_t instance, Call call, std::int32_t root);
  // The operation a collective call is, for matching members' calls: a
  // large-count form (MPI_Bcast_c) is its plain form's operation, listed
  // right after it.
  static std::uint16_t operation_of(std::uint16_t call);
  // The communicator of a handle, or null: a blocked call's arguments may be
  // the program's mistake (vcx reports those, never fails on them).
  const CommData* find_comm(std::uint64_t handle) const;
  // Whether `rank` names a peer of c (a rank in it, or a wildcard or forced source).
  static bool valid_peer(const CommData& c, std::int32_t rank);
  WaitCondition message_condition(const CommData& c, std::int32_t source, std::int32_t tag);
  std::string source_text(const CommData& c, std::int32_t rank);
  // A blocking receive or probe from `source` (communicator rank or wildcard).
  bool receive_wait(const std::string& name, std::uint64_t comm_handle, std::int32_t source,
                    std::int32_t tag, std::uint64_t pc, WaitState* out);
  static std::string tag_text(std::int32_t tag);
  struct MessageKey {
    std::uint64_t comm;
    std::uint32_t peer;
    std::int32_t tag;
    bool operator==(const MessageKey&) const = default;
  };
  struct MessageKeyHash {
    std::size_t operator()(const MessageKey& k) const noexcept;
  };
  std::unordered_map<MessageKey, std::uint64_t, MessageKeyHash> sent_counts_, received_counts_;

  // ---- collectives (collectives.cpp) ----
  void on_collective(Call call, const CollectiveEvent& e, ExchangeControl& ctl,
                     CallProgram& out);
  void on_pcollective(Call call, const CollectiveEvent& e);
  // Starts one collective instance (blocking call, initiation, persistent
  // start). Fills `req` with what the completion needs.
  void start_collective(Call call, const CommPtr& c, std::int32_t root, bool blocking,
                        ExchangeControl& ctl, CallProgram& out, Request& req);
  void complete_collective(Request& r, CallProgram& out);

  // ---- one-sided communication (rma.cpp) ----
  struct WinData {
    GroupId id{};
    std::vector<Rank> members;          // the window's group, in rank order
    std::uint64_t collectives = 0;      // fences and the free
    std::vector<Rank> access;           // targets of the open access epoch (start)
    // Targets of the latest access epoch MPI_Win_complete ended: the call
    // may still wait for their posts (the deadlock analysis).
    std::vector<Rank> completed_access;
    std::vector<Rank> exposure;         // origins of the open exposure epoch (post)
    std::unordered_map<std::uint32_t, bool> held;  // locks held: target → shared
    // Holdings MPI did not acquire (MPI_MODE_NOCHECK): their unlocks release
    // nothing either.
    std::unordered_set<std::uint32_t> held_nocheck;  // MPI_Win_lock, by target
    bool all_nocheck = false;                         // MPI_Win_lock_all
    bool holds_all = false;  // MPI_Win_lock_all (not MPI_MODE_NOCHECK) until unlock_all
    // Accesses of data calls not complete yet (for the analyses' notes).
    struct OpenAccess {
      std::uint64_t id;
      std::uint32_t target;  // world rank
      bool local;            // complete once the operation is locally complete
      std::uint64_t request; // request-based forms: the request, 0 otherwise
    };
    std::vector<OpenAccess> open;
  };
  using WinPtr = std::shared_ptr<WinData>;
  // The lock of `target` in window `win`, as the exchange and the deadlock
  // analysis name it.
  static std::uint64_t lock_id(GroupId win, Rank target);
  // The lock a rank was last seen blocked acquiring in MPI_Win_lock (0:
  // none): the translation of its event counts it held already, but it is
  // not held until granted. Set by wait_state, cleared by any translation.
  std::uint64_t acquiring_ = 0;
  // The same for MPI_Win_lock_all: the window whose locks it is acquiring.
  const WinData* acquiring_all_ = nullptr;
  // Post/start/complete/wait counted like messages on the window's group
  // (wait_states.cpp), so that the deadlock analysis sees which epochs a
  // rank waits for as messages sent and not yet taken.
  void count_epoch_signal(Direction d, const WinData& w, Rank peer, std::int32_t tag);
  // The window of a handle, or nullptr (the deadlock analysis asks about
  // calls whose events may not name a window vcx saw).
  const WinData* find_window(std::uint64_t handle) const;
  // A collective condition of a one-to-all call (root set): for the root only.
  void wait_for_root_only(WaitCondition& c) const;
  // A wait in MPI_Win_fence, MPI_Win_complete or MPI_Win_wait.
  bool window_wait(Family f, const channel::BlockedCall& blocked, WaitState* out);
  void on_win_create(Call call, const WinCreateEvent& e, ExchangeControl& ctl, CallProgram& out);
  // Notes for the analyses (vcx/analysis.h): accesses of data calls, and
  // where synchronisation completes them.
  bool notes_wanted();
  static std::uint64_t space_of(GroupId win, Rank member);
  void on_rma_access(Call call, const RmaAccessEvent& e, const class Payload& p, CallProgram& out);
  void on_win_flush(Call call, const WinEvent& e, CallProgram& out);
  void on_win_attach(Call call, const WinAttachEvent& e, CallProgram& out);
  void on_local_accesses(const class Payload& p, CallProgram& out);
  // Completes the open accesses of `w` that `which` selects, at the call
  // with return address `pc`.
  template <class Which>
  void complete_accesses(WinData& w, CallProgram& out, std::uint64_t pc, Which&& which);
  // A completed request of a request-based data call.
  bool complete_rma_request(std::uint64_t request, CallProgram& out);
  void on_win(Family f, const WinEvent& e, ExchangeControl& ctl, CallProgram& out);
  void on_win_group(Family f, const std::uint8_t* payload, std::size_t size, ExchangeControl& ctl,
                    CallProgram& out);
  WinData& win(std::uint64_t handle);

  // ---- user annotations (annotations.cpp) ----
  void on_annotate(Call call, const AnnotateEvent& e, ExchangeControl& ctl, CallProgram& out);

  // ---- communicators (communicators.cpp) ----
  void on_init(const InitEvent& e, ExchangeControl& ctl);
  void on_comm_create(Call call, const std::uint8_t* payload, std::size_t size,
                      ExchangeControl& ctl);
  void on_comm_free(const CommFreeEvent& e);

  const CommPtr& comm(std::uint64_t handle);
  Rank world_of(const std::vector<Rank>& group, std::int32_t rank);
  Rank peer_of(const CommData& c, std::int32_t rank) { return world_of(c.peers(), rank); }
  static QueueId queue_of(const CommData& c, std::int32_t tag) {
    return QueueId{c.id.value, static_cast<std::uint64_t>(static_cast<std::uint32_t>(tag))};
  }

  ToolHost& host_;
  Rank self_;
  std::uint32_t world_size_;
  std::unordered_map<std::uint64_t, CommPtr> comms_;
  std::unordered_map<GroupId, std::weak_ptr<CommData>> by_id_;
  std::unordered_map<std::uint64_t, Request> requests_;
  std::unordered_map<std::uint64_t, WinPtr> windows_;
  // Request-based data calls whose request is not complete: request → window.
  std::unordered_map<std::uint64_t, WinPtr> rma_requests_;
  std::uint64_t next_access_id_ = 0;
  std::uint16_t windows_made_ = 0;  // this rank's windows, in creation order
  int notes_wanted_ = -1;  // unknown until the first question
  int receive_notes_wanted_ = -1;
  // While an event is translated with receive notes: what writes them.
  ReceiveNoting* noting_ = nullptr;
  // Matched probes: the message handle → its receive and communicator.
  std::unordered_map<std::uint64_t, std::pair<ReceiveToken, CommPtr>> messages_;
  std::unordered_set<std::uint64_t> wildcard_messages_;  // matched by a probe for any source
  // Constructors collective over a group or a pair of groups, by key.
  std::unordered_map<std::uint64_t, std::uint64_t> context_counts_;
  std::size_t unbound_ = 0;  // posted receives not yet bound, over all communicators
  bool pending_registered_ = false;
  bool warned_isendrecv_wildcard_ = false;
  bool warned_cancelled_send_ = false;
};

}  // namespace vcx::mpi
