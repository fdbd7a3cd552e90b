// Leases: locks the application may take again without asking its tool.
//
// A lock's deposition decides the order of its holdings, and the
// application calls the model's lock only once its tool has the grant. When
// nobody else wants the lock, a holding need not end at the application's
// release: the tool publishes the grant as a lease in this table before the
// application goes on, the release leaves it idle, and the application's
// next acquisition of the same lock (same object, target and kind) takes the
// lease with one compare-and-swap instead of a round trip to the tools.
// When another process asks the deposition for the lock, the deposition
// recalls the lease: the tool takes an idle lease back at once, or marks a
// held one, which the application then ends at its release (and says so in
// that release's event). Either way the lock goes back only after the
// application's release of it returned, so the order of holdings stays the
// deposition's.
//
// Ownership of a slot's state word, `generation << 3 | LeaseState`:
//   tool:        Free → Held (publish, new generation, while the application
//                waits for the grant), Idle → Gone and
//                Held → Recall (recall), anything → Free (the lease is over)
//   application: Idle → Held (acquire), Held → Idle (release),
//                Recall → Gone (release of a recalled lease),
//                Idle → Gone (the object is freed)
// The generation makes a compare-and-swap fail on a slot reused for another
// lock between reading its fields and taking it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace vcx::channel {

inline constexpr std::size_t kLeaseSlots = 32;

enum LeaseState : std::uint32_t {
  kLeaseFree = 0,    // no lease
  kLeaseIdle = 1,    // leased, not held: the application may take it
  kLeaseHeld = 2,    // the application holds the lock under the lease
  kLeaseRecall = 3,  // held, and the tool wants it back at the release
  kLeaseGone = 4,    // the application will not take it again
};

struct LeaseSlot {
  std::atomic<std::uint32_t> word;    // generation << 3 | LeaseState
  std::atomic<std::uint32_t> target;  // the lock's target (a rank of the object)
  std::atomic<std::uint64_t> object;  // the lock's object (e.g. a window handle)
  std::atomic<std::uint32_t> kind;    // what the lease allows (e.g. shared or exclusive)
  std::uint32_t reserved;
  std::atomic<std::uint64_t> uses;    // acquisitions under the lease (application writes)
};
static_assert(sizeof(LeaseSlot) == 32);
static_assert(offsetof(LeaseSlot, object) == 8);
static_assert(offsetof(LeaseSlot, uses) == 24);

struct LeaseTable {
  alignas(64) std::atomic<std::uint32_t> slots_used;  // slots ever published, high water
  alignas(64) LeaseSlot slots[kLeaseSlots];
};
static_assert(std::is_standard_layout_v<LeaseTable>);
static_assert(sizeof(LeaseTable) == 64 + kLeaseSlots * sizeof(LeaseSlot));

inline constexpr std::uint32_t lease_state(std::uint32_t word) { return word & 7u; }
inline constexpr std::uint32_t lease_with(std::uint32_t word, std::uint32_t state) {
  return (word & ~7u) | state;
}

// ---- the application's side ----

