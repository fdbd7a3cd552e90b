// The generic exchange: runs call programs in program order on this process's
// vector clock, exchanging clocks with the other tool processes.
//
// Point-to-point: a signal carries the clock and its position on its queue;
// the receiving engine stores it until the receive bound to that position
// waits for it. Synchronous sends are answered from the receive's snapshot.
// Collectives: binomial trees over the group; all-to-all sends, per member,
// only its own entry and the entries of non-members: no rank's entry is
// larger anywhere than at the rank itself, so other members' copies add nothing.
#pragma once

#include <array>
#include <deque>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "clock_baselines.h"
#include "clock_codec.h"
#include "clock_pool.h"
#include "messages.h"
#include "slab.h"
#include "vcx/exchange.h"
#include "vcx/plugin.h"
#include "vcx/transport.h"

namespace vcx::vclock {

struct PeerQueue {
  Rank peer{};
  QueueId queue{};
  bool operator==(const PeerQueue&) const = default;
};
struct PeerQueueHash {
  std::size_t operator()(const PeerQueue& k) const noexcept {
    return static_cast<std::size_t>(
        hash_combine(hash_combine(mix64(k.peer.value), k.queue.a), k.queue.b));
  }
};

struct CollKey {
  GroupId group{};
  std::uint64_t instance = 0;
  bool operator==(const CollKey&) const = default;
};
struct CollKeyHash {
  std::size_t operator()(const CollKey& k) const noexcept {
    return static_cast<std::size_t>(hash_combine(mix64(k.group.value), k.instance));
  }
};

class VclockEngine final : public ExchangeEngine, public ExchangeControl, public Plugin {
 public:
  VclockEngine(ToolHost& host, PeerTransport& transport, Rank self, std::uint32_t width);
  ~VclockEngine() override;

  // Plugin
  ExchangeEngine* engine() override { return this; }

  // ExchangeEngine
  ExchangeControl& control() override { return *this; }
  void enqueue(const CallProgram& program, bool needs_reply) override;
  void run() override;
  bool idle() const override { return programs_.empty(); }
  std::size_t backlog() const override { return programs_.size(); }
  bool must_not_stall() const override;
  std::string blocked_on() const override;
  std::uint64_t replies_allowed_through() const override;
  void add_observer(ClockedCallObserver* o) override {
    observers_.push_back(o);
    if (o->wants_notes() || o->wants_receive_notes()) note_observers_.push_back(o);
    if (o->wants_signals()) signal_observers_.push_back(o);
  }
  ClockSpan clock() const override { return clock_.view(); }
  std::uint64_t clocked_calls() const override { return clocked_calls_; }
  std::uint64_t leased_acquisitions() const override { return leased_acquisitions_; }

  // ExchangeControl
  void register_group(GroupId id, std::span<const Rank> members,
                      std::uint32_t second_side) override;
  ReceiveToken new_receive(bool answers_synchronous) override;
  void bind_receive(ReceiveToken t, Rank src, QueueId queue) override;
  void drop_receive(ReceiveToken t) override;
  void hold_receive(ReceiveToken t) override;
  void release_hold(ReceiveToken t) override;
  void abandon_receive(ReceiveToken t) override;
  void discard_answer(const SendToken& t) override;
  void order_receive_after(ReceiveToken later, ReceiveToken earlier) override;
  void keep_receive_order(ReceiveToken t) override;
  void end_receive_order(ReceiveToken t) override;
  void add_pending_receives(const PendingReceives* p) override { pending_.push_back(p); }
  SendToken reserve_send(Rank dst, QueueId queue) override;

  // Diagnostics for tests.
  std::size_t pooled_clocks_in_use() const { return pool_.in_use(); }
  std::size_t live_receives() const { return receives_.live(); }
  std::size_t live_collectives() const { return collectives_.size(); }
  std::size_t pending_grants() const { return grants_.size(); }
  std::size_t order_gates() const { return gates_.size(); }
  std::size_t flag_deposits() const { return flag_deposits_; }
  bool dependent() const { return announced_dependent_; }
  const PeerBaselines& baselines() const { return baselines_; }

