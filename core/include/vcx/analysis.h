// The analysis interface: what analysis modules (race, and those to come)
// observe besides clocked calls, how they talk to the same module in other
// tool processes, and where their findings go. Nothing analysis-specific
// lives in the engine: translators attach notes to call programs, the engine
// hands each program's notes to the observers, in program order, with the
// clock the program ended with (docs/writing-an-analysis.md).
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <type_traits>

#include "vcx/channel/event_record.h"
#include "vcx/types.h"
#include "vcx/vector_clock.h"

namespace vcx {

// ---- Notes: what translators tell analyses about memory -----------------
//
// A memory space is memory of one rank that every tool names alike (an MPI
// window at one of its members, a PE's symmetric heap); its id is a hash the
// translators of all ranks compute the same way.

enum class NoteKind : std::uint16_t {
  Region = 1,      // RegionNote: the owner exposes memory
  RegionEnd = 2,   // RegionEndNote: it no longer does
  Access = 3,      // AccessNote: a data access starts
  Completion = 4,  // CompletionNote: accesses are complete
  LocalAccesses = 5,  // LocalAccessesNote: what the rank's loads and stores report
  Ordered = 6,        // CompletionNote: accesses delivered before the rank's later writes
  FlagObserved = 7,   // FlagObservedNote: a wait saw writes to the rank's memory delivered
  // Point-to-point receives, for analyses of the matching (only written
  // when some module wants_receive_notes()).
  ReceivePosted = 8,     // ReceivePostedNote: a receive was posted
  ReceiveBound = 9,      // ReceiveBoundNote: it takes the next position of a queue
  ReceiveOrdered = 10,   // ReceiveOrderedNote: one matched before another
  ReceiveCompleted = 11, // ReceiveNote: the program completed it (this call)
  ReceiveDropped = 12,   // ReceiveNote: it matched nothing; later ones on its queue move up
  SyncSendCompleted = 13,  // SyncSendCompletedNote: a synchronous send's message was matched
};

struct NoteHeader {
  NoteKind kind;
  std::uint16_t reserved;
  std::uint32_t bytes;  // of the payload that follows
};

enum class RegionKind : std::uint16_t {
  MpiWindow = 1,
  MpiDynamicWindow = 2,
  SymmetricMemory = 3,
  // Memory of a process that it exposes to nobody, named by address: the
  // buffers of its one-sided operations (analyses make it, no note does).
  LocalMemory = 4,
};

// Memory of the rank whose translator writes the note (the owner).
struct RegionNote {
  std::uint64_t space;  // the memory space's id
  std::uint64_t base;   // address in the owner's process
  std::uint64_t bytes;  // 0: grows (dynamic windows: accesses give absolute addresses)
  std::uint64_t pc;     // return address of the call that made it, 0 if unknown
  std::uint32_t unit;   // bytes per offset unit of accesses naming the space
  RegionKind kind;
  std::uint16_t ordinal;  // per owner and kind, from 0 (names it in reports)
};

struct RegionEndNote {
  std::uint64_t space;
};

enum class AccessMode : std::uint8_t { Read = 0, Write = 1 };

enum AccessFlags : std::uint8_t {
  // Complete when the call returns: nothing after the next clocked call of
  // this rank can be concurrent with it. No CompletionNote follows.
  kAccessCompleteNow = 1u << 0,
  // An atomic access that only reads: atomic with every atomic access of the
  // same type, whatever its operation.
  kAccessAtomicRead = 1u << 1,
  // The space needs no RegionNote: memory every rank names alike by offset
  // in bytes (OpenSHMEM symmetric memory), exposed as a whole.
  kAccessImplicitRegion = 1u << 2,
  // A load or store of the program itself (complete at once): in program
  // order with the same rank's other loads and stores, so never concurrent
  // with them, even between the same two calls.
  kAccessLocal = 1u << 3,
};

// One access to memory of `owner`, from the call whose program carries it
// until the CompletionNote naming its id (or the next clocked call, with
// kAccessCompleteNow). Two accesses conflict when their bytes overlap, at
// least one writes, and they are not both atomic with respect to each other.
// Atomicity holds per element: atomic accesses of the same atomic_type are
// atomic with each other where their elements coincide (the same bytes,
// element for element: their starts differ by a multiple of atomic_unit)
// and their atomic_op is equal or either is kAccessAtomicRead. Bytes they
// share at different element boundaries, or with another type, race.
struct AccessNote {
  std::uint64_t id;      // per rank, non-zero, never reused
  std::uint64_t space;   // the memory space; 0: `offset` is an address in the owner's process
  std::uint64_t offset;  // in the space's units
  std::int64_t byte_offset;  // further bytes from there (a block of a datatype with gaps)
  std::uint64_t bytes;
  std::uint64_t pc;      // return address of the application's call, 0 if unknown
  // The stream its ordering belongs to (an OpenSHMEM communication
  // context; 0 for the default one and for models without streams): an
  // Ordered note orders it before the rank's later writes of the same
  // stream only.
  std::uint64_t context;
  std::uint32_t owner;   // world rank whose memory it is
  std::uint32_t atomic_type;  // with atomic_op != 0
  std::uint32_t atomic_op;    // 0: not atomic
  std::uint32_t atomic_unit;  // with atomic_op != 0: bytes of one element of atomic_type
  std::uint16_t call;    // the call that made it (model: the program's)
  AccessMode mode;
  std::uint8_t flags;    // AccessFlags
  std::uint32_t reserved;
};

// The accesses with these ids are complete for their memory. The ids follow.
struct CompletionNote {
  std::uint32_t count;
  std::uint32_t reserved;
  std::uint64_t pc;  // return address of the call that completes them, 0 if unknown
};

// Kind Ordered (a CompletionNote and its ids): the accesses with these ids,
// writes not complete yet, are delivered to their memory before every write
// of the same context the rank makes to the same rank's memory after this
// call (OpenSHMEM's shmem_fence and shmem_ctx_fence). So they are ordered
// before those writes, and a wait that sees such a later write delivered
// sees them delivered too.

// This clocked call (a wait on a flag) saw a write to these bytes of the
// rank's own memory delivered. The writes to them whose writer's clock the
// call's clock contains were delivered when it returned, and so was every
// write of their writers to this rank that was Ordered before them.
struct FlagObservedNote {
  std::uint64_t space;
  std::uint64_t offset;  // in bytes
  std::uint64_t bytes;
};

// The rank's loads and stores of exposed memory are reported, as Access
// notes of its model's load and store calls (vcx/local_access.h): sent once
// when they start (flags kLocalAccessesStart), and whenever accesses went
// unreported (kLocalAccessesOverflow).
struct LocalAccessesNote {
  std::uint32_t flags;  // LocalAccessBatchFlags
  std::uint32_t reserved;
};

// ---- Receive notes ----
//
// Receives are named by the translator's token for them (per rank). Queues
// are those of the exchange (QueueId of Signal and bind_receive): the n-th
// receive bound to (source, queue), not dropped, took the n-th signal on it.

inline constexpr std::int32_t kNoteAnySource = -1;
// Any tag: a queue.b below kNoteTagLimit. Signals on queues above it (the
// translators' annotation and collective queues) are never a receive's.
inline constexpr std::int32_t kNoteAnyTag = -1;
inline constexpr std::uint64_t kNoteTagLimit = std::uint64_t{1} << 31;

struct ReceivePostedNote {
  std::uint64_t token;
  std::uint64_t space;       // queue.a of the queues it can take messages from
  std::uint64_t pc;          // return address of the posting call, 0 if unknown
  std::int32_t want_source;  // world rank, or kNoteAnySource
  std::int32_t want_tag;     // queue.b it can take, or kNoteAnyTag
  std::uint16_t call;        // the posting call (the program's model)
  // The program posted it with any source and a replay (vcx-run
  // --force-match) made it take want_source only: still one of the
  // program's wildcard receives, but it can match nothing else.
  std::uint16_t forced;
  std::uint16_t reserved[2];
};

struct ReceiveBoundNote {
  std::uint64_t token;
  std::uint64_t queue_a;
  std::uint64_t queue_b;
  std::uint32_t source;  // world rank
  std::uint32_t reserved;
};

// `later` matched only after `earlier` had (MPI's non-overtaking rule for
// receives; ExchangeControl::order_receive_after). Pairs implied by others
// may be left out.
struct ReceiveOrderedNote {
  std::uint64_t later;
  std::uint64_t earlier;
};

struct ReceiveNote {
  std::uint64_t token;
};

// This call completed a synchronous send (MPI_Ssend returned, an
// MPI_Issend's request completed): the receive that took its message had
// matched by then. The message is the position-th signal of this rank on
// (dst, queue).
struct SyncSendCompletedNote {
  std::uint64_t queue_a;
  std::uint64_t queue_b;
  std::uint64_t position;
  std::uint32_t dst;  // world rank
  std::uint32_t reserved;
};

static_assert(sizeof(ReceivePostedNote) == 40);
static_assert(sizeof(ReceiveBoundNote) == 32);
static_assert(sizeof(ReceiveOrderedNote) == 16);
static_assert(sizeof(ReceiveNote) == 8);
static_assert(sizeof(SyncSendCompletedNote) == 32);
static_assert(sizeof(NoteHeader) == 8);
static_assert(sizeof(LocalAccessesNote) == 8);
static_assert(sizeof(FlagObservedNote) == 24);
static_assert(sizeof(RegionNote) == 40);
static_assert(sizeof(RegionEndNote) == 8);
static_assert(sizeof(AccessNote) == 80);
static_assert(sizeof(CompletionNote) == 16);
static_assert(std::is_trivially_copyable_v<AccessNote>);

// The notes of one call program, after it ran.
struct NoteBatch {
  Rank rank{};
  Model model{};
  std::uint16_t call = 0;  // the program's call
  const char* call_name = "";
  bool clocked = false;    // the program was a clocked call
  ClockSpan clock;         // the clock it ended with (clocked: the call's clock)
  std::span<const std::uint8_t> notes;  // NoteHeader + payload, one after another

