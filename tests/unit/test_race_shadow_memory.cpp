// The race analysis's comparison of accesses (modules/race/shadow_memory),
// against the definition: two accesses race when they conflict and neither
// one's completion happened before the other's start. The reference below
// decides "happened before" by searching the run's graph of events (program
// order and messages), not with vector clocks; the clocks handed to the
// shadow memory are derived from that graph.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "../../modules/race/shadow_memory.h"

using namespace vcx;
using namespace vcx::race;

namespace {

AccessRecord rec(std::uint32_t rank, std::uint64_t lo, std::uint64_t hi, AccessMode mode,
                 std::vector<ClockValue> start, ClockValue done, std::uint64_t start_seq,
                 std::uint64_t done_seq, std::uint64_t pc) {
  AccessRecord r;
  r.rank = Rank{rank};
  r.space = 1;
  r.lo = lo;
  r.hi = hi;
  r.mode = mode;
  r.start = std::move(start);
  r.done = done;
  r.start_seq = start_seq;
  r.done_seq = done_seq;
  r.pc = pc;
  return r;
}

using Pairs = std::set<std::pair<std::uint64_t, std::uint64_t>>;

Pairs races_of(std::vector<AccessRecord> records) {
  Pairs found;
  ShadowMemory shadow([&](const AccessRecord& a, const AccessRecord& b) {
    found.emplace(std::min(a.pc, b.pc), std::max(a.pc, b.pc));
  });
  for (auto& r : records) shadow.add(std::move(r));
  return found;
}

}  // namespace

TEST_CASE("two puts of one fence epoch race; a fence between orders them", "[race]") {
  // Ranks 0 and 1 put into rank 1's bytes 0..3 after fence 1 (tick 1 each);
  // both complete at fence 2 (tick 2), which merges both clocks.
  const auto a = rec(0, 0, 4, AccessMode::Write, {1, 1}, 2, 1, 2, 10);
  const auto b = rec(1, 0, 4, AccessMode::Write, {1, 1}, 2, 1, 2, 11);
  CHECK(races_of({a, b}) == Pairs{{10, 11}});
  // Rank 1's put after fence 2: its start clock has rank 0's tick 2.
  const auto c = rec(1, 0, 4, AccessMode::Write, {2, 2}, 3, 3, 4, 12);
  CHECK(races_of({a, c}).empty());
  CHECK(races_of({c, a}).empty());  // arrival order does not matter
}

TEST_CASE("reads do not race with reads; disjoint bytes do not race", "[race]") {
  const auto a = rec(0, 0, 4, AccessMode::Read, {1, 1}, 2, 1, 2, 10);
  const auto b = rec(1, 0, 4, AccessMode::Read, {1, 1}, 2, 1, 2, 11);
  const auto c = rec(1, 4, 8, AccessMode::Write, {1, 1}, 2, 1, 2, 12);
  CHECK(races_of({a, b, c}).empty());
  // One byte of overlap is enough.
  const auto d = rec(1, 3, 5, AccessMode::Write, {1, 1}, 2, 1, 2, 13);
  CHECK(races_of({a, d}) == Pairs{{10, 13}});
}

TEST_CASE("atomic accesses race only with other operations or types", "[race]") {
  auto atomic = [](AccessRecord r, std::uint32_t op, std::uint32_t type, bool read_only) {
    r.atomic_op = op;
    r.atomic_type = type;
    r.atomic_read = read_only;
    return r;
  };
  const auto base0 = rec(0, 0, 4, AccessMode::Write, {1, 1}, 2, 1, 2, 10);
  const auto base1 = rec(1, 0, 4, AccessMode::Write, {1, 1}, 2, 1, 2, 11);
  CHECK(races_of({atomic(base0, 7, 3, false), atomic(base1, 7, 3, false)}).empty());
  CHECK(races_of({atomic(base0, 7, 3, false), atomic(base1, 8, 3, false)}) == Pairs{{10, 11}});
  CHECK(races_of({atomic(base0, 7, 3, false), atomic(base1, 7, 4, false)}) == Pairs{{10, 11}});
  // An atomic read (MPI_NO_OP) goes with any operation of the same type.
  auto reader = rec(1, 0, 4, AccessMode::Read, {1, 1}, 2, 1, 2, 11);
  CHECK(races_of({atomic(base0, 7, 3, false), atomic(reader, 9, 3, true)}).empty());
  // A put is not atomic.
  CHECK(races_of({atomic(base0, 7, 3, false), base1}) == Pairs{{10, 11}});
}