 private:
  // ---- point-to-point state ----
  struct Slot {  // one position of an incoming queue
    ClockValue* clock = nullptr;  // the deposited clock, once arrived
    std::uint64_t receive = 0;    // bound receive token, 0 if none yet
    bool arrived = false;
    bool synchronous = false;
    bool merged = false;          // the bound receive merged it
    bool answered = false;        // acknowledgement sent (or not needed)
    bool ack_wanted = false;      // the sender waits for the answer
    bool deferred = false;        // the sender was told the answer is deferred
    bool order_deferred = false;  // ... because earlier receives' matches are not in yet
    bool discard = false;         // nobody will wait for it: drop on arrival
  };
  struct InQueue {
    std::uint64_t base = 1;  // position of slots.front()
    std::uint64_t next_bind = 1;
    std::deque<Slot> slots;
    std::vector<std::uint64_t> held;  // positions of receives with a cancel pending
    Slot& at(std::uint64_t pos);
  };
  // Receives waiting for the contribution of an earlier one, by their tokens:
  // as a rule one (a chain of receives), kept without an allocation.
  struct Followers {
    std::uint64_t first = 0;
    bool has_first = false;
    std::vector<std::uint64_t> more;
    bool empty() const { return !has_first; }
    void add(std::uint64_t t) {
      if (!has_first) {
        first = t;
        has_first = true;
      } else {
        more.push_back(t);
      }
    }
    template <class F>
    void each(F&& f) const {
      if (has_first) f(first);
      for (const std::uint64_t t : more) f(t);
    }
  };
  struct Receive {
    bool bound = false;
    PeerQueue key{};
    std::uint64_t pos = 0;
    ClockValue* snapshot = nullptr;
    bool snapshot_taken = false;
    bool merged = false;
    bool abandoned = false;  // its completion will never be waited for
    bool held = false;       // a cancel is pending on it
    // Receive order (receive_order.cpp): what the matches of the earlier
    // receives it follows bring to its answer, how many of those are still
    // to come, and its own message's clock kept past its merge while later
    // receives may still follow it.
    ClockValue* carry = nullptr;
    ClockValue* matched = nullptr;
    std::uint32_t follows_pending = 0;
    bool kept = false;
    Followers followers;  // the later receives waiting for this one's contribution
  };

  // ---- collectives (collectives.cpp) ----
  struct GroupInfo {
    std::vector<Rank> members;
    std::int64_t self_pos = -1;
    std::uint32_t second_side = 0;  // first position of the second side, 0 if none
  };
  // The part of the group one phase runs over: positions [base, base+size),
  // as a binomial tree rooted at base+root.
  struct Span {
    std::uint32_t base = 0;
    std::uint32_t size = 0;
    std::uint32_t root = 0;  // relative to base
  };
  struct CollState {
    CollectiveKind kind = CollectiveKind::AllToAll;
    Rank root{};
    bool initialised = false;
    std::uint32_t children_expected = 0;
    std::uint32_t children_received = 0;
    ClockValue* up = nullptr;    // what goes towards the tree root (max)
    ClockValue* down = nullptr;  // what comes from it: result, root's clock, prefix
    bool contributed = false;
    // Contributed as the call was queued (contribute_ahead): its up message
    // goes aside, and its result goes down only once the engine has reached
    // the call, so that every message that keeps a baseline leaves in
    // program order.
    bool ahead = false;
    bool reached = false;        // the engine ran the contribution
    bool up_done = false;        // sent on, or the result computed
    bool down_ready = false;
    bool down_sent = false;      // passed on down the tree
    bool completed = false;
    std::vector<std::vector<std::uint8_t>> early;  // messages before the group was known
  };

