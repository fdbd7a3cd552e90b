// One rank's wildcard-receive decisions (modules/matches/wildcard_matches.cpp)
// driven with notes and signals directly: answers, when they are decided,
// and that memory follows what is undecided, not the length of the run.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "../../../modules/matches/wildcard_matches.h"

using namespace vcx;
using namespace vcx::matches;

namespace {

constexpr std::uint64_t kComm = 7;
constexpr std::uint64_t kOtherComm = 8;
constexpr std::int32_t kTag = 5;

ReceivePostedNote wildcard(std::uint64_t token) {
  ReceivePostedNote n{};
  n.token = token;
  n.space = kComm;
  n.want_source = kNoteAnySource;
  n.want_tag = kTag;
  return n;
}

ReceiveBoundNote bound_to(std::uint64_t token, std::uint32_t source) {
  return ReceiveBoundNote{token, kComm, static_cast<std::uint64_t>(kTag), source, 0};
}

// A standard-mode message to rank 0 whose sender's clock has entry [0] =
// `knows` (and 0 elsewhere: these cases need no other entry).
void deliver(WildcardMatches& m, std::uint32_t source, QueueId queue, std::uint64_t position,
             ClockValue knows) {
  const std::vector<ClockValue> clock{knows, 0, 0, 0};
  m.signal(Rank{source}, queue, position, false, clock);
}

}  // namespace

TEST_CASE("matches: a master's wildcard receives over many rounds keep little",
          "[matches]") {
  // Rank 0 hands out tasks to ranks 1..3 and takes their results with
  // MPI_Recv(ANY_SOURCE) in turn; each result knows the master's send of
  // its task, not the master's later receives.
  WildcardMatches m(Rank{0}, 4);
  ClockValue tick = 0;  // the master's own entry
  std::uint64_t position[4] = {0, 0, 0, 0};
  std::uint64_t token = 0;
  auto result_from = [&](std::uint32_t w, ClockValue knows) {
    deliver(m, w, QueueId{kComm, kTag}, ++position[w], knows);
  };
  for (std::uint32_t w = 1; w <= 3; ++w) result_from(w, 0);
  std::size_t peak_messages = 0, peak_receives = 0;
  const int rounds = 3000;
  for (int i = 0; i < rounds; ++i) {
    const std::uint32_t w = 1 + static_cast<std::uint32_t>(i % 3);
    ++token;
    m.posted(wildcard(token));
    m.bound(bound_to(token, w));
    ++tick;
    m.completed(token, tick, false, tick, 0);  // MPI_Recv: its own clocked call
    ++tick;                               // MPI_Send of the next task to w
    result_from(w, tick);
    m.decide(false);
    peak_messages = std::max(peak_messages, m.messages_kept());
    peak_receives = std::max(peak_receives, m.receives_kept());
  }
  m.decide(true);
  auto& results = m.results();
  REQUIRE(results.size() == static_cast<std::size_t>(rounds));
  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::uint32_t w = 1 + static_cast<std::uint32_t>(i % 3);
    INFO("receive " << i);
    CHECK(results[i].index == i);
    CHECK(results[i].matched_source == w);
    std::vector<std::uint32_t> others;
    for (std::uint32_t s = 1; s <= 3; ++s)
      if (s != w) others.push_back(s);
    CHECK(results[i].alternatives == others);
  }
  // Each receive was decided at once: only the messages still to be taken
  // and the current receive are kept.
  CHECK(peak_messages <= 4);
  CHECK(peak_receives <= 2);
  CHECK(m.undecided() == 0);
}

TEST_CASE("matches: a sender's later message that knows the receive decides it",
          "[matches]") {
  WildcardMatches m(Rank{0}, 3);
  m.posted(wildcard(1));
  m.bound(bound_to(1, 1));
  deliver(m, 1, QueueId{kComm, kTag}, 1, 0);
  m.completed(1, 1, false, 0, 0);
  m.decide(false);
  CHECK(m.results().empty());  // rank 2 may still send a message it could take
  // Rank 2 writes on another communicator, knowing the receive: whatever it
  // sends on kComm later knows it too.
  deliver(m, 2, QueueId{kOtherComm, kTag}, 1, 1);
  m.decide(false);
  REQUIRE(m.results().size() == 1);
  CHECK(m.results()[0].alternatives.empty());
}

