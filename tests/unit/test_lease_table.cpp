// The lock lease table shared by an application and its tool
// (core/include/vcx/channel/lease_table.h): the transitions each side may
// make, and a run of both sides in two threads in which the application
// never takes a lease the tool has taken back and the tool always learns how
// many acquisitions were made under it.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <random>
#include <thread>

#include "support/lease_table_fixture.h"
#include "vcx/channel/lease_table.h"

using namespace vcx::channel;

namespace {

std::uint32_t state_of(const LeaseTable& t, int slot) {
  return lease_state(t.slots[slot].word.load());
}

}  // namespace

TEST_CASE("lease table: a published lease is held, then idle after the release",
          "[lease]") {
  auto t = vcx::sim::fresh_lease_table();
  CHECK(lease_acquire(*t, 7, 1, 0) == -1);  // nothing published
  const int slot = lease_publish(*t, 7, 1, 0);
  REQUIRE(slot == 0);
  CHECK(state_of(*t, slot) == kLeaseHeld);
  // The application's release of the granted holding finds it.
  CHECK(lease_held(*t, 7, 1) == slot);
  CHECK(lease_held(*t, 7, 2) == -1);
  CHECK(lease_release(*t, slot));
  CHECK(state_of(*t, slot) == kLeaseIdle);
  CHECK(lease_held(*t, 7, 1) == -1);
  // Only the same object, target and kind take it.
  CHECK(lease_acquire(*t, 8, 1, 0) == -1);
  CHECK(lease_acquire(*t, 7, 2, 0) == -1);
  CHECK(lease_acquire(*t, 7, 1, 1) == -1);
  CHECK(lease_acquire(*t, 7, 1, 0) == slot);
  CHECK(state_of(*t, slot) == kLeaseHeld);
  CHECK(lease_acquire(*t, 7, 1, 0) == -1);  // held: not twice
  CHECK(lease_release(*t, slot));
  CHECK(lease_acquire(*t, 7, 1, 0) == slot);
  CHECK(lease_release(*t, slot));

  std::uint64_t uses = 0;
  CHECK(lease_take(*t, slot, &uses) == LeaseTake::Taken);
  CHECK(uses == 2);
  CHECK(state_of(*t, slot) == kLeaseGone);
  CHECK(lease_acquire(*t, 7, 1, 0) == -1);
  lease_free(*t, slot);
  CHECK(state_of(*t, slot) == kLeaseFree);
}

TEST_CASE("lease table: a lease recalled while held ends at the application's release",
          "[lease]") {
  auto t = vcx::sim::fresh_lease_table();
  const int slot = lease_publish(*t, 7, 1, 1);
  std::uint64_t uses = 99;
  CHECK(lease_take(*t, slot, &uses) == LeaseTake::Recalling);
  CHECK(uses == 99);  // not known yet
  CHECK(state_of(*t, slot) == kLeaseRecall);
  CHECK(lease_take(*t, slot, &uses) == LeaseTake::Recalling);  // asked twice: same
  CHECK(lease_held(*t, 7, 1) == slot);
  CHECK_FALSE(lease_release(*t, slot));  // the lease ends here
  CHECK(state_of(*t, slot) == kLeaseGone);
  CHECK(lease_acquire(*t, 7, 1, 1) == -1);
}

TEST_CASE("lease table: freeing the object gives up its idle leases, not others",
          "[lease]") {
  auto t = vcx::sim::fresh_lease_table();
  const int a = lease_publish(*t, 7, 0, 0);
  const int b = lease_publish(*t, 7, 1, 0);
  const int c = lease_publish(*t, 9, 0, 0);
  REQUIRE((a == 0 && b == 1 && c == 2));
  CHECK(t->slots_used.load() == 3);
  CHECK(lease_release(*t, a));
  CHECK(lease_release(*t, c));
  // b is still held (an erroneous free would find it so): left alone.
  lease_drop(*t, 7);
  CHECK(state_of(*t, a) == kLeaseGone);
  CHECK(state_of(*t, b) == kLeaseHeld);
  CHECK(state_of(*t, c) == kLeaseIdle);
  std::uint64_t uses = 5;
  CHECK(lease_take(*t, a, &uses) == LeaseTake::Taken);
  CHECK(uses == 0);
}