  // ---- resources (resources.cpp) ----
  // One holding of a lock: the requester and its acquisition number.
  struct HoldingId {
    Rank rank{};
    std::uint64_t number = 0;
    bool operator==(const HoldingId&) const = default;
  };
  // A lock as its deposition keeps it. The order of holdings is decided as
  // requests and releases arrive from the applications; the clocks follow
  // from the engines, possibly later, so a grant's clock may have to wait
  // for releases that are ordered before it but not yet in.
  struct LockState {
    // Order.
    std::uint32_t shared_holders = 0;
    bool exclusive_held = false;
    struct Request {
      Rank requester;
      std::uint64_t number;
      bool shared;
      std::uint16_t flags;  // the acquisition's ResourceFlags
    };
    std::deque<Request> waiting;
    bool retired = false;  // freed once its holders released it
    // Clocks every later grant merges: the last exclusive holder's release
    // (for deposits: every deposit's), and the shared releases since, each
    // as far as arrived; the holdings whose release clocks are still to come.
    ClockValue* exclusive_release = nullptr;
    ClockValue* shared_releases = nullptr;
    std::vector<HoldingId> exclusive_pending;
    std::vector<HoldingId> shared_pending;
    // Grants whose clocks wait for release clocks.
    struct PendingGrant {
      Rank to;
      std::uint64_t number;
      std::uint16_t flags;
      ClockValue* partial;  // the needed releases that arrived, merged
      std::vector<HoldingId> needs;
    };
    std::vector<PendingGrant> grants;
    // Holders that may keep the lock as a lease and were not recalled yet.
    std::vector<HoldingId> leased;
  };
  // ---- leases (leases.cpp) ----
  // A holding of a lock of this process that its application may keep
  // after releasing it (vcx/channel/lease_table.h). It lives from the
  // request until the deposition has the lock back and the engine ran every
  // release made under it.
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
    ClockValue* last_release = nullptr;  // the clock at the last release run
  };
  // A program whose acquisitions wait for their depositions' order grants;
  // no reply may overtake it.
  struct OrderGate {
    std::uint64_t event_seq;
    std::uint32_t outstanding;
  };

  // ---- flags (flags.cpp) ----
  // A registered write to a flag of this PE's memory.
  struct FlagDeposit {
    Rank writer{};
    std::uint64_t id = 0;         // the writer's name for the write
    std::uint64_t index = 0;      // registration number (this engine's, over every flag)
    std::uint16_t bits = 0;       // FlagMode, width, signedness; kFlagPending until known
    std::uint64_t value = 0;
    ClockValue* clock = nullptr;  // the writer's clock at the write, once arrived
  };
  struct FlagState {
    std::vector<FlagDeposit> deposits;  // registration order
  };

  struct QueuedProgram {
    Model model;
    std::uint16_t call;
    bool clocked;
    bool needs_reply;
    std::uint64_t event_seq;
    std::size_t op_count;
    std::size_t note_bytes;  // its notes, at notes_head_ in notes_ when it runs
  };