TEST_CASE("matches: the messages of a Sendrecv's own send do not know its receive's match",
          "[matches]") {
  // Rank 0's MPI_Sendrecv (tick 1) sends to rank 1 and receives from ANY;
  // it took rank 2's message. Rank 1 answers the Sendrecv's send with a
  // message carrying entry 1: MPI may match that send before the receive,
  // so rank 1's message could have been taken instead.
  WildcardMatches m(Rank{0}, 3);
  m.posted(wildcard(1));
  m.bound(bound_to(1, 2));
  deliver(m, 2, QueueId{kComm, kTag}, 1, 0);
  m.completed(1, 1, true, 0, 0);
  deliver(m, 1, QueueId{kComm, kTag}, 1, 1);
  m.decide(false);
  REQUIRE(m.results().size() == 1);
  CHECK(m.results()[0].alternatives == std::vector<std::uint32_t>{1});
  CHECK(m.results()[0].known_tick == 1);  // what --explore pins with is the call's own tick

  // A plain receive at tick 1: the same message knows the match.
  WildcardMatches plain(Rank{0}, 3);
  plain.posted(wildcard(1));
  plain.bound(bound_to(1, 2));
  deliver(plain, 2, QueueId{kComm, kTag}, 1, 0);
  plain.completed(1, 1, false, 0, 0);
  deliver(plain, 1, QueueId{kComm, kTag}, 1, 1);
  plain.decide(false);
  REQUIRE(plain.results().size() == 1);
  CHECK(plain.results()[0].alternatives.empty());
}

TEST_CASE("matches: a rank that never sends again is decided at the end", "[matches]") {
  WildcardMatches m(Rank{0}, 3);
  m.posted(wildcard(1));
  m.bound(bound_to(1, 1));
  deliver(m, 1, QueueId{kComm, kTag}, 1, 0);
  m.completed(1, 1, false, 0, 0);
  m.decide(false);
  CHECK(m.results().empty());
  CHECK(m.undecided() == 1);
  m.decide(true);
  REQUIRE(m.results().size() == 1);
  CHECK(m.results()[0].alternatives.empty());
}

TEST_CASE("matches: the first message a receive could take, not a later one", "[matches]") {
  // Rank 2's first message (before R's match) went to a receive posted
  // after R; its second knows R. The first is the candidate: an alternative.
  WildcardMatches m(Rank{0}, 3);
  m.posted(wildcard(1));
  m.bound(bound_to(1, 1));
  deliver(m, 1, QueueId{kComm, kTag}, 1, 0);
  deliver(m, 2, QueueId{kComm, kTag}, 1, 0);
  deliver(m, 2, QueueId{kComm, kTag}, 2, 5);
  m.completed(1, 1, false, 0, 0);
  ReceivePostedNote later = wildcard(2);
  m.posted(later);
  m.bound(bound_to(2, 2));
  m.completed(2, 2, false, 1, 0);
  m.decide(false);
  REQUIRE(m.results().size() >= 1);
  CHECK(m.results()[0].index == 0);
  CHECK(m.results()[0].alternatives == std::vector<std::uint32_t>{2});
}

TEST_CASE("matches: a receive ordered after R lowers k(R) and hides later sends",
          "[matches]") {
  // R (wildcard, non-blocking) and B (from rank 1) are pending; B is ordered
  // after R and completes first, at tick 2; R completes at tick 4. Rank 2's
  // message knows tick 3: after B, so after R's match: no alternative.
  WildcardMatches m(Rank{0}, 3);
  m.posted(wildcard(1));
  ReceivePostedNote b{};
  b.token = 2;
  b.space = kComm;
  b.want_source = 1;
  b.want_tag = kTag;
  m.posted(b);
  m.bound(bound_to(2, 1));
  m.ordered(2, 1);
  deliver(m, 1, QueueId{kComm, kTag}, 1, 0);
  deliver(m, 1, QueueId{kComm, kTag}, 2, 0);
  m.completed(2, 2, false, 1, 0);
  m.bound(bound_to(1, 1));  // R took rank 1's first message, B its second
  deliver(m, 2, QueueId{kComm, kTag}, 1, 3);
  m.completed(1, 4, false, 2, 0);
  m.decide(false);
  REQUIRE(m.results().size() == 1);
  CHECK(m.results()[0].matched_source == 1);
  CHECK(m.results()[0].alternatives.empty());
}

TEST_CASE("matches: a receive a replay forced keeps its index and has no alternative",
          "[matches]") {
  // Rank 0 posts three wildcard receives; a replay forced the second to
  // rank 2. Ranks 1 and 2 each have a message that knows nothing of rank 0.
  WildcardMatches m(Rank{0}, 3);
  deliver(m, 1, QueueId{kComm, kTag}, 1, 0);
  deliver(m, 2, QueueId{kComm, kTag}, 1, 0);
  deliver(m, 1, QueueId{kComm, kTag}, 2, 0);
  m.posted(wildcard(1));
  ReceivePostedNote forced = wildcard(2);
  forced.want_source = 2;
  forced.forced = 1;
  m.posted(forced);
  ReceivePostedNote plain = wildcard(3);
  plain.want_source = 1;  // a receive from rank 1 the program named: no index
  m.posted(plain);
  m.posted(wildcard(4));
  m.bound(bound_to(1, 1));
  m.bound(bound_to(2, 2));
  m.bound(bound_to(3, 1));
  m.completed(1, 1, false, 1, 0);
  m.completed(2, 2, false, 2, 0);
  m.completed(3, 3, false, 3, 0);
  m.decide(true);
  const auto& r = m.results();
  REQUIRE(r.size() == 2);  // #3 (token 4) was never bound nor completed
  CHECK(r[0].index == 0);
  CHECK(r[0].matched_source == 1);
  CHECK(r[0].alternatives == std::vector<std::uint32_t>{2});
  CHECK(r[1].index == 1);
  CHECK(r[1].matched_source == 2);
  CHECK(r[1].alternatives.empty());
  CHECK(m.unreported() == 1);
}

