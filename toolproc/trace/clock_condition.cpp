#include "clock_condition.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

namespace vcx::trace {
namespace {

constexpr std::int64_t kNoLimit = std::numeric_limits<std::int64_t>::max();

}  // namespace

Timelines::Timelines(std::uint32_t world_size) : ranks_(world_size), alignment_(world_size) {
  for (RankLine& l : ranks_) {
    l.last_clock.assign(world_size, 0);
    l.first.push_back(0);
  }
}

void Timelines::add_call(std::uint32_t rank, std::uint64_t enter_ns, std::uint64_t leave_ns,
                         std::span<const ClockValue> clock) {
  RankLine& l = ranks_[rank];
  // A call without times (cut off by a crash) stands right after the one
  // before it.
  if (enter_ns == 0 && !l.t.empty()) enter_ns = static_cast<std::uint64_t>(l.t.back());
  const auto enter = static_cast<std::int64_t>(enter_ns);
  const auto leave = std::max(enter, static_cast<std::int64_t>(leave_ns ? leave_ns : enter_ns));
  l.t.push_back(enter);
  l.t.push_back(leave);
  l.own.push_back(rank < clock.size() ? clock[rank] : 0);
  // Only what the clock learned anew since the rank's previous call: what it
  // knew before, an earlier event of this rank already came after.
  for (std::uint32_t k = 0; k < ranks_.size() && k < clock.size(); ++k) {
    if (k != rank && clock[k] > l.last_clock[k]) l.learned.push_back({k, clock[k]});
    l.last_clock[k] = clock[k];
  }
  l.first.push_back(static_cast<std::uint32_t>(l.learned.size()));
  linked_ = false;
}

// A clock entry of rank k with value v names the call of k that ticked it
// to v: every clocked call ticks its own entry once, so that is the first
// call of k whose own entry is at least v.
void Timelines::link() const {
  unresolved_ = 0;
  for (const RankLine& l : ranks_) {
    l.sources.clear();
    l.source_first.assign(1, 0);
    for (std::size_t i = 0; i + 1 < l.first.size(); ++i) {
      for (std::uint32_t s = l.first[i]; s < l.first[i + 1]; ++s) {
        const auto& own = ranks_[l.learned[s].rank].own;
        const auto it = std::lower_bound(own.begin(), own.end(), l.learned[s].value);
        if (it == own.end()) {
          ++unresolved_;  // that rank's trace ends before the call
          continue;
        }
        l.sources.push_back({l.learned[s].rank, static_cast<std::uint32_t>(it - own.begin())});
      }
      l.source_first.push_back(static_cast<std::uint32_t>(l.sources.size()));
    }
  }
  linked_ = true;
}

std::span<const Timelines::Source> Timelines::sources(std::uint32_t rank, std::size_t call) const {
  if (!linked_) link();
  const RankLine& l = ranks_[rank];
  return {l.sources.data() + l.source_first[call], l.sources.data() + l.source_first[call + 1]};
}

std::vector<std::uint64_t> Timelines::violations_per_rank(std::int64_t min_latency_ns) const {
  std::vector<std::uint64_t> n(ranks_.size(), 0);
  for (std::uint32_t r = 0; r < ranks_.size(); ++r)
    for (std::size_t i = 0; i < calls(r); ++i)
      for (const Source& s : sources(r, i))
        n[r] += leave(r, i) < enter(s.rank, s.call) + min_latency_ns;
  return n;
}

std::uint64_t Timelines::count_violations(std::int64_t min_latency_ns) const {
  std::uint64_t n = 0;
  for (std::uint64_t v : violations_per_rank(min_latency_ns)) n += v;
  return n;
}

void Timelines::align(std::span<const std::vector<ClockSync>> syncs) {
  const auto measured = violations_per_rank(CorrectionOptions{}.min_latency_ns);
  for (std::uint32_t r = 0; r < ranks_.size(); ++r) {
    alignment_[r].violations_measured = measured[r];
    if (r < syncs.size()) align_rank(r, syncs[r]);
  }
  aligned_ = true;
}

void Timelines::align_rank(std::uint32_t rank, std::span<const ClockSync> syncs) {
  const ClockSync* start = nullptr;
  const ClockSync* end = nullptr;
  for (const ClockSync& s : syncs) (s.phase == 0 ? start : end) = &s;
  if (!start) start = end;
  if (!start) return;
  if (!end || end->local_ns <= start->local_ns) end = start;
  RankCorrection& a = alignment_[rank];
  a.aligned = true;
  // A round trip of 0: the rank read rank 0's own clock and measured
  // nothing; its times are on rank 0's clock already.
  if (start->rtt_ns == 0 && end->rtt_ns == 0) {
    a.shared_clock = true;
    return;
  }
  const double span = static_cast<double>(end->local_ns) - static_cast<double>(start->local_ns);
  double slope = span > 0 ? static_cast<double>(end->offset_ns - start->offset_ns) / span : 0.0;
  const ClockSync* base = start;
  if (std::abs(slope) * 1e6 > kMaxDriftPpm) {
    // No real clock drifts that much: one of the two measurements is off
    // (a round trip's halves far from equal). Keep the tighter one, constant.
    a.drift_refused_ppm = slope * 1e6;
    slope = 0;
    if (end->rtt_ns < start->rtt_ns) base = end;
  }
  a.offset_start_ns = base->offset_ns + static_cast<std::int64_t>(std::llround(
      slope * (static_cast<double>(start->local_ns) - static_cast<double>(base->local_ns))));
  a.offset_end_ns = base->offset_ns + static_cast<std::int64_t>(std::llround(
      slope * (static_cast<double>(end->local_ns) - static_cast<double>(base->local_ns))));
  a.drift_ppm = slope * 1e6;
  for (std::int64_t& t : ranks_[rank].t) {
    const double since = static_cast<double>(t) - static_cast<double>(base->local_ns);
    t += base->offset_ns + static_cast<std::int64_t>(std::llround(slope * since));
  }
}

namespace {

// One pass of the correction over every rank's events, in an order where
// each return comes after the enters it must follow.
class Corrector {
 public:
  struct Line {
    std::vector<std::int64_t>* t;  // corrected in place
    std::vector<std::int64_t> measured;
    std::vector<std::int64_t> limit;  // per call: latest its enter may move to
  };