  // Program execution.
  void run_programs();
  bool execute(const Op& op);
  bool exec_wait(const Op& op);
  bool exec_wait_ack(const Op& op);
  bool exec_collective(const Op& op, bool complete);
  // Contributes to a blocking all-to-all over every rank as its call is
  // queued (collectives.cpp).
  void contribute_ahead(const CollectiveRef& c);
  void send_ahead(const CollectiveRef& c, ClockValue own_entry);
  void send_waiting_ahead();
  bool exec_acquire(const Op& op);
  void exec_release(const Op& op);
  // Sends the order requests and releases of the program queued at
  // ops_[first..] as it is queued, numbering its acquisitions.
  void request_resources(std::uint64_t event_seq, std::size_t first);
  void on_acquire(Rank src, const P2PHeader& h);
  void on_grant(Rank src, const P2PHeader& h);
  void on_grant_clock(Rank src, const P2PHeader& h, ClockSpan clock);
  void on_release(Rank src, const P2PHeader& h);
  void on_release_clock(Rank src, const P2PHeader& h, ClockSpan clock);
  void grant_waiting(std::uint64_t resource, LockState& l);
  void retire_resource(std::uint64_t resource);
  void maybe_free_lock(std::uint64_t resource);
  void free_lock(LockState& l);
  void recall_leases(std::uint64_t resource, LockState& l);
  // Leases, the holder's side.
  Lease* find_lease(const PeerQueue& lock, std::uint64_t number);
  Lease* find_live_lease(const PeerQueue& lock);
  void lease_granted(Lease& l, bool lease_allowed);
  bool lease_release_read(const Op& op, Lease& l);
  bool lease_release_executed(Lease& l);
  void take_lease(Lease& l);
  void end_lease(Lease& l, std::uint64_t releases_total);
  void finish_lease(Lease& l);
  void on_recall(Rank src, const P2PHeader& h);
  void end_leases_of(std::uint64_t object);
  void grant(Rank to, std::uint64_t resource, std::uint64_t number, std::uint16_t flags,
             LockState& l);
  void finish_program(const QueuedProgram& p);
  // Flags: the requests of the program queued at ops_[first..]
  // (registrations sent, snapshots taken), execution, and the deposition.
  void request_flags(std::uint64_t event_seq, std::size_t first);
  bool exec_flag_write(const Op& op);
  bool exec_flag_wait(const Op& op);
  // The head FlagWait cannot finish before a writer's application reports
  // what it wrote, or before a dependent writer's engine sends its clock.
  bool flag_wait_needs_application(const Op& op) const;
  std::string flag_wait_blocked_on(const Op& op) const;
  void on_flag_announce(Rank src, const P2PHeader& h);
  void on_flag_grant(Rank src, const P2PHeader& h);
  void on_flag_value(Rank src, const P2PHeader& h);
  void on_flag_clock(Rank src, const P2PHeader& h, ClockSpan clock);
  FlagDeposit* find_flag_deposit(std::uint64_t flag, Rank writer, std::uint64_t id);
  // Drops deposits that can no longer change this clock (their clocks are
  // below it), on one flag or, once enough accumulated, on all of them.
  void prune_flag(std::uint64_t flag);
  void maybe_sweep_flags();
  // Whether the head program cannot go on before the application reports
  // more, directly or through a peer that waits for its own application.
  bool waits_for_application() const;
  void announce_dependence();

  // Messages.
  void on_message(Rank src, std::span<const std::uint8_t> bytes);
  void on_signal(Rank src, const P2PHeader& h, ClockSpan clock);
  void on_ack(Rank src, const P2PHeader& h, ClockSpan clock);
  void on_need_ack(Rank src, const P2PHeader& h);
  void maybe_defer(const PeerQueue& key, std::uint64_t seq, Slot& s);
  void recheck_deferrals();
  bool could_bind_later(const PeerQueue& key) const;
  void on_collective(Rank src, const CollHeader& h, ClockSpan clock);
  void send_p2p(Rank dst, MsgType type, std::uint16_t flags, QueueId q, std::uint64_t seq,
                const ClockValue* clock);
  void send_coll(Rank dst, MsgType type, const CollKey& key, const CollState& st,
                 const ClockValue* clock, bool aside = false);
  // Header then clock, against the pair's baseline where there is one;
  // `aside`: out of program order, in a plain layout that leaves the pair's
  // baseline alone (kEncodingAside).
  template <class Header>
  void send_clock_message(Rank dst, const Header& h, const ClockValue* clock,
                          bool aside = false);
  // The clock that follows a header of `header_bytes`, into a pooled clock.
  ClockValue* read_clock(Rank src, std::span<const std::uint8_t> bytes, std::size_t header_bytes,
                         std::uint8_t encoding, std::uint32_t items, const char* what);