TEST_CASE("lease table: a reused slot is not taken under its old name", "[lease]") {
  auto t = vcx::sim::fresh_lease_table();
  const int slot = lease_publish(*t, 7, 1, 0);
  CHECK(lease_release(*t, slot));
  std::uint64_t uses = 0;
  CHECK(lease_take(*t, slot, &uses) == LeaseTake::Taken);
  lease_free(*t, slot);
  const std::uint32_t before = t->slots[slot].word.load();
  CHECK(lease_publish(*t, 8, 1, 0) == slot);
  // A new generation: a compare-and-swap against the old word fails.
  CHECK((t->slots[slot].word.load() >> 3) == (before >> 3) + 1);
  CHECK(lease_release(*t, slot));
  CHECK(lease_acquire(*t, 7, 1, 0) == -1);
  CHECK(lease_acquire(*t, 8, 1, 0) == slot);
}

TEST_CASE("lease table: every slot taken: publishing fails", "[lease]") {
  auto t = vcx::sim::fresh_lease_table();
  for (std::size_t i = 0; i < kLeaseSlots; ++i)
    CHECK(lease_publish(*t, 1, static_cast<std::uint32_t>(i), 0) == static_cast<int>(i));
  CHECK(lease_publish(*t, 2, 0, 0) == -1);
  lease_free(*t, 5);
  CHECK(lease_publish(*t, 2, 0, 0) == 5);
}

// Two threads: the application takes and releases the lock under its lease
// as fast as it can; the tool recalls it at random moments, then (as the
// deposition's next grant would) publishes a new lease. Each holding is
// counted by the side that holds it; the counts must agree, and the
// application must never hold a lease the tool took back.
TEST_CASE("lease table: application and tool in two threads agree on every use", "[lease]") {
  auto t = vcx::sim::fresh_lease_table();
  constexpr int kLeases = 2000;
  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> app_uses{0};        // acquisitions under a lease
  std::atomic<std::uint64_t> ended_by_app{0};    // releases that ended a recalled lease
  std::atomic<int> holding{0};                   // the application holds a lease now
  std::atomic<int> violations{0};
  std::atomic<int> current_slot{-1};

  std::thread app([&] {
    while (!done.load()) {
      const int s = lease_acquire(*t, 7, 3, 0);
      if (s < 0) continue;
      app_uses.fetch_add(1);
      if (holding.exchange(1) != 0) violations.fetch_add(1);
      // The tool may have taken it back only while idle: state is Held or Recall.
      const std::uint32_t st = lease_state(t->slots[s].word.load());
      if (st != kLeaseHeld && st != kLeaseRecall) violations.fetch_add(1);
      holding.store(0);
      if (!lease_release(*t, s)) ended_by_app.fetch_add(1);
    }
  });

  std::uint64_t tool_counted = 0;  // acquisitions the tool learnt of
  std::mt19937 rng(12345);
  for (int i = 0; i < kLeases; ++i) {
    const int s = lease_publish(*t, 7, 3, 0);
    CHECK(s >= 0);  // not REQUIRE: the other thread must be joined first
    if (s < 0) break;
    current_slot.store(s);
    // The granted holding, released by "the application" here.
    CHECK(lease_release(*t, s));
    for (int spin = static_cast<int>(rng() % 2000); spin > 0; --spin) std::atomic_signal_fence(std::memory_order_seq_cst);
    std::uint64_t uses = 0;
    if (lease_take(*t, s, &uses) == LeaseTake::Recalling) {
      // Wait for the application to end it at its release.
      while (lease_state(t->slots[s].word.load()) != kLeaseGone) std::this_thread::yield();
      uses = t->slots[s].uses.load();
    }
    tool_counted += uses;
    lease_free(*t, s);
  }
  done.store(true);
  app.join();
  CHECK(violations.load() == 0);
  CHECK(tool_counted == app_uses.load());
}