  // The own clock entry at which something done in this program is complete:
  // a clocked call's own tick, else the next clocked call's.
  ClockValue completion_tick() const {
    return clock[rank.value] + (clocked ? 0 : 1);
  }

  // Calls f(kind, payload) for each note.
  template <class F>
  void for_each(F&& f) const {
    std::size_t at = 0;
    while (at + sizeof(NoteHeader) <= notes.size()) {
      NoteHeader h;
      std::memcpy(&h, notes.data() + at, sizeof h);
      at += sizeof h;
      if (at + h.bytes > notes.size()) return;
      f(h.kind, notes.subspan(at, h.bytes));
      at += h.bytes;
    }
  }
};

// Reads a note payload into T (payloads are not aligned).
template <class T>
bool read_note(std::span<const std::uint8_t> payload, T* out, std::size_t at = 0) {
  if (payload.size() < at + sizeof(T)) return false;
  std::memcpy(out, payload.data() + at, sizeof(T));
  return true;
}

// ---- Messages between the tool processes' instances of one module --------

// A module's link to its instances in the other tool processes. Messages
// between one pair of tools arrive in the order they were sent. A module
// sends only while its application runs and its calls are being analysed:
// the tools end the run once every message sent has arrived, and that is
// only known when nobody sends any more (ToolHost counts them).
class AnalysisLink {
 public:
  using Handler = std::function<void(Rank src, std::span<const std::uint8_t> payload)>;
  virtual ~AnalysisLink() = default;
  virtual void send(Rank dst, std::span<const std::uint8_t> payload) = 0;
  virtual void set_handler(Handler h) = 0;
};

}  // namespace vcx
