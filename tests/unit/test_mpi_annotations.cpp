// User annotations in the MPI translator (docs/annotations.md): the events
// the interceptor's MPI_Pcontrol reports, and the primitives they become.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "support/mpi_harness.h"

using namespace vcx;
using namespace vcx::mpi;
using namespace vcx::mpitest;
using Catch::Matchers::Contains;
using vcx::sim::SimFatal;

namespace {

constexpr std::uint64_t kAnnotationQueue = std::uint64_t{1} << 42;

CallProgram annotate(Tx& tx, Call call, std::int32_t rank, std::int64_t id,
                     std::uint64_t comm = kWorldHandle) {
  AnnotateEvent e{};
  e.comm = comm;
  e.id = id;
  e.rank = rank;
  return tx.feed(Event::of(call, e));
}

}  // namespace

TEST_CASE("mpi annotations: names and ticks", "[mpi][annotate]") {
  Tx tx(0, 2);
  tx.init(0, 2);
  const CallProgram t = annotate(tx, Call::Annotate_tick, 0, 0);
  CHECK(t.clocked());
  CHECK(t.ops().empty());
  CHECK(std::string(tx.translator().call_name(t.call())) == "vcx_annotate_tick");
  CHECK(std::string(tx.translator().call_name(
            static_cast<std::uint16_t>(Call::Annotate_resource_wait))) ==
        "vcx_annotate_resource_wait");
  CHECK(std::string(tx.translator().call_name(static_cast<std::uint16_t>(Call::Send))) ==
        "MPI_Send");
}

TEST_CASE("mpi annotations: process queues are apart from MPI tags and per communicator",
          "[mpi][annotate]") {
  Tx tx(1, 4);
  tx.init(1, 4);
  const CallProgram s = annotate(tx, Call::Annotate_process_signal, 2, 5);
  REQUIRE(s.ops().size() == 1);
  CHECK(s.clocked());
  CHECK(s.ops()[0].kind == OpKind::Signal);
  CHECK(s.ops()[0].peer == Rank{2});
  const QueueId q = s.ops()[0].queue;
  CHECK(q.a == wq(tx, 5).a);
  CHECK(q.b == (kAnnotationQueue | 5));
  CHECK(q != wq(tx, 5));
  CHECK(s.ops()[0].value == 1);  // first position on the queue
  CHECK(annotate(tx, Call::Annotate_process_signal, 2, 5).ops()[0].value == 2);

  const CallProgram w = annotate(tx, Call::Annotate_process_wait, 3, 5);
  REQUIRE(w.ops().size() == 1);
  CHECK(w.ops()[0].kind == OpKind::Wait);
  CHECK(tx.rec().binds.back() == Bind{w.ops()[0].value, Rank{3}, q});

  // The MPI form on a communicator: ranks translated, another queue.
  tx.comm_new(Call::Comm_split, kWorldHandle, 0x2000, {3, 1});
  const GroupId split = tx.rec().groups.back().first;
  const CallProgram ms = annotate(tx, Call::Annotate_process_signal, 0, 5, 0x2000);
  REQUIRE(ms.ops().size() == 1);
  CHECK(ms.ops()[0].peer == Rank{3});
  CHECK(ms.ops()[0].queue == QueueId{split.value, kAnnotationQueue | 5});
}

TEST_CASE("mpi annotations: resources are deposits and fetches at the deposition",
          "[mpi][annotate]") {
  Tx tx(0, 3);
  tx.init(0, 3);
  const CallProgram s = annotate(tx, Call::Annotate_resource_signal, 2, 42);
  REQUIRE(s.ops().size() == 2);
  CHECK(s.clocked());
  CHECK(s.ops()[0].kind == OpKind::Acquire);
  CHECK(s.ops()[1].kind == OpKind::Release);
  for (const Op& op : s.ops()) {
    CHECK(op.flags == kResourceDeposit);
    CHECK(op.peer == Rank{2});
  }
  const CallProgram w = annotate(tx, Call::Annotate_resource_wait, 2, 42);
  REQUIRE(w.ops().size() == 1);
  CHECK(w.ops()[0].kind == OpKind::Acquire);
  CHECK(w.ops()[0].flags == (kResourceShared | kResourceFetch));
  CHECK(w.ops()[0].queue == s.ops()[0].queue);  // the same resource
  CHECK(annotate(tx, Call::Annotate_resource_wait, 2, 43).ops()[0].queue != s.ops()[0].queue);
  CHECK(annotate(tx, Call::Annotate_resource_wait, 1, 42).ops()[0].peer == Rank{1});
}

TEST_CASE("mpi annotations: MPI_PROC_NULL does nothing; bad ranks and queues are fatal",
          "[mpi][annotate]") {
  Tx tx(0, 2);
  tx.init(0, 2);
  for (Call c : {Call::Annotate_process_signal, Call::Annotate_process_wait,
                 Call::Annotate_resource_signal, Call::Annotate_resource_wait}) {
    const CallProgram p = annotate(tx, c, kRankProcNull, 1);
    CHECK_FALSE(p.clocked());
    CHECK(p.ops().empty());
  }
  CHECK_THROWS_WITH(annotate(tx, Call::Annotate_process_signal, 2, 1),
                    Contains("mpi: rank 0: vcx_annotate_process_signal: rank 2"));
  CHECK_THROWS_WITH(annotate(tx, Call::Annotate_process_wait, 1, -1),
                    Contains("queue -1 is negative"));
  CHECK_THROWS_AS(annotate(tx, Call::Annotate_resource_wait, 0, 1, 0x7777), SimFatal);
}
