// Annotated resources in the vclock engine (vcx_annotate_resource_signal and
// _wait, docs/annotations.md): a deposit is an exclusive acquisition that
// merges nothing (kResourceDeposit) followed by a release that adds its
// clock to the resource's; a fetch is a shared acquisition that holds
// nothing (kResourceFetch). Black box through the built plugin.
#include <catch2/catch.hpp>
#include <cstdint>

#include "support/engine_sim.h"

using namespace vcx;
using namespace vcx::sim;
using Catch::Matchers::Contains;

namespace {

constexpr std::uint64_t kRes = 0x61;

Op resource_op(OpKind k, std::uint32_t deposition, std::uint16_t flags) {
  Op op;
  op.kind = k;
  op.flags = flags;
  op.peer = Rank{deposition};
  op.queue = QueueId{kRes, 0};
  return op;
}

// What the MPI translator makes of the two annotations.
Prog deposit_call(std::uint32_t deposition) {
  Prog p = Prog::clocked_call(60);
  p.ops.push_back(resource_op(OpKind::Acquire, deposition, kResourceDeposit));
  p.ops.push_back(resource_op(OpKind::Release, deposition, kResourceDeposit));
  return p;
}
Prog fetch_call(std::uint32_t deposition) {
  Prog p = Prog::clocked_call(61);
  p.ops.push_back(
      resource_op(OpKind::Acquire, deposition, kResourceShared | kResourceFetch));
  return p;
}

const Clock& clock_of(const EngineSim& sim, std::uint32_t r, const EngineSim::Submitted& s) {
  return sim.calls(r).at(static_cast<std::size_t>(s.call_index)).clock;
}

}  // namespace

TEST_CASE("annotated resources: deposits merge nothing, a fetch merges every deposit so far",
          "[engine][annotate]") {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(4, seed);
    sim.local(0);
    const auto d0 = sim.submit(0, deposit_call(3), true);
    const auto d1 = sim.submit(1, deposit_call(3), true);
    sim.drain();
    REQUIRE(sim.engine(0).idle());
    REQUIRE(sim.engine(1).idle());
    const auto f1 = sim.submit(2, fetch_call(3), true);
    sim.drain();
    REQUIRE(sim.engine(2).idle());
    // A later deposit does not learn the earlier ones; the next fetch sees
    // all three.
    const auto d2 = sim.submit(0, deposit_call(3), true);
    sim.drain();
    const auto f2 = sim.submit(2, fetch_call(3), true);
    // A fetch of a resource without deposits merges nothing.
    Prog empty = Prog::clocked_call(61);
    Op op = resource_op(OpKind::Acquire, 1, kResourceShared | kResourceFetch);
    op.queue = QueueId{kRes + 1, 0};
    empty.ops.push_back(op);
    const auto f3 = sim.submit(3, empty, true);
    sim.drain();
    REQUIRE(sim.all_idle());
    CHECK(clock_of(sim, 0, d0) == Clock{2, 0, 0, 0});
    CHECK(clock_of(sim, 1, d1) == Clock{0, 1, 0, 0});
    CHECK(clock_of(sim, 2, f1) == Clock{2, 1, 1, 0});
    CHECK(clock_of(sim, 0, d2) == Clock{3, 0, 0, 0});
    CHECK(clock_of(sim, 2, f2) == Clock{3, 1, 2, 0});
    CHECK(clock_of(sim, 3, f3) == Clock{0, 0, 0, 1});
  }
}

TEST_CASE("annotated resources: a fetch waits for a deposit that was granted but not released",
          "[engine][annotate]") {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    INFO("delivery seed " << seed);
    EngineSim sim(3, seed);
    // The deposit's acquisition alone: granted, its release not sent yet.
    Prog acquire = Prog::clocked_call(60);
    acquire.ops.push_back(resource_op(OpKind::Acquire, 2, kResourceDeposit));
    const auto a = sim.submit(0, acquire, true);
    sim.drain();
    REQUIRE(sim.engine(0).idle());
    const auto f = sim.submit(1, fetch_call(2), true);
    sim.drain();
    CHECK_FALSE(sim.engine(1).idle());
    // Granted in order at once; its clock waits for the deposit's.
    CHECK_THAT(sim.engine(1).blocked_on(), Contains("the clock of a lock granted at rank 2"));
    Prog release = Prog::unclocked(62);
    release.ops.push_back(resource_op(OpKind::Release, 2, kResourceDeposit));
    sim.submit(0, release);
    sim.drain();
    REQUIRE(sim.all_idle());
    CHECK(clock_of(sim, 0, a) == Clock{1, 0, 0});
    CHECK(clock_of(sim, 1, f) == Clock{1, 1, 0});
  }
}