  Corrector(const CorrectionOptions& o, std::vector<Line>& lines) : o_(o), lines_(lines) {}

  // Event x of rank r (2i: enter of call i, 2i + 1: its return).
  template <class Sources>
  void process(std::uint32_t r, std::size_t x, Sources&& sources) {
    Line& l = lines_[r];
    std::vector<std::int64_t>& t = *l.t;
    const std::int64_t measured = l.measured[x];
    std::int64_t bare = measured;  // forward amortisation without remote terms
    if (x > 0) {
      const std::int64_t prev = t[x - 1];
      const auto kept = static_cast<std::int64_t>(
          std::floor(o_.gamma * static_cast<double>(measured - l.measured[x - 1])));
      bare = std::max({measured, prev + o_.min_gap_ns, prev + kept});
    }
    std::int64_t value = bare;
    if (x % 2 == 1) {
      for (const Timelines::Source& s : sources)
        value = std::max(value, (*lines_[s.rank].t)[2 * s.call] + o_.min_latency_ns);
      for (const Timelines::Source& s : sources) {
        std::int64_t& lim = lines_[s.rank].limit[s.call];
        lim = std::min(lim, value - o_.min_latency_ns);
      }
      if (value > bare) amortise_backward(r, x, bare, value - bare);
    }
    t[x] = value;
  }

 private:
  // Spreads a jump of `jump` at event x (whose time without it is `bare`)
  // over the events before it: piecewise linear from no shift at the start
  // of the interval to the whole jump at x, bent down wherever an enter must
  // stay before a return that already follows it (its limit).
  void amortise_backward(std::uint32_t r, std::size_t x, std::int64_t bare, std::int64_t jump) {
    Line& l = lines_[r];
    std::vector<std::int64_t>& t = *l.t;
    double base = static_cast<double>(bare) - static_cast<double>(jump) / o_.max_stretch;
    std::size_t from = x;
    while (from > 0 && static_cast<double>(t[from - 1]) > base &&
           x - from < o_.max_amortised_events)
      --from;
    if (from == x) return;
    if (from > 0) base = std::max(base, static_cast<double>(t[from - 1]));

    // Anchors from x backwards: (time before the shift, shift).
    anchors_.clear();
    double at = static_cast<double>(bare), shift = static_cast<double>(jump);
    anchors_.push_back({at, shift});
    for (std::size_t y = x; y-- > from;) {
      if (y % 2 != 0 || l.limit[y / 2] == kNoLimit) continue;
      const double b = static_cast<double>(t[y]);
      const double line = shift * (b - base) / (at - base);
      const double room = static_cast<double>(l.limit[y / 2] - t[y]);
      if (line > room) {
        at = b;
        shift = std::max(room, 0.0);
        anchors_.push_back({at, shift});
      }
    }
    anchors_.push_back({base, 0.0});
    std::reverse(anchors_.begin(), anchors_.end());
    std::size_t seg = 0;
    for (std::size_t y = from; y < x; ++y) {
      const double b = static_cast<double>(t[y]);
      while (seg + 2 < anchors_.size() && b >= anchors_[seg + 1].first) ++seg;
      const auto& [b0, s0] = anchors_[seg];
      const auto& [b1, s1] = anchors_[seg + 1];
      const double s = b1 > b0 ? s0 + (s1 - s0) * (b - b0) / (b1 - b0) : s1;
      t[y] += static_cast<std::int64_t>(std::floor(std::max(s, 0.0)));
    }
  }