namespace {

// Rank 0: Irecv(ANY) [0] (token 1) and [1] (token 2), Waitall at tick 3.
// [0] took e of rank 3; [1] took rank 1's m (synchronous or not), so [1]
// matched after [0]. Rank 1's m has clock [0,1,0,0]; after its Wait (tick
// 2) it told rank 2, whose message c has clock [2,3,2,0].
void two_irecvs_and_a_later_message(WildcardMatches& m, bool m_synchronous) {
  const QueueId q{kComm, kTag};
  m.posted(wildcard(1));
  m.posted(wildcard(2));
  m.signal(Rank{3}, q, 1, false, std::vector<ClockValue>{0, 0, 0, 1});
  m.signal(Rank{1}, q, 1, m_synchronous, std::vector<ClockValue>{0, 1, 0, 0});
  m.bound(bound_to(1, 3));
  m.ordered(2, 1);
  m.bound(bound_to(2, 1));
  m.completed(1, 3, false, 2, 0);
  m.completed(2, 3, false, 2, 0);
  m.signal(Rank{2}, q, 1, false, std::vector<ClockValue>{2, 3, 2, 0});
}

}  // namespace

TEST_CASE("matches: a completed synchronous send tells its sender's later messages",
          "[matches]") {
  // m is an Issend: c follows [1]'s match, and so [0]'s. m itself could
  // have gone to [0].
  WildcardMatches m(Rank{0}, 4);
  const QueueId q{kComm, kTag};
  two_irecvs_and_a_later_message(m, true);
  m.decide(false);
  // Until rank 1's tool says where m's send completed, c may be an
  // alternative of [0] or not: [0] waits.
  CHECK(m.results().empty());
  m.sync_completed(Rank{1}, q, 1, 2);
  m.decide(false);
  REQUIRE(m.results().size() == 1);
  CHECK(m.results()[0].index == 0);
  CHECK(m.results()[0].alternatives == std::vector<std::uint32_t>{1});
  m.results().clear();
  m.decide(true);
  REQUIRE(m.results().size() == 1);
  CHECK(m.results()[0].index == 1);
  CHECK(m.results()[0].alternatives.empty());
}

TEST_CASE("matches: without a synchronous message, nothing waits for reports", "[matches]") {
  // As above, but m is a standard-mode send: its completion tells nothing,
  // and c (entry [0] = 2, below the Waitall's 3) is an alternative of [0]
  // at once.
  WildcardMatches m(Rank{0}, 4);
  two_irecvs_and_a_later_message(m, false);
  m.decide(false);
  REQUIRE(m.results().size() == 1);
  CHECK(m.results()[0].alternatives == std::vector<std::uint32_t>{1, 2});
}

TEST_CASE("matches: a receive posted while R was pending may still tell of R's match",
          "[matches]") {
  // [0] (token 1) completed first and took e of rank 3; [1] (token 2),
  // posted while [0] was pending, is not bound yet: if it takes a
  // synchronous message, its sender's later messages know [0]'s match.
  WildcardMatches m(Rank{0}, 4);
  const QueueId q{kComm, kTag};
  m.posted(wildcard(1));
  m.posted(wildcard(2));
  m.signal(Rank{3}, q, 1, false, std::vector<ClockValue>{0, 0, 0, 1});
  m.bound(bound_to(1, 3));
  m.completed(1, 3, false, 2, 0);
  m.signal(Rank{1}, q, 1, true, std::vector<ClockValue>{0, 1, 0, 0});
  m.signal(Rank{2}, q, 1, false, std::vector<ClockValue>{2, 3, 2, 0});
  m.decide(false);
  CHECK(m.results().empty());
  m.ordered(2, 1);
  m.bound(bound_to(2, 1));
  m.completed(2, 4, false, 3, 0);
  m.decide(false);
  CHECK(m.results().empty());  // m's completion not reported yet
  m.sync_completed(Rank{1}, q, 1, 2);
  m.decide(false);
  REQUIRE_FALSE(m.results().empty());
  CHECK(m.results()[0].index == 0);
  CHECK(m.results()[0].alternatives == std::vector<std::uint32_t>{1});
}