TEST_CASE("a completion between one rank's accesses orders them without a clocked call",
          "[race]") {
  // Rank 0: put (seq 1), flush (seq 2, no clocked call), put (seq 3).
  const auto a = rec(0, 0, 4, AccessMode::Write, {1, 0}, 2, 1, 2, 10);
  const auto b = rec(0, 0, 4, AccessMode::Write, {1, 0}, 2, 3, 4, 11);
  CHECK(races_of({a, b}).empty());
  // Without the flush both complete at the unlock (seq 4).
  const auto a2 = rec(0, 0, 4, AccessMode::Write, {1, 0}, 2, 1, 4, 10);
  CHECK(races_of({a2, b}) == Pairs{{10, 11}});
}

TEST_CASE("a fence orders one rank's writes to the same bytes, not its reads", "[race]") {
  // Rank 0 (OpenSHMEM): p (seq 1), fence (seq 2), p (seq 3), get (seq 4);
  // the puts complete at a quiet (seq 5), the get at its return.
  auto a = rec(0, 0, 4, AccessMode::Write, {1, 0}, 2, 1, 5, 10);
  const auto b = rec(0, 0, 4, AccessMode::Write, {1, 0}, 2, 3, 5, 11);
  const auto get = rec(0, 0, 4, AccessMode::Read, {1, 0}, 1, 4, 4, 12);
  CHECK(races_of({a, b}) == Pairs{{10, 11}});  // no fence: delivery in any order
  a.ordered_seq = 2;
  a.ordered_tick = 1;
  CHECK(races_of({a, b}).empty());
  CHECK(races_of({b, a}).empty());
  CHECK(races_of({a, get}) == Pairs{{10, 12}});  // a fence orders writes only
}

TEST_CASE("a write a wait of the owner saw delivered is ordered before what follows the wait",
          "[race]") {
  // Rank 0 puts into rank 1's bytes (tick 1 at the put), never quiets.
  // Rank 1's wait (tick 3 of rank 1) saw it; rank 2 writes after learning
  // of that wait (its start clock has rank 1's tick 3), or before (2).
  auto put = rec(0, 0, 4, AccessMode::Write, {1, 0, 0}, 9, 1, 9, 10);
  const auto after = rec(2, 0, 4, AccessMode::Write, {1, 3, 1}, 2, 1, 2, 11);
  const auto before = rec(2, 0, 4, AccessMode::Write, {1, 2, 1}, 2, 1, 2, 12);
  CHECK(races_of({put, after}) == Pairs{{10, 11}});
  put.seen = true;
  put.seen_by = Rank{1};
  put.seen_tick = 3;
  CHECK(races_of({put, after}).empty());
  CHECK(races_of({after, put}).empty());
  CHECK(races_of({put, before}) == Pairs{{10, 12}});
}

TEST_CASE("the same access repeated in one epoch is kept once and still races", "[race]") {
  std::uint64_t races = 0;
  ShadowMemory shadow([&](const AccessRecord&, const AccessRecord&) { ++races; });
  for (int i = 0; i < 100; ++i)
    shadow.add(rec(0, 0, 4, AccessMode::Write, {1, 0}, 2, 1 + static_cast<std::uint64_t>(i), 200,
                   10));
  // Each repetition races with the first (a put loop without completion).
  CHECK(races == 99);
  CHECK(shadow.stored() == 1);
  // Repetitions in later epochs are kept: they order differently.
  for (int i = 0; i < 10; ++i)
    shadow.add(rec(0, 0, 4, AccessMode::Write, {static_cast<ClockValue>(3 + i), 0},
                   static_cast<ClockValue>(4 + i), 300 + 2 * static_cast<std::uint64_t>(i),
                   301 + 2 * static_cast<std::uint64_t>(i), 10));
  CHECK(shadow.stored() == 11);
}

