// What a translator makes of one application event: an ordered list of
// exchange primitives (a "call program"), executed by the vclock module in
// program order. A program that marks itself clocked ticks first and is
// recorded (trace, analyses) with the clock it ends with.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "vcx/analysis.h"
#include "vcx/channel/event_record.h"
#include "vcx/local_access.h"
#include "vcx/types.h"

namespace vcx {

// Opaque handles the exchange hands out; translators store them with their
// requests. 0 is never a valid token.
struct ReceiveToken {
  std::uint64_t value = 0;
  explicit operator bool() const { return value != 0; }
  auto operator<=>(const ReceiveToken&) const = default;
};
struct SendToken {
  Rank dst{};
  QueueId queue{};
  std::uint64_t seq = 0;  // 1-based position on (self → dst, queue)
  explicit operator bool() const { return seq != 0; }
};

enum class CollectiveKind : std::uint8_t {
  AllToAll = 0,   // every member waits for every other (barrier, allreduce, ...)
  OneToAll = 1,   // the root signals every member (bcast, scatter)
  AllToOne = 2,   // every member signals the root (reduce, gather)
  Prefix = 3,     // member i waits for members 0..i-1 (scan, exscan)
  Bipartite = 4,  // each member of one side waits for every member of the
                  // other side (intercommunicator barrier, allreduce, ...)
};

struct CollectiveRef {
  GroupId group{};
  std::uint64_t instance = 0;  // per-group count of collective operations, from 1
  CollectiveKind kind = CollectiveKind::AllToAll;
  Rank root{};                 // world rank; ignored for AllToAll
  // The call every member must make for this instance (the translator's
  // call number of its operation; 0: any). Members whose kind, root (for
  // rooted kinds) or operation differ are a collective mismatch
  // (ClockedCallObserver::on_collective_mismatch).
  std::uint16_t operation = 0;
};

enum class OpKind : std::uint8_t {
  Signal,              // deposit the current clock on (self → peer, queue)
  Wait,                // merge the signal bound to a receive token
  Snapshot,            // the current clock answers the token's synchronous sender
  WaitAck,             // merge the answer to a synchronous send
  CollectiveContribute,
  CollectiveComplete,
  Acquire,             // wait until the resource is granted; merge its releases
  Release,             // hand the resource back, depositing the current clock
  Retire,              // a resource deposited here is never acquired again (queue):
                       // its state goes once its holders have released it
  EndLeases,           // the application's object Op::lease_object is freed: every
                       // lease of a lock on it ends (channel/lease_table.h)
  // Flags: synchronisation through memory (OpenSHMEM wait_until, test). A
  // write that may be a flag is registered at the tool of the PE whose
  // memory it writes before the write happens; a wait that returned there
  // merges the registered writes its value says came before it.
  FlagWrite,           // register a write (peer: the target PE; queue: {flag, value};
                       // value: the write's id; flags: FlagBits); deposits the
                       // current clock without ticking
  FlagValue,           // what a registered write turned out to write (value: its id)
  FlagWait,            // merge the registered writes of {flag, value read} before
                       // this call (flags: width and signedness of the value)
  // The program completed a send whose completion needs its receive to be
  // posted without buffering (a standard or synchronous send completed by
  // a blocking call): peer, queue and value name the message as its Signal
  // did. No clock effect; analyses of buffering (potential deadlocks) see
  // where it completed.
  SendCompleted,
};

enum ResourceFlags : std::uint16_t {
  kResourceShared = 1u << 0,  // a shared (reader) acquisition or release
  // An annotated deposit (vcx_annotate_resource_signal): an exclusive
  // acquisition that merges nothing, so that fetches wait until the deposit
  // is in, and a release that adds its clock to the resource's deposits.
  kResourceDeposit = 1u << 1,
  // An annotated fetch (vcx_annotate_resource_wait), with kResourceShared:
  // granted at once, merges every deposit granted before it (its clock
  // waits for those deposits' clocks), holds nothing (no release follows).
  kResourceFetch = 1u << 2,
  // An acquisition the holder may keep as a lease after its release, under
  // the application's key Op::lease_object/lease_target (lease_table.h).
  kResourceLeasable = 1u << 3,
  // The application took (Acquire) or released (Release) the lock under its
  // lease, without asking the tool.
  kResourceLeased = 1u << 4,
  // With kResourceLeased on a Release: the tool had recalled the lease; it
  // ends with this release.
  kResourceLeaseEnd = 1u << 5,
};

// Op::flags of the flag ops: what a write does to the flag's value, how wide
// and signed the value is (docs/clock-rules.md, "Flags").
enum FlagMode : std::uint16_t {
  kFlagPending = 0,  // not known yet: a FlagValue op follows
  kFlagStore = 1,    // stores the value
  kFlagUp = 2,       // adds a positive amount: the value is the sum (a counter)
  kFlagDown = 3,     // adds a negative amount
  kFlagNoWrite = 4,  // wrote nothing (a compare-and-swap that failed)
};
inline constexpr std::uint16_t kFlagModeMask = 0x7;
inline constexpr std::uint16_t kFlagSigned = 1u << 7;
inline constexpr std::uint16_t flag_bits(FlagMode mode, unsigned width_bytes, bool is_signed) {
  return static_cast<std::uint16_t>(mode | ((width_bytes & 0xf) << 3) | (is_signed ? kFlagSigned : 0));
}
inline constexpr FlagMode flag_mode(std::uint16_t bits) {
  return static_cast<FlagMode>(bits & kFlagModeMask);
}
inline constexpr unsigned flag_width(std::uint16_t bits) { return (bits >> 3) & 0xf; }
inline constexpr bool flag_signed(std::uint16_t bits) { return (bits & kFlagSigned) != 0; }

enum WaitFlags : std::uint16_t {
  // The receive was posted for any source (MPI_ANY_SOURCE): which message
  // it took was the run's choice (for traces and their views).
  kWaitWildcard = 1u << 0,
  // The call posted the receive itself (MPI_Recv), rather than an earlier
  // call (MPI_Irecv before an MPI_Wait): analyses of buffering.
  kWaitPostedInCall = 1u << 1,
};

enum SignalFlags : std::uint16_t {
  kSignalSynchronous = 1u << 0,  // the receiver answers with its clock
};

enum CollectiveFlags : std::uint16_t {
  // Contribution and completion are one call (a blocking collective): no
  // member can learn anything new between contributing and completing, so an
  // all-to-all member need only contribute its own entry and the entries of
  // non-members, since no rank's entry is larger anywhere than at the rank
  // itself. Without it, members contribute their whole clock.
  kCollectiveBlocking = 1u << 0,
};

// A resource (a lock) is held at its deposition: the tool process of the
// rank that owns it. Acquisitions are granted there in arrival order; an
// exclusive one merges every earlier release, a shared one the earlier
// exclusive releases.
struct Op {
  OpKind kind{};
  std::uint16_t flags = 0;
  Rank peer{};              // Signal: destination; WaitAck: receiver;
                            // Acquire/Release: the resource's deposition;
                            // FlagWrite/FlagValue: the PE written to
  QueueId queue{};          // Signal, WaitAck; Acquire/Release: the resource id in .a
  std::uint64_t value = 0;  // Wait/Snapshot: receive token; WaitAck: send seq
  CollectiveRef collective{};
  // Acquire with kResourceLeasable, EndLeases: the lock as the application
  // names it in its lease table.
  std::uint64_t lease_object = 0;
  std::uint32_t lease_target = 0;
  // Signal, Wait of a message: its size in bytes when the translator knows
  // it (traces), else 0.
  std::uint64_t bytes = 0;