// Takes the idle lease on (object, target, kind) if the tool left one;
// returns its slot, or -1 (ask the tool as usual).
inline int lease_acquire(LeaseTable& t, std::uint64_t object, std::uint32_t target,
                         std::uint32_t kind) noexcept {
  const std::uint32_t n = t.slots_used.load(std::memory_order_acquire);
  for (std::uint32_t i = 0; i < n && i < kLeaseSlots; ++i) {
    LeaseSlot& s = t.slots[i];
    std::uint32_t w = s.word.load(std::memory_order_acquire);
    if (lease_state(w) != kLeaseIdle || s.object.load(std::memory_order_relaxed) != object ||
        s.target.load(std::memory_order_relaxed) != target ||
        s.kind.load(std::memory_order_relaxed) != kind)
      continue;
    if (!s.word.compare_exchange_strong(w, lease_with(w, kLeaseHeld), std::memory_order_acq_rel))
      continue;  // recalled or reused meanwhile
    s.uses.store(s.uses.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return static_cast<int>(i);
  }
  return -1;
}

// The slot of the lease under which the application holds (object, target),
// or -1 when that holding is not leased.
inline int lease_held(LeaseTable& t, std::uint64_t object, std::uint32_t target) noexcept {
  const std::uint32_t n = t.slots_used.load(std::memory_order_acquire);
  for (std::uint32_t i = 0; i < n && i < kLeaseSlots; ++i) {
    LeaseSlot& s = t.slots[i];
    const std::uint32_t st = lease_state(s.word.load(std::memory_order_acquire));
    if ((st == kLeaseHeld || st == kLeaseRecall) &&
        s.object.load(std::memory_order_relaxed) == object &&
        s.target.load(std::memory_order_relaxed) == target)
      return static_cast<int>(i);
  }
  return -1;
}

// After the model's release returned: true while the lease goes on, false
// when the tool recalled it (the lease ends with this release).
inline bool lease_release(LeaseTable& t, int slot) noexcept {
  LeaseSlot& s = t.slots[slot];
  std::uint32_t w = s.word.load(std::memory_order_relaxed);
  for (;;) {
    if (lease_state(w) == kLeaseHeld) {
      if (s.word.compare_exchange_weak(w, lease_with(w, kLeaseIdle), std::memory_order_release,
                                       std::memory_order_relaxed))
        return true;
      continue;
    }
    s.word.store(lease_with(w, kLeaseGone), std::memory_order_release);
    return false;
  }
}

// The object is about to be freed: its idle leases are given up (the tool
// ends them when it reads the free).
inline void lease_drop(LeaseTable& t, std::uint64_t object) noexcept {
  const std::uint32_t n = t.slots_used.load(std::memory_order_acquire);
  for (std::uint32_t i = 0; i < n && i < kLeaseSlots; ++i) {
    LeaseSlot& s = t.slots[i];
    std::uint32_t w = s.word.load(std::memory_order_acquire);
    if (lease_state(w) == kLeaseIdle && s.object.load(std::memory_order_relaxed) == object)
      s.word.compare_exchange_strong(w, lease_with(w, kLeaseGone), std::memory_order_acq_rel);
  }
}

// ---- the tool's side ----

// Publishes a lease on a lock the application is being granted (so held:
// its release leaves the lease idle); returns its slot, or -1 when every
// slot is taken.
inline int lease_publish(LeaseTable& t, std::uint64_t object, std::uint32_t target,
                         std::uint32_t kind) noexcept {
  for (std::uint32_t i = 0; i < kLeaseSlots; ++i) {
    LeaseSlot& s = t.slots[i];
    const std::uint32_t w = s.word.load(std::memory_order_relaxed);
    if (lease_state(w) != kLeaseFree) continue;
    s.object.store(object, std::memory_order_relaxed);
    s.target.store(target, std::memory_order_relaxed);
    s.kind.store(kind, std::memory_order_relaxed);
    s.uses.store(0, std::memory_order_relaxed);
    s.word.store(((w >> 3) + 1) << 3 | kLeaseHeld, std::memory_order_release);
    if (t.slots_used.load(std::memory_order_relaxed) <= i)
      t.slots_used.store(i + 1, std::memory_order_release);
    return static_cast<int>(i);
  }
  return -1;
}

enum class LeaseTake {
  Taken,      // the application will not use it again; *uses is final
  Recalling,  // held: the application ends it at its release
};

// Recalls a lease.
inline LeaseTake lease_take(LeaseTable& t, int slot, std::uint64_t* uses) noexcept {
  LeaseSlot& s = t.slots[slot];
  std::uint32_t w = s.word.load(std::memory_order_acquire);
  for (;;) {
    const std::uint32_t st = lease_state(w);
    if (st == kLeaseGone || st == kLeaseFree) break;
    if (st == kLeaseRecall) return LeaseTake::Recalling;
    const std::uint32_t next = lease_with(w, st == kLeaseIdle ? kLeaseGone : kLeaseRecall);
    if (s.word.compare_exchange_weak(w, next, std::memory_order_acq_rel,
                                     std::memory_order_acquire)) {
      if (st == kLeaseHeld) return LeaseTake::Recalling;
      break;
    }
  }
  *uses = s.uses.load(std::memory_order_relaxed);
  return LeaseTake::Taken;
}

// The lease is over on both sides: the slot may be published again.
inline void lease_free(LeaseTable& t, int slot) noexcept {
  LeaseSlot& s = t.slots[slot];
  s.word.store(lease_with(s.word.load(std::memory_order_relaxed), kLeaseFree),
               std::memory_order_release);
}

}  // namespace vcx::channel