  // Receives.
  void try_answer(Receive& r, std::uint64_t token);
  // Receive order (receive_order.cpp).
  const ClockValue* matched_clock(const Receive& r);
  bool order_ready(const Receive& r);
  bool needs_matched(const Receive& r) const;
  // The slot's clock is about to go: keep it for receives that follow `r`.
  void retain_matched(Receive& r, std::uint64_t token, Slot& s);
  void add_contribution(Receive& to, const Receive& from);
  // `token` may have become ready (bound, its message in, nothing pending):
  // hand its contribution to the receives waiting for it, and on down.
  void release_followers(std::uint64_t token);
  // The receive they waited for matched nothing: they stop waiting for it.
  void drop_followers(const Followers& waiting);
  // A hold was lifted or a receive moved: receives may have become ready.
  void recheck_followers();
  void destroy_receive(std::uint64_t token);
  void maybe_release_receive(std::uint64_t token);
  void trim(InQueue& q);
  // The bound receive at `pos` matched nothing: later receives move up.
  void unbind(InQueue& q, std::uint64_t pos);
  bool held_before(const InQueue& q, std::uint64_t pos) const;
  // An abandoned receive's slot: its clock is not needed.
  void discard_slot(InQueue& q, Slot& s);

  // Collective helpers.
  CollState& coll_state(const CollKey& key, CollectiveKind kind, Rank root);
  bool init_coll(const CollKey& key, CollState& st);
  Span up_span(const GroupInfo& g, const CollState& st) const;
  Span down_span(const GroupInfo& g, const CollState& st) const;
  void progress_up(const CollKey& key, CollState& st);
  // Sends the result down once it is here and may leave (CollState::ahead).
  void maybe_forward_down(const CollKey& key, CollState& st);
  void progress_prefix(const CollKey& key, CollState& st);
  void forward_down(const CollKey& key, const CollState& st);
  void coll_maybe_erase(const CollKey& key);
  ClockValue* zeroed_clock();

  ToolHost& host_;
  PeerTransport& transport_;
  Rank self_;
  std::uint32_t width_;
  VectorClock clock_;
  ClockPool pool_;
  std::uint64_t clocked_calls_ = 0;
  // This rank's own clock entry as of the last queued program: the clocked
  // programs queued so far (only they tick it).
  ClockValue queued_tick_ = 0;
  bool contribute_ahead_ = true;
  // Contributions ahead (collectives.cpp): how many are open, and those
  // queued behind the limit, with the own entry each is to carry.
  static constexpr std::uint32_t kMaxAhead = 256;
  struct AheadContribution {
    CollectiveRef ref;
    ClockValue own_entry = 0;
  };
  std::uint32_t ahead_open_ = 0;
  std::deque<AheadContribution> ahead_waiting_;

  std::deque<QueuedProgram> programs_;
  std::deque<Op> ops_;
  bool head_started_ = false;
  std::size_t pc_ = 0;
  bool need_ack_sent_ = false;
  std::vector<Rank> peers_;
  std::vector<MessageEnd> messages_;  // of the call being run
  GroupId call_group_{};
  QueueId call_queue_{};