  // One constructor per kind, setting the fields that kind reads.
  static Op signal(const SendToken& t, std::uint16_t flags = 0, std::uint64_t bytes = 0) {
    Op op = of(OpKind::Signal, flags);
    op.peer = t.dst;
    op.queue = t.queue;
    op.value = t.seq;
    op.bytes = bytes;
    return op;
  }
  static Op wait(ReceiveToken t, std::uint16_t flags = 0, std::uint64_t bytes = 0) {
    Op op = of(OpKind::Wait, flags);
    op.value = t.value;
    op.bytes = bytes;
    return op;
  }
  static Op snapshot(ReceiveToken t) {
    Op op = of(OpKind::Snapshot);
    op.value = t.value;
    return op;
  }
  static Op send_completed(const SendToken& t) {
    Op op = of(OpKind::SendCompleted);
    op.peer = t.dst;
    op.queue = t.queue;
    op.value = t.seq;
    return op;
  }
  static Op wait_ack(const SendToken& t) {
    Op op = send_completed(t);
    op.kind = OpKind::WaitAck;
    return op;
  }
  static Op contribute(const CollectiveRef& c, std::uint16_t flags = 0) {
    Op op = of(OpKind::CollectiveContribute, flags);
    op.collective = c;
    return op;
  }
  static Op complete(const CollectiveRef& c) {
    Op op = of(OpKind::CollectiveComplete);
    op.collective = c;
    return op;
  }
  // The resource `resource` held at `deposition` (flags: ResourceFlags).
  static Op acquire(Rank deposition, std::uint64_t resource, std::uint16_t flags) {
    Op op = of(OpKind::Acquire, flags);
    op.peer = deposition;
    op.queue = QueueId{resource, 0};
    return op;
  }
  static Op release(Rank deposition, std::uint64_t resource, std::uint16_t flags) {
    Op op = acquire(deposition, resource, flags);
    op.kind = OpKind::Release;
    return op;
  }
  static Op retire(std::uint64_t resource) {
    Op op = of(OpKind::Retire);
    op.queue = QueueId{resource, 0};
    return op;
  }
  static Op end_leases(std::uint64_t object) {
    Op op = of(OpKind::EndLeases);
    op.lease_object = object;
    return op;
  }
  // A write of `value` to `flag` at PE `pe`, named `id` (flags: FlagMode bits).
  static Op flag_write(Rank pe, std::uint64_t flag, std::uint64_t value, std::uint64_t id,
                       std::uint16_t bits) {
    Op op = of(OpKind::FlagWrite, bits);
    op.peer = pe;
    op.queue = QueueId{flag, value};
    op.value = id;
    return op;
  }
  static Op flag_value(Rank pe, std::uint64_t flag, std::uint64_t value, std::uint64_t id,
                       std::uint16_t bits) {
    Op op = flag_write(pe, flag, value, id, bits);
    op.kind = OpKind::FlagValue;
    return op;
  }
  // A wait on `flag` of PE `pe` (this one) that read `value`.
  static Op flag_wait(Rank pe, std::uint64_t flag, std::uint64_t value, std::uint16_t bits) {
    Op op = of(OpKind::FlagWait, bits);
    op.peer = pe;
    op.queue = QueueId{flag, value};
    return op;
  }

