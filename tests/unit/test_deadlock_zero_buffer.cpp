// Potential deadlocks (modules/deadlock/zero_buffer.h) on random programs of
// blocking and non-blocking point-to-point calls and barriers. The oracle
// runs each program itself, from MPI's rules with no buffering (MPI 4.0,
// 3.4-3.7, 6.3): a standard send completes only once the matching receive
// is posted, a receive once the matching message is sent, messages between
// two ranks with one tag match in order, the n-th barrier completes once
// every rank entered its n-th; the ranks it leaves short of their end are
// the deadlocked ones. The check sees only the call logs a run records
// (call_log.h: the clocked calls, what each sent, received and completed,
// where each receive was posted), written here as the engine writes them,
// and must name exactly those ranks.
#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <random>
#include <set>
#include <tuple>

#include "../../modules/deadlock/zero_buffer.h"
#include "vcx/call_program.h"

using namespace vcx::deadlock;

namespace {

enum class Kind { Send, Isend, Recv, Irecv, Waitall, Barrier };

struct Stmt {
  Kind kind{};
  int peer = 0;
  int tag = 0;
  std::vector<int> requests;  // Waitall: the requests it completes (Isend, Irecv: its own)
};
using Program = std::vector<std::vector<Stmt>>;

// A message channel: (source, destination, tag).
using Channel = std::tuple<int, int, int>;

// ---- the oracle: the program run by MPI's rules ----

struct Request {
  bool send = false;
  Channel channel{};
  int index = 0;  // 1-based on its channel
};

// The ranks that cannot reach their end; `buffered`: sends complete at once.
std::set<int> run(const Program& prog, bool buffered) {
  const int n = static_cast<int>(prog.size());
  std::map<Channel, int> offered, posted;  // messages sent / receives posted per channel
  std::vector<int> barriers(n, 0);         // barriers entered per rank
  std::vector<std::size_t> pc(n, 0);
  std::vector<bool> entered(n, false);
  std::vector<std::map<int, Request>> requests(n);
  std::vector<Request> current(n);  // the blocking call's own operation
  auto complete = [&](const Request& q) {
    return q.send ? buffered || posted[q.channel] >= q.index : offered[q.channel] >= q.index;
  };
  for (bool moved = true; moved;) {
    moved = false;
    for (int r = 0; r < n; ++r) {
      while (pc[r] < prog[r].size()) {
        const Stmt& s = prog[r][pc[r]];
        if (!entered[r]) {
          entered[r] = true;
          moved = true;
          if (s.kind == Kind::Send || s.kind == Kind::Isend) {
            const Channel c{r, s.peer, s.tag};
            current[r] = Request{true, c, ++offered[c]};
          } else if (s.kind == Kind::Recv || s.kind == Kind::Irecv) {
            const Channel c{s.peer, r, s.tag};
            current[r] = Request{false, c, ++posted[c]};
          }
          if (s.kind == Kind::Isend || s.kind == Kind::Irecv)
            requests[r][s.requests.at(0)] = current[r];
          if (s.kind == Kind::Barrier) ++barriers[r];
        }
        bool done = true;
        if (s.kind == Kind::Barrier)
          for (int q = 0; q < n; ++q) done = done && barriers[q] >= barriers[r];
        if (s.kind == Kind::Send || s.kind == Kind::Recv) done = complete(current[r]);
        if (s.kind == Kind::Waitall)
          for (const int q : s.requests) done = done && complete(requests[r].at(q));
        if (!done) break;
        ++pc[r];
        entered[r] = false;
        moved = true;
      }
    }
  }
  std::set<int> stuck;
  for (int r = 0; r < n; ++r)
    if (pc[r] < prog[r].size()) stuck.insert(r);
  return stuck;
}

// ---- the logs a run of it records (the engine's and the tool's rules) ----

std::vector<RankLog> logs_of(const Program& prog) {
  const int n = static_cast<int>(prog.size());
  std::vector<RankLog> logs(n);
  std::map<Channel, int> sent, posted;
  for (int r = 0; r < n; ++r) {
    RankLog& log = logs[r];
    log.names = {{name_key(1, 1), "MPI_Send"},
                 {name_key(1, 2), "MPI_Isend"},
                 {name_key(1, 3), "MPI_Recv"},
                 {name_key(1, 5), "MPI_Waitall"},
                 {name_key(1, 6), "MPI_Barrier"}};
    for (int m = 0; m < n; ++m) {  // the group of all ranks, as the translator registers it
      LogRecord x;
      x.type = LogType::Member;
      x.a = 77;
      x.c = static_cast<std::uint64_t>(m);
      x.peer = static_cast<std::uint32_t>(m);
      log.records.push_back(x);
    }
    std::uint64_t barrier = 0;
    std::uint64_t clocked = 0;
    std::map<int, Request> requests;
    // Irecv requests: the clocked calls before them, and the waits since
    // the last of those that completed sends without being clocked.
    std::map<int, std::pair<std::uint64_t, std::uint32_t>> posted_after;
    std::uint32_t waits = 0;
    auto call = [&](std::uint16_t id, std::size_t i) {
      waits = 0;
      vcx::deadlock::LogRecord x;
      x.type = LogType::Call;
      x.model = 1;
      x.call = id;
      x.a = clocked++;
      x.b = 0x1000u * static_cast<unsigned>(r + 1) + i;
      log.records.push_back(x);
    };
    using Posted = std::pair<std::uint64_t, std::uint32_t>;
    auto message = [&](LogType type, const Request& q, Posted after, bool in_call, std::size_t i,
                       bool before, bool first = false) {
      LogRecord x;
      x.type = type;
      const auto [src, dst, tag] = q.channel;
      x.peer = static_cast<std::uint32_t>(q.send ? dst : src);
      x.a = 9;
      x.b = static_cast<std::uint64_t>(tag);
      x.c = static_cast<std::uint64_t>(q.index);
      if (type == LogType::Received) {
        x.d = after.first;
        x.waits = after.second;
        if (in_call) x.flags = kLogPostedInCall;
      }
      if (type == LogType::Completed) {
        x.model = 1;
        x.call = 5;
        x.d = 0x1000u * static_cast<unsigned>(r + 1) + i;
        if (before) x.flags = static_cast<std::uint8_t>(kLogBefore | (first ? kLogNewWait : 0));
      }
      log.records.push_back(x);
    };
    for (std::size_t i = 0; i < prog[r].size(); ++i) {
      const Stmt& s = prog[r][i];
      switch (s.kind) {
        case Kind::Send:
        case Kind::Isend: {
          const Channel c{r, s.peer, s.tag};
          const Request q{true, c, ++sent[c]};
          call(s.kind == Kind::Send ? 1 : 2, i);
          message(LogType::Sent, q, {}, false, i, false);
          if (s.kind == Kind::Send) message(LogType::Completed, q, {}, false, i, false);
          else requests[s.requests.at(0)] = q;
          break;
        }
        case Kind::Recv: {
          const Channel c{s.peer, r, s.tag};
          const Request q{false, c, ++posted[c]};
          const std::pair<std::uint64_t, std::uint32_t> after{clocked, 0};
          call(3, i);
          message(LogType::Received, q, after, true, i, false);
          break;
        }
        case Kind::Irecv: {  // not clocked
          const Channel c{s.peer, r, s.tag};
          requests[s.requests.at(0)] = Request{false, c, ++posted[c]};
          posted_after[s.requests.at(0)] = {clocked, waits};
          break;
        }
        case Kind::Barrier: {
          call(6, i);
          ++barrier;
          for (const bool completed : {false, true}) {
            LogRecord x;
            x.type = LogType::Collective;
            x.flags = completed ? kLogCompleted : 0;
            x.a = 77;
            x.b = barrier;
            x.c = static_cast<std::uint64_t>(vcx::CollectiveKind::AllToAll);
            log.records.push_back(x);
          }
          break;
        }
        case Kind::Waitall: {
          // Clocked when it completes a receive; its sends' completions
          // are then the call's, else they come on their own.
          bool receives = false;
          for (const int q : s.requests) receives = receives || !requests.at(q).send;
          if (receives) call(5, i);
          bool first = true;
          for (const int q : s.requests) {
            const Request& req = requests.at(q);
            if (req.send) {
              message(LogType::Completed, req, {}, false, i, !receives, first);
              first = false;
            } else {
              message(LogType::Received, req, posted_after.at(q), false, i, false);
            }
          }
          if (!receives && !first) ++waits;
          break;
        }
      }
    }
  }
  return logs;
}

// A random program whose ranks exchange `messages` messages, each sent and
// received blocking or not, every request waited for at a random later point
// (in a Waitall with the others due there).
Program random_program(std::mt19937& rng, int ranks, int messages) {
  Program prog(ranks);
  std::vector<std::vector<std::pair<int, int>>> due(ranks);  // (position, request) per rank
  int next_request = 1;
  auto pick = [&](int below) { return std::uniform_int_distribution<int>(0, below - 1)(rng); };
  for (int m = 0; m < messages; ++m) {
    const int src = pick(ranks), dst = pick(ranks), tag = pick(2);
    const bool isend = pick(2) == 0, irecv = pick(2) == 0;
    const int sreq = next_request++, rreq = next_request++;
    prog[src].push_back(Stmt{isend ? Kind::Isend : Kind::Send, dst, tag, {sreq}});
    prog[dst].push_back(Stmt{irecv ? Kind::Irecv : Kind::Recv, src, tag, {rreq}});
    if (pick(6) == 0)
      for (auto& p : prog) p.push_back(Stmt{Kind::Barrier, 0, 0, {}});
    if (isend) due[src].push_back({static_cast<int>(prog[src].size()) + pick(3), sreq});
    if (irecv) due[dst].push_back({static_cast<int>(prog[dst].size()) + pick(3), rreq});
  }
  // Interleave each rank's waits: after a random number of its later calls.
  for (int r = 0; r < ranks; ++r) {
    std::vector<Stmt> out;
    std::map<int, std::vector<int>> at;
    for (const auto& [pos, q] : due[r])
      at[std::min<int>(pos, static_cast<int>(prog[r].size()))].push_back(q);
    for (int i = 0; i <= static_cast<int>(prog[r].size()); ++i) {
      if (at.count(i)) out.push_back(Stmt{Kind::Waitall, 0, 0, at[i]});
      if (i < static_cast<int>(prog[r].size())) out.push_back(prog[r][i]);
    }
    prog[r] = std::move(out);
  }
  return prog;
}

std::string text(const Program& prog) {
  static const char* names[] = {"send", "isend", "recv", "irecv", "waitall", "barrier"};
  std::string t;
  for (std::size_t r = 0; r < prog.size(); ++r) {
    t += "rank " + std::to_string(r) + ":";
    for (const Stmt& s : prog[r]) {
      t += std::string(" ") + names[static_cast<int>(s.kind)] + "(";
      if (s.kind != Kind::Waitall && s.kind != Kind::Barrier) t += std::to_string(s.peer) + ",t" + std::to_string(s.tag);
      for (const int q : s.requests) t += " r" + std::to_string(q);
      t += ")";
    }
    t += "\n";
  }
  return t;
}

std::set<int> found(const Program& prog) {
  std::set<int> out;
  if (const auto d = find_potential_deadlock(logs_of(prog)))
    for (const ZeroBufferStuck& s : d->ranks) out.insert(static_cast<int>(s.rank));
  return out;
}

Stmt send(int to, int tag = 0) { return Stmt{Kind::Send, to, tag, {}}; }
Stmt recv(int from, int tag = 0) { return Stmt{Kind::Recv, from, tag, {}}; }
Stmt isend(int to, int req, int tag = 0) { return Stmt{Kind::Isend, to, tag, {req}}; }
Stmt irecv(int from, int req, int tag = 0) { return Stmt{Kind::Irecv, from, tag, {req}}; }
Stmt waitall(std::vector<int> reqs) { return Stmt{Kind::Waitall, 0, 0, std::move(reqs)}; }
Stmt barrier() { return Stmt{Kind::Barrier, 0, 0, {}}; }

}  // namespace