namespace {

// A random run: per rank a program of clocked events, access starts and
// unclocked completions; messages between clocked events, from earlier to
// later in one global order (so the graph has no cycle).
struct RunModel {
  struct Item {
    bool clocked = false;
  };
  int ranks = 0;
  std::vector<std::vector<Item>> program;  // per rank, positions 0..n-1
  // Clocked event (rank, position) -> its global time.
  std::map<std::pair<int, int>, int> time;
  std::set<std::pair<std::pair<int, int>, std::pair<int, int>>> messages;

  // Whether point (p, a) happened before point (q, b), through program order
  // and messages (search in the graph).
  bool reaches(int p, int a, int q, int b) const {
    if (p == q) return a <= b;
    std::set<std::pair<int, int>> seen;
    std::vector<std::pair<int, int>> todo{{p, a}};
    while (!todo.empty()) {
      auto [r, pos] = todo.back();
      todo.pop_back();
      if (!seen.insert({r, pos}).second) continue;
      if (r == q && pos <= b) return true;
      // Later clocked events of r send their messages.
      for (int k = pos; k < static_cast<int>(program[static_cast<std::size_t>(r)].size()); ++k) {
        if (!program[static_cast<std::size_t>(r)][static_cast<std::size_t>(k)].clocked) continue;
        for (const auto& m : messages)
          if (m.first == std::make_pair(r, k)) todo.push_back(m.second);
      }
    }
    return false;
  }
  // Clocked events of `rank` up to position `pos` inclusive (its tick there).
  ClockValue tick(int rank, int pos) const {
    ClockValue n = 0;
    for (int k = 0; k <= pos && k < static_cast<int>(program[static_cast<std::size_t>(rank)].size());
         ++k)
      n += program[static_cast<std::size_t>(rank)][static_cast<std::size_t>(k)].clocked ? 1 : 0;
    return n;
  }
  // The vector clock at point (rank, pos): per rank, how many of its
  // clocked events reach the point.
  std::vector<ClockValue> clock(int rank, int pos) const {
    std::vector<ClockValue> c(static_cast<std::size_t>(ranks), 0);
    for (int p = 0; p < ranks; ++p)
      for (int k = 0; k < static_cast<int>(program[static_cast<std::size_t>(p)].size()); ++k)
        if (program[static_cast<std::size_t>(p)][static_cast<std::size_t>(k)].clocked &&
            reaches(p, k, rank, pos))
          c[static_cast<std::size_t>(p)] = tick(p, k);
    return c;
  }
};

}  // namespace

