// Messages between vclock engines (ToolPart::Exchange). Each starts with a
// fixed header; a clock follows in the layout `encoding` names, `width` its
// entries or pairs (clock_codec.h).
#pragma once

#include <cstdint>
#include <type_traits>

namespace vcx::vclock {

enum class MsgType : std::uint8_t {
  Signal = 1,    // a deposited point-to-point clock
  Ack = 2,       // a receiver's answer to a synchronous send
  NeedAck = 3,   // the sender waits for an answer (no clock)
  CollUp = 4,    // a subtree's combined contribution, towards the tree root
  CollDown = 5,  // the result (or the root's clock), away from the tree root
  Deferred = 6,  // the answer waits for the receiver's application (no clock)
  CollCross = 7, // a side's combined contribution, to the other side's root
  // Resources: the order in which a deposition grants acquisitions is decided
  // as the applications make their calls (Acquire, Grant, Release carry no
  // clock); the clocks follow when the engines reach the calls
  // (GrantClock, ReleaseClock).
  Acquire = 8,        // to a resource's deposition: grant it to me
  Grant = 9,          // from the deposition: granted, the application may go on
  Release = 10,       // to the deposition: the application released it
  Dependence = 11,    // this engine waits for its application (flags 1) or no longer (0)
  GrantClock = 12,    // from the deposition: the releases the acquisition merges
  ReleaseClock = 13,  // to the deposition: the releaser's clock at its release
  // Flags (flag_deposition.h): a write is registered at the tool of the PE it
  // writes to before it happens (FlagAnnounce, answered by FlagGrant, no
  // clocks); what it wrote and the writer's clock follow (FlagValue,
  // FlagClock). queue_a = flag, queue_b = value, seq = the write's id,
  // flags = FlagMode bits.
  FlagAnnounce = 14,
  FlagGrant = 15,
  FlagValue = 16,
  FlagClock = 17,
  // Differential clocks (clock_baselines.h), no clock: the receiver of a
  // sender's clocks has room for their baseline (DiffOffer); the sender has
  // none left (DiffDecline).
  DiffOffer = 18,
  DiffDecline = 19,
  // From a lock's deposition to a holder whose grant allowed a lease
  // (Grant with kResourceLeasable): another acquisition waits, give the
  // lock back once the application released it (no clock).
  Recall = 20,
  // A member found that the members of a collective instance did not make
  // the same call (CollHeader, instance: the first such; a zero clock):
  // complete that group's collectives from there on without their edges.
  CollMismatch = 21,
  // A member whose completion of an instance has waited a while tells the
  // group's first member its call there (CollHeader; a zero clock); that
  // member compares it with its own.
  CollProbe = 22,
};

// Resource messages reuse P2PHeader: queue_a = resource id, seq = the
// requester's acquisition number, flags = ResourceFlags.

struct P2PHeader {
  MsgType type;
  std::uint8_t encoding;  // ClockEncoding of the clock that follows
  std::uint16_t flags;    // SignalFlags
  std::uint32_t width;    // its entries or pairs (0 without a clock)
  std::uint64_t queue_a;
  std::uint64_t queue_b;
  std::uint64_t seq;
};
static_assert(sizeof(P2PHeader) == 32);
static_assert(std::is_trivially_copyable_v<P2PHeader>);

struct CollHeader {
  MsgType type;
  std::uint8_t kind;      // CollectiveKind
  std::uint8_t encoding;  // ClockEncoding of the clock that follows
  std::uint8_t reserved;
  std::uint32_t width;    // its entries or pairs
  std::uint64_t group;
  std::uint64_t instance;
  std::uint32_t root;       // world rank of the operation's root
  std::uint16_t operation;  // CollectiveRef::operation
  std::uint16_t reserved2;
};
static_assert(sizeof(CollHeader) == 32);
static_assert(std::is_trivially_copyable_v<CollHeader>);

}  // namespace vcx::vclock