  const CorrectionOptions& o_;
  std::vector<Line>& lines_;
  std::vector<std::pair<double, double>> anchors_;
};

}  // namespace

CorrectionReport Timelines::correct(const CorrectionOptions& options) {
  if (!linked_) link();
  const auto n = static_cast<std::uint32_t>(ranks_.size());
  CorrectionReport report;
  report.ranks = alignment_;
  report.unresolved = unresolved_;
  const auto before = violations_per_rank(options.min_latency_ns);
  for (std::uint32_t r = 0; r < n; ++r) {
    report.ranks[r].violations = before[r];
    if (!aligned_) report.ranks[r].violations_measured = before[r];
    report.violations += before[r];
    report.violations_measured += report.ranks[r].violations_measured;
  }

  std::vector<Corrector::Line> lines(n);
  for (std::uint32_t r = 0; r < n; ++r) {
    lines[r].t = &ranks_[r].t;
    lines[r].measured = ranks_[r].t;
    lines[r].limit.assign(calls(r), kNoLimit);
  }
  Corrector corrector(options, lines);

  // Ranks run as far as they can; a rank waits at a return whose sources'
  // enters are not done yet, and is woken when their rank moves on.
  std::vector<std::size_t> next(n, 0);
  std::vector<std::vector<std::uint32_t>> waiting(n);
  std::vector<char> queued(n, 1);
  std::deque<std::uint32_t> runnable;
  for (std::uint32_t r = 0; r < n; ++r) runnable.push_back(r);
  auto total = [&](std::uint32_t r) { return 2 * calls(r); };
  auto step = [&](std::uint32_t r) {
    const std::size_t x = next[r];
    corrector.process(r, x, x % 2 ? sources(r, x / 2) : std::span<const Source>{});
    ++next[r];
    for (std::uint32_t w : waiting[r])
      if (!queued[w]) {
        queued[w] = 1;
        runnable.push_back(w);
      }
    waiting[r].clear();
  };
  for (;;) {
    while (!runnable.empty()) {
      const std::uint32_t r = runnable.front();
      runnable.pop_front();
      queued[r] = 0;
      while (next[r] < total(r)) {
        const std::size_t x = next[r];
        bool ready = true;
        if (x % 2)
          for (const Source& s : sources(r, x / 2))
            if (next[s.rank] <= 2 * s.call) {
              waiting[s.rank].push_back(r);
              ready = false;
              break;
            }
        if (!ready) break;
        step(r);
      }
    }
    // Everything done, or the clocks contradict each other (a corrupt
    // trace): go on at the earliest waiting event as if it were ready.
    std::uint32_t stuck = n;
    for (std::uint32_t r = 0; r < n; ++r)
      if (next[r] < total(r) &&
          (stuck == n || lines[r].measured[next[r]] < lines[stuck].measured[next[stuck]]))
        stuck = r;
    if (stuck == n) break;
    ++report.unresolved;
    step(stuck);
    if (!queued[stuck]) {
      queued[stuck] = 1;
      runnable.push_back(stuck);
    }
  }

  for (std::uint32_t r = 0; r < n; ++r) {
    RankCorrection& rc = report.ranks[r];
    for (std::size_t x = 0; x < total(r); ++x) {
      const std::int64_t d = ranks_[r].t[x] - lines[r].measured[x];
      rc.moved += d != 0;
      rc.max_shift_ns = std::max(rc.max_shift_ns, d);
    }
  }
  report.violations_after = count_violations(options.min_latency_ns);
  return report;
}

}  // namespace vcx::trace