TEST_CASE("random runs: the shadow memory finds exactly the races of the definition",
          "[race]") {
  std::mt19937 rng(12345);
  for (int round = 0; round < 150; ++round) {
    RunModel m;
    m.ranks = 2 + static_cast<int>(rng() % 2);
    const int length = 10;
    m.program.assign(static_cast<std::size_t>(m.ranks), std::vector<RunModel::Item>(length));
    std::vector<std::pair<int, int>> clocked;
    for (int r = 0; r < m.ranks; ++r)
      for (int k = 0; k < length; ++k)
        if (rng() % 2 == 0) {
          m.program[static_cast<std::size_t>(r)][static_cast<std::size_t>(k)].clocked = true;
          clocked.emplace_back(r, k);
        }
    // A global order of clocked events consistent with program order.
    std::shuffle(clocked.begin(), clocked.end(), rng);
    std::stable_sort(clocked.begin(), clocked.end(),
                     [](auto x, auto y) { return x.first == y.first && x.second < y.second; });
    for (std::size_t i = 0; i < clocked.size(); ++i) m.time[clocked[i]] = static_cast<int>(i);
    for (int i = 0; i < 6 && clocked.size() > 1; ++i) {
      auto a = clocked[rng() % clocked.size()], b = clocked[rng() % clocked.size()];
      if (a.first != b.first && m.time[a] < m.time[b]) m.messages.insert({a, b});
    }
    // Accesses: start at a position, complete at a later one.
    struct Acc {
      int rank, start, done;
      std::uint64_t lo, hi;
      AccessMode mode;
    };
    std::vector<Acc> accs;
    for (int i = 0; i < 8; ++i) {
      Acc a;
      a.rank = static_cast<int>(rng() % static_cast<unsigned>(m.ranks));
      a.start = static_cast<int>(rng() % (length - 1));
      a.done = a.start + 1 + static_cast<int>(rng() % static_cast<unsigned>(length - 1 - a.start));
      a.lo = rng() % 8;
      a.hi = a.lo + 1 + rng() % 4;
      a.mode = rng() % 2 ? AccessMode::Write : AccessMode::Read;
      accs.push_back(a);
    }
    // The reference: conflict, and neither completion reaches the other's
    // start. A completion at a clocked position is that event; at another
    // position it is ordered before the next clocked event of its rank and
    // after its own program order.
    Pairs expected;
    auto before = [&](const Acc& x, const Acc& y) {
      if (x.rank == y.rank) return x.done < y.start;
      // x's completion reaches y's start through the first clocked event of
      // x's rank at or after it.
      for (int k = x.done; k < length; ++k)
        if (m.program[static_cast<std::size_t>(x.rank)][static_cast<std::size_t>(k)].clocked)
          return m.reaches(x.rank, k, y.rank, y.start);
      return false;
    };
    for (std::size_t i = 0; i < accs.size(); ++i)
      for (std::size_t j = i + 1; j < accs.size(); ++j) {
        const Acc &x = accs[i], &y = accs[j];
        const bool overlap = x.lo < y.hi && y.lo < x.hi;
        const bool writes = x.mode == AccessMode::Write || y.mode == AccessMode::Write;
        if (overlap && writes && !before(x, y) && !before(y, x)) expected.emplace(100 + i, 100 + j);
      }
    // The shadow memory's inputs: start clock at the start position, the
    // completion's tick (the clocked event at or after it), program positions.
    std::vector<AccessRecord> records;
    for (std::size_t i = 0; i < accs.size(); ++i) {
      const Acc& a = accs[i];
      const bool clocked_done =
          m.program[static_cast<std::size_t>(a.rank)][static_cast<std::size_t>(a.done)].clocked;
      const ClockValue done = m.tick(a.rank, a.done) + (clocked_done ? 0 : 1);
      records.push_back(rec(static_cast<std::uint32_t>(a.rank), a.lo, a.hi, a.mode,
                            m.clock(a.rank, a.start), done, static_cast<std::uint64_t>(a.start),
                            static_cast<std::uint64_t>(a.done), 100 + i));
    }
    std::shuffle(records.begin(), records.end(), rng);  // they arrive in any order
    INFO("round " << round);
    CHECK(races_of(records) == expected);
  }
}

namespace {

// The comparison by definition, pair by pair, with the shadow memory's rule
// for repeats (a repeat in the same epoch is not kept): what the chains'
// binary searches must count exactly.
std::map<std::pair<std::uint64_t, std::uint64_t>, int> counted_pairwise(
    const std::vector<AccessRecord>& arrivals) {
  std::map<std::pair<std::uint64_t, std::uint64_t>, int> counts;
  std::vector<AccessRecord> kept;
  for (const AccessRecord& r : arrivals) {
    bool duplicate = false;
    for (const AccessRecord& x : kept) {
      if (x.conflicts_with(r) && x.concurrent_with(r)) ++counts[{std::min(x.pc, r.pc),
                                                                 std::max(x.pc, r.pc)}];
      duplicate = duplicate || (x.repeats(r) && x.done == r.done && x.done_seq == r.done_seq &&
                                x.start == r.start && x.start_seq <= r.start_seq);
    }
    if (!duplicate) kept.push_back(r);
  }
  return counts;
}

}  // namespace