TEST_CASE("potential deadlocks: the classic cases", "[deadlock]") {
  // Both send first: each send waits for a receive posted after the other's send.
  CHECK(found({{send(1), recv(1)}, {send(0), recv(0)}}) == std::set<int>{0, 1});
  // One receives first: safe without buffering.
  CHECK(found({{send(1), recv(1)}, {recv(0), send(0)}}).empty());
  // A send to itself before the receive; and after its Irecv (safe).
  CHECK(found({{send(0), recv(0)}, {}}) == std::set<int>{0});
  CHECK(found({{irecv(0, 1), send(0), waitall({1})}, {}}).empty());
  // Isend then a wait for it alone, before the receive: the wait is not
  // clocked, and it is where the ranks would stay.
  const Program isend_wait = {{isend(1, 1), waitall({1}), recv(1)},
                              {isend(0, 1), waitall({1}), recv(0)}};
  CHECK(found(isend_wait) == std::set<int>{0, 1});
  // Irecv, Isend, one Waitall: safe.
  CHECK(found({{irecv(1, 1), isend(1, 2), waitall({1, 2})},
               {irecv(0, 1), isend(0, 2), waitall({1, 2})}})
            .empty());
  // A ring of three sends.
  CHECK(found({{send(1), recv(2)}, {send(2), recv(0)}, {send(0), recv(1)}}) ==
        std::set<int>{0, 1, 2});
  // A wait for a send after the rank's last clocked call.
  CHECK(found({{recv(1), isend(1, 1), waitall({1})}, {send(0), recv(0)}}).empty());
  // Rank 0's wait after its last clocked call needs rank 1's receive,
  // which rank 1 posts only after its send to rank 2, which waits as rank
  // 2's send to rank 1 does.
  CHECK(found({{isend(1, 1), waitall({1})}, {send(2), recv(2), recv(0)}, {send(1), recv(1)}}) ==
        std::set<int>{0, 1, 2});
  // A wait for a send, then a receive posted in the same gap: the receive
  // is not posted while the rank waits.
  CHECK(found({{isend(1, 1), waitall({1}), irecv(1, 2), waitall({2})},
               {isend(0, 1), waitall({1}), irecv(0, 2), waitall({2})}}) == std::set<int>{0, 1});
  // A send before a barrier its receiver enters before the receive.
  CHECK(found({{send(1), barrier()}, {barrier(), recv(0)}}) == std::set<int>{0, 1});
  CHECK(found({{barrier(), send(1)}, {barrier(), recv(0)}}).empty());
  CHECK(found({{send(1), barrier()}, {recv(0), barrier()}, {barrier()}}).empty());
  CHECK(found({{irecv(1, 2), isend(1, 1), waitall({1}), waitall({2})},
               {irecv(0, 2), isend(0, 1), waitall({1}), waitall({2})}})
            .empty());
}