  std::unordered_map<PeerQueue, std::uint64_t, PeerQueueHash> send_seq_;
  // The queues sent to last and their counters in send_seq_ (whose elements
  // never move): programs send to a few queues over and over, and hashing
  // every signal's queue was a quarter of the engine's time per event.
  struct SendSeqSlot {
    PeerQueue key{};
    std::uint64_t* next = nullptr;
  };
  std::array<SendSeqSlot, 8> send_seq_slots_{};
  std::unordered_map<PeerQueue, InQueue, PeerQueueHash> in_;
  // in_[key], remembering the last queue asked for: a rank's receives and
  // signals come mostly from one peer's queue in a row. Entries of in_ are
  // never erased, and an unordered_map keeps its elements in place.
  InQueue& queue_of(const PeerQueue& key) {
    if (!last_queue_ || !(last_queue_key_ == key)) {
      last_queue_ = &in_[key];
      last_queue_key_ = key;
    }
    return *last_queue_;
  }
  InQueue* last_queue_ = nullptr;
  PeerQueue last_queue_key_{};
  Slab<Receive> receives_;
  struct AckKey {
    PeerQueue key;
    std::uint64_t seq;
    bool operator==(const AckKey&) const = default;
  };
  struct AckKeyHash {
    std::size_t operator()(const AckKey& k) const noexcept {
      return hash_combine(PeerQueueHash{}(k.key), k.seq);
    }
  };
  std::unordered_map<AckKey, ClockValue*, AckKeyHash> acks_;
  std::size_t receives_followed_ = 0;  // receives with followers (none: nothing to recheck)
  std::size_t wanted_unbound_ = 0;   // answers wanted for slots without a receive
  std::size_t deferred_unbound_ = 0; // of those, the ones told "deferred"
  std::vector<const PendingReceives*> pending_;
  // Answers the receivers said they cannot give before their application
  // goes on; a send waiting for one of them must not stall its application.
  std::unordered_set<AckKey, AckKeyHash> deferred_acks_;
  // Answers nobody will wait for: released when (or if already) they arrive.
  std::unordered_set<AckKey, AckKeyHash> discarded_acks_;

  // Resources deposited here, by id.
  std::unordered_map<std::uint64_t, LockState> locks_;
  // Grants received for this process's acquisitions, by (deposition, resource, number).
  std::unordered_map<AckKey, ClockValue*, AckKeyHash> grants_;
  std::uint64_t acquisitions_ = 0;   // numbers this process's acquisitions
  // This process's holdings by (deposition, resource): the acquisition number
  // its release refers to.
  std::unordered_map<PeerQueue, std::uint64_t, PeerQueueHash> held_;
  std::deque<OrderGate> gates_;
  struct OrderWait {
    AckKey key;  // (deposition, resource), acquisition number
    std::uint64_t event_seq;
    // The release read before the grant came (an application never does
    // that; a program fed to the engine at once may), sent after it.
    bool release_read = false;
    std::uint16_t release_flags = 0;
    // Acquisitions of one call are requested one after the other, in the
    // program's order (MPI_Win_lock_all: window rank order).
    bool requested = false;
    std::uint16_t flags = 0;
  };
  std::vector<OrderWait> order_waits_;
  // This process's leasable holdings: one per leasable request until it is
  // granted, then per lease until its last release ran (a lock may have
  // several ended leases while the engine lags behind its application).
  std::vector<Lease> leases_;
  std::uint64_t leased_acquisitions_ = 0;

  // Peers that said their engines wait for their applications, and whether
  // this engine said so itself.
  std::vector<std::uint8_t> dependent_peers_;
  std::uint32_t dependent_peer_count_ = 0;
  bool announced_dependent_ = false;

  // Flags of this PE's memory, by id; registrations are numbered over all
  // of them, so that a wait's snapshot is one number.
  std::unordered_map<std::uint64_t, FlagState> flags_;
  std::uint64_t flag_registrations_ = 0;
  std::size_t flag_deposits_ = 0;     // stored over all flags
  std::size_t flag_sweep_at_ = 1024;  // sweep every flag when there are more
  // This process's registrations not granted yet: write id → event seq.
  std::unordered_map<std::uint64_t, std::uint64_t> flag_grants_;

  std::unordered_map<GroupId, GroupInfo> groups_;
  std::unordered_map<CollKey, CollState, CollKeyHash> collectives_;

  std::vector<ClockedCallObserver*> observers_;
  std::vector<ClockedCallObserver*> note_observers_;  // those that want notes
  std::vector<ClockedCallObserver*> signal_observers_;  // those that want signals
  std::vector<std::uint8_t> notes_;  // the queued programs' notes, in queue order
  std::size_t notes_head_ = 0;       // where the head program's notes start in notes_
  std::vector<std::uint8_t> scratch_;
  PeerBaselines baselines_;
};

}  // namespace vcx::vclock