TEST_CASE("an access repeated over many epochs races with each epoch it is concurrent with",
          "[race]") {
  // Rank 0 puts to the same bytes in 1000 epochs, each complete before the
  // next starts (a lock loop); rank 1 never synchronises with it.
  std::map<std::pair<std::uint64_t, std::uint64_t>, int> counts;
  ShadowMemory shadow([&](const AccessRecord& a, const AccessRecord& b) {
    ++counts[{std::min(a.pc, b.pc), std::max(a.pc, b.pc)}];
  });
  const int epochs = 1000;
  for (int i = 0; i < epochs; ++i) {
    const auto t = static_cast<ClockValue>(2 * i + 1);
    shadow.add(rec(0, 0, 8, AccessMode::Write, {t, 0}, t + 1, 2 * static_cast<std::uint64_t>(i),
                   2 * static_cast<std::uint64_t>(i) + 1, 10));
  }
  CHECK(counts.empty());           // one rank's epochs are ordered
  CHECK(shadow.stored() == epochs);  // and may all race with what comes
  // A read by rank 1 that learned rank 0's clock up to the end of epoch 599
  // (tick 1200): it races with epochs 600..999, not with those before.
  shadow.add(rec(1, 4, 12, AccessMode::Read, {1200, 5}, 6, 5, 6, 20));
  CHECK(counts[{10, 20}] == 400);
  // A write of rank 1 that knew rank 0's first 100 epochs complete (tick
  // 200); rank 0 never learned of rank 1, so the other 900 race with it.
  shadow.add(rec(1, 0, 2, AccessMode::Write, {200, 7}, 8, 7, 8, 30));
  CHECK(counts[{10, 30}] == 900);
  CHECK(counts[{20, 30}] == 0);  // rank 1's own, ordered in its program
}

TEST_CASE("random runs with repeated accesses: chains count what pairwise comparison counts",
          "[race]") {
  std::mt19937 rng(777);
  for (int round = 0; round < 300; ++round) {
    const std::uint32_t ranks = 2 + rng() % 2;
    // Per rank a program of accesses: each starts after the previous one
    // (program order), completes later, and learns other ranks' progress
    // now and then (its start clock grows).
    std::vector<std::vector<AccessRecord>> by_rank(ranks);
    for (std::uint32_t r = 0; r < ranks; ++r) {
      std::vector<ClockValue> clock(ranks, 0);
      std::uint64_t seq = 0;
      for (int i = 0; i < 12; ++i) {
        clock[r] += 1 + rng() % 2;
        for (std::uint32_t q = 0; q < ranks; ++q)
          if (q != r && rng() % 4 == 0) clock[q] += rng() % 5;
        seq += 1 + rng() % 2;
        const std::uint64_t lo = 4 * (rng() % 2), hi = lo + 4 + 4 * (rng() % 2);
        const AccessMode mode = rng() % 3 == 0 ? AccessMode::Read : AccessMode::Write;
        // Completion: at the same tick (a repeat in one epoch) or later.
        const ClockValue done = clock[r] + (rng() % 3 == 0 ? 0 : 1 + rng() % 3);
        const std::uint64_t done_seq = seq + (rng() % 3 == 0 ? 0 : 1 + rng() % 2);
        by_rank[r].push_back(rec(r, lo, hi, mode, clock, done, seq, done_seq,
                                 100 * (r + 1) + rng() % 2));
        clock[r] = std::max(clock[r], done);
        seq = std::max(seq, done_seq);
      }
    }
    // Arrival: each rank's in its program order, interleaved at random;
    // every fourth round entirely shuffled (chains then break up).
    std::vector<AccessRecord> all;
    std::vector<std::size_t> next(ranks, 0);
    while (all.size() < 12u * ranks) {
      const std::uint32_t r = rng() % ranks;
      if (next[r] < by_rank[r].size()) all.push_back(by_rank[r][next[r]++]);
    }
    if (round % 4 == 0) std::shuffle(all.begin(), all.end(), rng);
    std::map<std::pair<std::uint64_t, std::uint64_t>, int> counts;
    ShadowMemory shadow([&](const AccessRecord& a, const AccessRecord& b) {
      ++counts[{std::min(a.pc, b.pc), std::max(a.pc, b.pc)}];
    });
    for (const AccessRecord& r : all) shadow.add(r);
    INFO("round " << round);
    CHECK(counts == counted_pairwise(all));
  }
}