TEST_CASE("potential deadlocks: nothing is said where a wildcard receive could match otherwise",
          "[deadlock]") {
  // Both send first: reported while the receives name their sources...
  std::vector<RankLog> logs = logs_of({{send(1), recv(1)}, {send(0), recv(0)}});
  REQUIRE(find_potential_deadlock(logs));
  // ...but not when rank 1's receive took rank 0's message as one posted
  // for any source: rank 0's send waits for the posting of such a receive,
  // and without buffering an earlier one could have matched it.
  for (LogRecord& x : logs[1].records)
    if (x.type == LogType::Received) x.flags |= kLogWildcard;
  CHECK_FALSE(find_potential_deadlock(logs));
  // Nor when a rank would stay in a call that returns on any completion.
  logs = logs_of({{send(1), recv(1)}, {send(0), recv(0)}});
  logs[1].names[name_key(1, 1)] = "MPI_Waitany";
  CHECK_FALSE(find_potential_deadlock(logs));
}

TEST_CASE("potential deadlocks: random programs against the oracle", "[deadlock]") {
  std::mt19937 rng(20261207);
  int deadlocking = 0, checked = 0;
  for (int i = 0; i < 4000; ++i) {
    const int ranks = 2 + static_cast<int>(rng() % 3);
    const Program prog = random_program(rng, ranks, 2 + static_cast<int>(rng() % 7));
    // Only runs that finish with buffering reach the check.
    if (!run(prog, true).empty()) continue;
    ++checked;
    const std::set<int> expected = run(prog, false);
    if (!expected.empty()) ++deadlocking;
    INFO("program " << i << ":\n" << text(prog));
    CHECK(found(prog) == expected);
  }
  // The campaign means something: both kinds of program are common.
  CHECK(checked > 1000);
  CHECK(deadlocking > 200);
  CHECK(checked - deadlocking > 200);
}