 private:
  static Op of(OpKind kind, std::uint16_t flags = 0) {
    Op op;
    op.kind = kind;
    op.flags = flags;
    return op;
  }
};

class CallProgram {
 public:
  void reset(Model model, std::uint16_t call, std::uint64_t event_seq,
             std::uint64_t call_site = 0) {
    model_ = model;
    call_ = call;
    event_seq_ = event_seq;
    call_site_ = call_site;
    clocked_ = false;
    ops_.clear();
    notes_.clear();
  }
  Model model() const { return model_; }
  std::uint16_t call() const { return call_; }
  std::uint64_t event_seq() const { return event_seq_; }
  // The application's return address of the call (EventHeader::call_site).
  std::uint64_t call_site() const { return call_site_; }
  bool clocked() const { return clocked_; }
  std::span<const Op> ops() const { return ops_; }
  // Notes for the analyses (vcx/analysis.h), handed to them after the
  // program ran.
  std::span<const std::uint8_t> notes() const { return notes_; }

  // Translators fill the program through these.
  void set_call(std::uint16_t call) { call_ = call; }
  void mark_clocked() { clocked_ = true; }
  void push(const Op& op) { ops_.push_back(op); }
  // The accesses of `open` (records with an `id`) that `done` selects are
  // complete at the call with return address `pc`: removed from `open` and
  // named by one CompletionNote (none when none is selected).
  template <class Open, class Done>
  void complete_accesses(std::vector<Open>& open, Done&& done, std::uint64_t pc) {
    completed_.clear();
    std::size_t kept = 0;
    for (const Open& a : open) {
      if (done(a))
        completed_.push_back(a.id);
      else
        open[kept++] = a;
    }
    open.resize(kept);
    if (!completed_.empty())
      add_note(NoteKind::Completion, CompletionNote{static_cast<std::uint32_t>(completed_.size()),
                                                    0, pc},
               completed_);
  }
  // The notes of a batch of local loads and stores (vcx/local_access.h):
  // an AccessNote, complete at once, per record whose memory
  // `name(record, note)` names (it sets space and offsets, and returns false
  // for memory it does not know), and a LocalAccessesNote when the batch
  // has flags. False if the batch is malformed.
  template <class Name>
  bool add_local_accesses(std::span<const std::uint8_t> batch, std::uint16_t load_call,
                          std::uint16_t store_call, std::uint64_t& next_id, Name&& name) {
    LocalAccessBatch b;
    if (batch.size() < sizeof b) return false;
    std::memcpy(&b, batch.data(), sizeof b);
    if (batch.size() < sizeof b + std::size_t{b.count} * sizeof(LocalAccessRecord)) return false;
    for (std::uint32_t i = 0; i < b.count; ++i) {
      LocalAccessRecord r;
      std::memcpy(&r, batch.data() + sizeof b + i * sizeof r, sizeof r);
      AccessNote a{};
      if (r.owner < 0 || !name(r, a)) continue;
      a.id = ++next_id;
      a.bytes = r.bytes;
      a.pc = r.pc;
      a.owner = static_cast<std::uint32_t>(r.owner);
      a.call = r.write ? store_call : load_call;
      a.mode = r.write ? AccessMode::Write : AccessMode::Read;
      a.flags |= kAccessCompleteNow | kAccessLocal;
      add_note(NoteKind::Access, a);
    }
    if (b.flags) add_note(NoteKind::LocalAccesses, LocalAccessesNote{b.flags, 0});
    return true;
  }
  // A note: `payload`, then the values of `tail` (a CompletionNote's ids).
  template <class T>
  void add_note(NoteKind kind, const T& payload, std::span<const std::uint64_t> tail = {}) {
    static_assert(std::is_trivially_copyable_v<T>);
    const NoteHeader h{kind, 0, static_cast<std::uint32_t>(sizeof(T) + tail.size_bytes())};
    const std::size_t at = notes_.size();
    notes_.resize(at + sizeof h + h.bytes);
    std::memcpy(notes_.data() + at, &h, sizeof h);
    std::memcpy(notes_.data() + at + sizeof h, &payload, sizeof(T));
    if (!tail.empty())
      std::memcpy(notes_.data() + at + sizeof h + sizeof(T), tail.data(), tail.size_bytes());
  }

 private:
  Model model_{};
  std::uint16_t call_ = 0;
  std::uint64_t event_seq_ = 0;
  std::uint64_t call_site_ = 0;
  bool clocked_ = false;
  std::vector<Op> ops_;  // capacity kept between events
  std::vector<std::uint8_t> notes_;  // likewise
  std::vector<std::uint64_t> completed_;  // scratch of complete_accesses
};

}  // namespace vcx
