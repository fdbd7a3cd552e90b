// The race analysis (docs/analyses.md): data races between the accesses of
// one-sided communication, from the translators' notes (vcx/analysis.h).
//
// The tool of the rank that makes an access keeps it until the translator
// says it is complete, then hands it, with the clock at its start and the
// tick of its completion, to the tool of the rank whose memory it touched.
// That tool compares it with the other accesses to the same bytes
// (ShadowMemory). At the end each tool writes what it found, with its
// application's memory map so that vcx-run can name source lines, to
// <race.dir>/rank-<R>.json.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "access_record.h"
#include "race_report.h"
#include "shadow_memory.h"
#include "vcx/atomic_file.h"
#include "vcx/analysis_report.h"
#include "vcx/exchange.h"
#include "vcx/plugin.h"
#include "vcx/session_layout.h"
#include "vcx/symbolizer.h"

namespace vcx::race {
namespace {

using nlohmann::json;

// Distinct races kept per tool; more are counted, not described.
constexpr std::size_t kMaxFindings = 1000;
// How often (in calls with notes) a tool tells the others where its rank's
// accesses still to come start, and how often (in accesses compared) a tool
// drops what none of them can race with.
constexpr std::uint64_t kFrontierEvery = 16;
constexpr std::uint64_t kCollectEvery = 1024;
// Records held back for other tools, at most (sent earlier when the tool
// has nothing else to do).
constexpr std::size_t kOutboxBytes = 64 * 1024;

const char* region_kind_name(RegionKind k) {
  switch (k) {
    case RegionKind::MpiWindow: return "MPI window";
    case RegionKind::MpiDynamicWindow: return "MPI dynamic window";
    case RegionKind::SymmetricMemory: return "symmetric memory";
    case RegionKind::LocalMemory: return "local memory";
  }
  return "memory";
}

class RaceModule final : public Plugin, public ClockedCallObserver {
 public:
  RaceModule(ToolHost& host, std::string dir)
      : host_(host),
        self_(host.rank()),
        world_(host.world_size()),
        dir_(std::move(dir)),
        shadow_([this](const AccessRecord& a, const AccessRecord& b) { on_race(a, b); }) {
    link_ = host_.analysis_link("race");
    if (link_)
      link_->set_handler([this](Rank src, std::span<const std::uint8_t> b) { on_message(src, b); });
    known_.resize(world_);
  }

  ClockedCallObserver* observer() override { return this; }
  bool wants_notes() const override { return true; }
  // Every clocked call of this rank, before its notes (if it has any):
  // what waited for calls before it can go.
  void on_clocked_call(const ClockedCall& c) override {
    if (self_.value >= c.clock.size()) return;
    analysed_tick_ = c.clock[self_.value];
    if (analysed_tick_ > 0) release_ahead(analysed_tick_ - 1);
  }

  void on_notes(const NoteBatch& b) override {
    ++seq_;
    clock_.assign(b.clock.begin(), b.clock.end());
    b.for_each([&](NoteKind kind, std::span<const std::uint8_t> p) {
      switch (kind) {
        case NoteKind::Region: {
          RegionNote r;
          if (read_note(p, &r)) on_region(r);
          break;
        }
        case NoteKind::RegionEnd: {
          // Its addresses may come back in other memory; accesses naming
          // the space itself may still arrive and are still compared.
          RegionEndNote r;
          if (read_note(p, &r))
            std::erase_if(ranges_, [&](const Range& x) { return x.space == r.space; });
          break;
        }
        case NoteKind::Access: {
          AccessNote a;
          if (!read_note(p, &a)) break;
          remember_code(a.pc);
          if (a.mode == AccessMode::Write && !(a.flags & kAccessLocal)) later_write(a, b);
          Open& o = open_[a.id];
          o.note = a;
          o.model = b.model;
          o.start.assign(b.clock.begin(), b.clock.end());
          o.start_seq = seq_;
          if (a.flags & kAccessCompleteNow) complete(a.id, b.completion_tick(), b.call, a.pc);
          break;
        }
        case NoteKind::Ordered:
          for_each_id(p, [&](const CompletionNote&, std::uint64_t id) {
            auto it = open_.find(id);
            if (it != open_.end() && it->second.ordered_seq == 0) {
              it->second.ordered_seq = seq_;
              it->second.fence_tick = b.clock[self_.value];
              ordered_open_.push_back(id);
            }
          });
          break;
        case NoteKind::FlagObserved: {
          FlagObservedNote f;
          if (read_note(p, &f)) observe(f, b);
          break;
        }
        case NoteKind::ReceivePosted:
        case NoteKind::ReceiveBound:
        case NoteKind::ReceiveOrdered:
        case NoteKind::ReceiveCompleted:
        case NoteKind::ReceiveDropped:
        case NoteKind::SyncSendCompleted:
          break;  // the matching, not memory
        case NoteKind::LocalAccesses: {
          LocalAccessesNote n;
          if (!read_note(p, &n)) break;
          if (n.flags & kLocalAccessesStart) local_accesses_ = true;
          if (n.flags & kLocalAccessesOverflow) ++local_overflows_;
          break;
        }
        case NoteKind::Completion:
          for_each_id(p, [&](const CompletionNote& c, std::uint64_t id) {
            complete(id, b.completion_tick(), b.call, c.pc);
          });
          break;
      }
    });
    analysed_tick_ = std::max(analysed_tick_, own_tick());
    release_ahead(analysed_tick_);
    // Records wait for the tool to be idle, or for enough to be worth a message.
    if (outbox_bytes_ >= kOutboxBytes) send_outboxes();
    if (seq_ - frontier_sent_seq_ >= kFrontierEvery) send_frontier();
  }

  void on_idle() override {
    if (!pending_.empty()) send_outboxes();
  }

  void flush() override {
    release_ahead(std::numeric_limits<ClockValue>::max());
    write_findings();
  }

 private:
  struct Open {
    AccessNote note{};
    Model model{};
    std::vector<ClockValue> start;
    std::uint64_t start_seq = 0;
    std::uint64_t ordered_seq = 0;  // an Ordered note named it (0: none)
    ClockValue fence_tick = 0;      // this rank's tick at that note
    ClockValue ordered_tick = 0;    // AccessRecord::ordered_tick
  };
  // What this rank's waits saw delivered, oldest first (their clocks only
  // grow); the oldest go first beyond kMaxObservations, which only makes
  // an access's delivery known later.
  struct Observation {
    std::uint64_t space, lo, hi;
    std::vector<ClockValue> clock;  // the wait's
    ClockValue tick;                // its tick of this rank's clock
  };
  // A space of this rank's memory.
  struct Region {
    std::uint64_t base = 0;
    std::uint64_t bytes = 0;
    std::uint32_t unit = 1;
    RegionKind kind{};
    std::uint16_t ordinal = 0;
    std::uint64_t pc = 0;
  };
  struct Range {
    std::uint64_t lo, hi, space;
  };
  struct Finding {
    AccessRecord first, second;
    std::uint64_t count = 0;
  };

  void on_region(const RegionNote& r) {
    auto [it, fresh] = regions_.try_emplace(r.space);
    if (fresh) {
      it->second = Region{r.base, r.bytes, r.unit == 0 ? 1 : r.unit, r.kind, r.ordinal, r.pc};
      remember_code(r.pc);
    }
    if (r.bytes > 0) ranges_.push_back(Range{r.base, r.base + r.bytes, r.space});
    // Accesses that arrived before this rank's tool learnt of its memory.
    auto w = waiting_.find(r.space);
    if (w == waiting_.end()) return;
    std::vector<Waiting> records = std::move(w->second);
    waiting_.erase(w);
    for (auto& x : records) check(std::move(x.record), x.offset, x.byte_offset, x.bytes, x.flags);
  }

  // A write `w` of this rank starts: the accesses a fence of its context
  // ordered before the rank's later writes to the same memory are
  // delivered before it. The first such write that is a clocked call of its
  // own after the fence (a write that may be a flag) is the one a wait of
  // the owner can see.
  void later_write(const AccessNote& w, const NoteBatch& b) {
    if (ordered_open_.empty()) return;
    const ClockValue tick = b.clock[self_.value];
    std::erase_if(ordered_open_, [&](std::uint64_t id) {
      auto it = open_.find(id);
      if (it == open_.end()) return true;  // complete already
      Open& o = it->second;
      if (o.note.owner != w.owner || o.note.context != w.context || tick <= o.fence_tick)
        return false;
      o.ordered_tick = tick;
      return true;
    });
  }

  // The access `id` is complete at tick `done` of this rank's clock.
  void complete(std::uint64_t id, ClockValue done, std::uint16_t done_call, std::uint64_t done_pc) {
    auto it = open_.find(id);
    if (it == open_.end()) return;
    Open o = std::move(it->second);
    open_.erase(it);
    if (o.ordered_seq != 0 && o.ordered_tick == 0) std::erase(ordered_open_, id);
    const AccessNote& a = o.note;
    AccessRecord r;
    r.rank = self_;
    r.space = a.space;
    r.mode = a.mode;
    r.atomic_op = a.atomic_op;
    r.atomic_type = a.atomic_type;
    r.atomic_unit = a.atomic_unit;
    r.context = a.context;
    r.atomic_read = (a.flags & kAccessAtomicRead) != 0;
    r.local = (a.flags & kAccessLocal) != 0;
    r.model = o.model;
    r.call = a.call;
    r.done_call = done_call;
    r.done_pc = done_pc;
    r.pc = a.pc;
    r.done = done;
    r.start = std::move(o.start);
    r.start_seq = o.start_seq;
    r.done_seq = seq_;
    r.ordered_seq = o.ordered_seq;
    r.ordered_tick = o.ordered_tick;
    if (a.owner == self_.value) {
      if (a.space == 0) {
        // An address here: in memory this rank exposes, or else in its
        // local memory (the buffers of its operations, its loads and stores
        // of them).
        const Range* range = find_range(a.offset);
        r.space = range ? range->space : local_space();
        r.lo = a.offset - (range ? regions_.at(range->space).base : 0);
        r.hi = r.lo + a.bytes;
        add(std::move(r));
        return;
      }
      check(std::move(r), a.offset, a.byte_offset, a.bytes, a.flags);
      return;
    }
    if (!link_ || a.owner >= world_) return;
    RecordWire h{};
    h.kind = WireKind::Record;
    h.space = a.space;
    h.offset = a.offset;
    h.byte_offset = a.byte_offset;
    h.bytes = a.bytes;
    h.done_pc = done_pc;
    h.pc = a.pc;
    h.done = done;
    h.start_seq = r.start_seq;
    h.done_seq = r.done_seq;
    h.ordered_seq = r.ordered_seq;
    h.ordered_tick = r.ordered_tick;
    h.context = a.context;
    h.atomic_op = a.atomic_op;
    h.atomic_type = a.atomic_type;
    h.atomic_unit = a.atomic_unit;
    h.clock_entries = world_;
    h.model = static_cast<std::uint16_t>(o.model);
    h.call = a.call;
    h.done_call = done_call;
    h.mode = static_cast<std::uint8_t>(a.mode);
    h.atomic_read = r.atomic_read ? 1 : 0;
    h.flags = a.flags;
    // Appended to the owner's message, which leaves at the end of the call:
    // the accesses one synchronisation completes travel together.
    std::vector<std::uint8_t>& box = outbox_[a.owner];
    const std::size_t at = box.size();
    box.resize(at + sizeof h + r.start.size() * sizeof(ClockValue));
    std::memcpy(box.data() + at, &h, sizeof h);
    std::memcpy(box.data() + at + sizeof h, r.start.data(), r.start.size() * sizeof(ClockValue));
    if (at == 0) pending_.push_back(a.owner);
    outbox_bytes_ += box.size() - at;
    ++sent_;
  }

  void send_outboxes() {
    for (const std::uint32_t owner : pending_) {
      link_->send(Rank{owner}, outbox_[owner]);
      outbox_[owner].clear();
    }
    pending_.clear();
    outbox_bytes_ = 0;
  }

  void on_message(Rank src, std::span<const std::uint8_t> bytes) {
    WireKind kind{};
    if (bytes.size() >= sizeof kind) std::memcpy(&kind, bytes.data(), sizeof kind);
    if (kind == WireKind::Frontier)
      on_frontier(src, bytes);
    else
      on_records(src, bytes);
  }

  // Where the accesses still to come of this rank start at the earliest:
  // at its oldest open access, or now.
  void own_frontier(std::vector<ClockValue>& clock, std::uint64_t& seq) const {
    if (open_.empty()) {
      clock = clock_;
      seq = seq_ + 1;
    } else {
      clock = open_.begin()->second.start;
      seq = open_.begin()->second.start_seq;
    }
    clock.resize(world_, 0);
  }

  // Every other tool learns it now and then; messages from one tool arrive
  // in order, so it holds for all of this rank's records that come later.
  void send_frontier() {
    frontier_sent_seq_ = seq_;
    if (!link_ || world_ < 2) return;
    // After the records it covers: each tool's messages arrive in order.
    if (!pending_.empty()) send_outboxes();
    FrontierWire h{WireKind::Frontier, world_, 0};
    own_frontier(scratch_clock_, h.seq);
    encode(h, scratch_clock_, wire_);
    for (std::uint32_t r = 0; r < world_; ++r)
      if (r != self_.value) link_->send(Rank{r}, wire_);
  }

  void on_frontier(Rank src, std::span<const std::uint8_t> bytes) {
    FrontierWire h;
    if (bytes.size() != sizeof h + world_ * sizeof(ClockValue) || src.value >= world_) {
      ++malformed_;
      return;
    }
    std::memcpy(&h, bytes.data(), sizeof h);
    Known& k = known_[src.value];
    k.clock.resize(world_);
    std::memcpy(k.clock.data(), bytes.data() + sizeof h, world_ * sizeof(ClockValue));
    k.seq = h.seq;
    k.valid = true;
    collect();
  }

  // Drops the kept accesses that every rank's accesses still to come are
  // ordered after: nothing can race with them any more.
  void collect() {
    own_frontier(own_.clock, own_.seq);
    own_.valid = true;
    bool all_known = true;
    for (std::uint32_t q = 0; q < world_; ++q)
      if (q != self_.value && !known_[q].valid) all_known = false;  // it may still do anything
    const std::uint64_t local = local_space();
    shadow_.collect([&](const AccessRecord& x) {
      // Memory no other rank reaches (buffers of this rank's operations):
      // only this rank's later accesses could race with it, and they come
      // after it in program order once it is complete.
      if (x.space == local) return own_.seq > x.done_seq;
      if (!all_known) return false;
      for (std::uint32_t q = 0; q < world_; ++q) {
        const Known& k = q == self_.value ? own_ : known_[q];
        const bool after = q == x.rank.value ? k.seq > x.done_seq : k.clock[x.rank.value] >= x.done;
        if (!after) return false;
      }
      return true;
    });
  }

  // An access of another rank to this rank's memory.
  // Accesses of another rank to this rank's memory, one after another.
  void on_records(Rank src, std::span<const std::uint8_t> bytes) {
    const std::size_t each = sizeof(RecordWire) + world_ * sizeof(ClockValue);
    if (bytes.empty() || bytes.size() % each != 0) {
      ++malformed_;
      return;
    }
    for (std::size_t at = 0; at < bytes.size(); at += each) on_record(src, bytes.subspan(at, each));
  }

  void on_record(Rank src, std::span<const std::uint8_t> bytes) {
    RecordWire h;
    AccessRecord r;
    if (!decode(bytes, world_, h, r.start)) {
      ++malformed_;
      return;
    }
    r.rank = src;
    r.space = h.space;
    r.mode = static_cast<AccessMode>(h.mode);
    r.atomic_op = h.atomic_op;
    r.atomic_type = h.atomic_type;
    r.atomic_unit = h.atomic_unit;
    r.context = h.context;
    r.atomic_read = h.atomic_read != 0;
    r.local = (h.flags & kAccessLocal) != 0;
    r.model = static_cast<Model>(h.model);
    r.call = h.call;
    r.done_call = h.done_call;
    r.done_pc = h.done_pc;
    r.pc = h.pc;
    r.done = h.done;
    r.start_seq = h.start_seq;
    r.done_seq = h.done_seq;
    r.ordered_seq = h.ordered_seq;
    r.ordered_tick = h.ordered_tick;
    // An access that started after this rank did something its tool has
    // not analysed yet (a wait that saw writes delivered) waits for it: it
    // is compared with what the rank's own calls tell, whatever the timing.
    if (r.start[self_.value] > analysed_tick_) {
      const ClockValue tick = r.start[self_.value];
      ahead_.emplace(tick, Waiting{std::move(r), h.offset, h.byte_offset, h.bytes, h.flags});
      return;
    }
    check(std::move(r), h.offset, h.byte_offset, h.bytes, h.flags);
  }

  // f(note, id) for each access id a CompletionNote-shaped note names.
  template <class F>
  static void for_each_id(std::span<const std::uint8_t> p, F&& f) {
    CompletionNote c;
    if (!read_note(p, &c)) return;
    for (std::uint32_t i = 0; i < c.count; ++i) {
      std::uint64_t id = 0;
      if (!read_note(p, &id, sizeof c + i * sizeof id)) return;
      f(c, id);
    }
  }

  ClockValue own_tick() const { return clock_.empty() ? 0 : clock_[self_.value]; }

  // Compares the accesses that waited for this rank's calls up to `tick`.
  void release_ahead(ClockValue tick) {
    if (ahead_.empty() || ahead_.begin()->first > tick) return;
    std::vector<Waiting> ready;
    const auto end = ahead_.upper_bound(tick);
    for (auto it = ahead_.begin(); it != end; ++it) ready.push_back(std::move(it->second));
    ahead_.erase(ahead_.begin(), end);
    for (Waiting& w : ready)
      check(std::move(w.record), w.offset, w.byte_offset, w.bytes, w.flags);
  }

  // A wait of this rank saw a write to its memory delivered: so were the
  // writes to those bytes its clock contains, and every write their
  // writers ordered before them (OpenSHMEM: a fence, then the flag write).
  void observe(const FlagObservedNote& f, const NoteBatch& b) {
    if (observations_.size() >= kMaxObservations) observations_.erase(observations_.begin());
    Observation o{f.space, f.offset, f.offset + f.bytes,
                  std::vector<ClockValue>(b.clock.begin(), b.clock.end()), b.clock[self_.value]};
    shadow_.update([&](AccessRecord& r) { apply(o, r); });
    observations_.push_back(std::move(o));
  }

  void apply(const Observation& o, AccessRecord& r) const {
    if (r.rank == self_ || r.local || !r.writes() || r.rank.value >= o.clock.size()) return;
    const ClockValue writer = o.clock[r.rank.value];
    const bool the_flag = r.space == o.space && r.lo < o.hi && o.lo < r.hi &&
                          r.start[r.rank.value] <= writer;
    const bool ordered_before_it = r.ordered_tick != 0 && r.ordered_tick <= writer;
    if (!the_flag && !ordered_before_it) return;
    if (!r.seen || o.tick < r.seen_tick) {
      r.seen = true;
      r.seen_by = self_;
      r.seen_tick = o.tick;
    }
  }

  // An access naming a space by offset in its units, and bytes beyond.
  void check(AccessRecord r, std::uint64_t offset, std::int64_t byte_offset, std::uint64_t bytes,
             std::uint32_t flags = 0) {
    auto it = regions_.find(r.space);
    if (it == regions_.end() && (flags & kAccessImplicitRegion))
      it = regions_.emplace(r.space, Region{0, 0, 1, RegionKind::SymmetricMemory, 0, 0}).first;
    if (it == regions_.end()) {
      // Kept until the region is known.
      waiting_[r.space].push_back(Waiting{std::move(r), offset, byte_offset, bytes, flags});
      return;
    }
    r.lo = offset * it->second.unit + static_cast<std::uint64_t>(byte_offset);
    r.hi = r.lo + bytes;
    add(std::move(r));
  }

  void add(AccessRecord r) {
    for (const Observation& o : observations_) apply(o, r);
    ++checked_;
    shadow_.add(std::move(r));
    if (checked_ % kCollectEvery == 0) collect();
  }

  // The space of this process's memory that no region covers, by address.
  std::uint64_t local_space() {
    const std::uint64_t id = hash_combine(hash_combine(0x4c4f43414cULL, self_.value), 0x4d454dULL);
    if (regions_.find(id) == regions_.end())
      regions_[id] = Region{0, 0, 1, RegionKind::LocalMemory, 0, 0};
    return id;
  }

  const Range* find_range(std::uint64_t address) const {
    for (const Range& r : ranges_)
      if (address >= r.lo && address < r.hi) return &r;
    return nullptr;
  }

  void on_race(const AccessRecord& a, const AccessRecord& b) {
    // One finding per pair of code locations, in either order.
    const AccessRecord& x = a.pc <= b.pc ? a : b;
    const AccessRecord& y = a.pc <= b.pc ? b : a;
    const auto key = std::make_tuple(x.pc, x.call, static_cast<int>(x.mode), y.pc, y.call,
                                     static_cast<int>(y.mode));
    auto it = findings_.find(key);
    if (it != findings_.end()) {
      ++it->second.count;
      return;
    }
    if (findings_.size() >= kMaxFindings) {
      ++findings_dropped_;
      return;
    }
    findings_.emplace(key, Finding{x, y, 1});
  }

  // The application's memory map, read again whenever code shows up that
  // the last copy does not cover (a library loaded later).
  void remember_code(std::uint64_t pc) {
    if (pc == 0) return;
    for (const auto& [lo, hi] : code_)
      if (pc >= lo && pc < hi) return;
    std::string maps = process_maps(host_.app_pid());
    if (maps.empty()) return;
    maps_ = std::move(maps);
    code_.clear();
    std::istringstream lines(maps_);
    std::string line;
    while (std::getline(lines, line)) {
      unsigned long long lo = 0, hi = 0;
      char perms[8] = {};
      if (std::sscanf(line.c_str(), "%llx-%llx %7s", &lo, &hi, perms) == 3 && perms[2] == 'x')
        code_.emplace_back(lo, hi);
    }
  }

  std::string access_name(const AccessRecord& r) const {
    if (r.atomic_op != 0) return r.writes() ? "atomic write" : "atomic read";
    return r.writes() ? "write" : "read";
  }

  json access_json(const AccessRecord& r) const {
    const auto model = static_cast<std::uint8_t>(r.model);
    return json{{"rank", r.rank.value},
                {"call", host_.call_name(model, r.call)},
                {"access", access_name(r)},
                {"pc", r.pc},
                {"completed_at", host_.call_name(model, r.done_call)},
                {"completed_pc", r.done_pc},
                {"completed_tick", r.done},
                {"local", r.local},
                {"clock", r.start}};
  }

  void write_findings() {
    json out;
    out["version"] = 1;
    out["rank"] = self_.value;
    out["ranks"] = world_;
    out["maps"] = maps_;
    std::size_t waiting = 0;
    for (const auto& [space, v] : waiting_) waiting += v.size();
    out["stats"] = json{{"accesses_checked", checked_},
                        {"accesses_sent", sent_},
                        {"comparisons", shadow_.compared()},
                        {"stored", shadow_.stored()},
                        {"peak_stored", shadow_.peak_stored()},
                        {"incomplete", open_.size()},
                        {"unknown_memory", waiting},
                        {"malformed", malformed_},
                        {"findings_dropped", findings_dropped_},
                        {"local_accesses", local_accesses_},
                        {"local_overflows", local_overflows_}};
    json list = json::array();
    for (const auto& [key, f] : findings_) {
      const Region& g = regions_.at(f.first.space);
      const std::uint64_t lo = std::max(f.first.lo, f.second.lo);
      const std::uint64_t hi = std::min(f.first.hi, f.second.hi);
      json memory{{"kind", region_kind_name(g.kind)},
                  {"ordinal", g.ordinal},
                  {"owner", self_.value},
                  {"created_pc", g.pc},
                  {"offset", lo},
                  {"bytes", hi > lo ? hi - lo : 0}};
      list.push_back(json{{"analysis", "race"},
                          {"kind", "data-race"},
                          {"memory", memory},
                          {"count", f.count},
                          {"accesses",
                           json::array({access_json(f.first), access_json(f.second)})}});
    }
    out["findings"] = std::move(list);
    std::string error;
    if (!write_file_atomically(session::analysis_result(dir_, self_.value), out.dump() + "\n",
                               &error))
      std::fprintf(stderr, "vcx: race: %s\n", error.c_str());
  }

  ToolHost& host_;
  Rank self_;
  std::uint32_t world_;
  std::string dir_;
  AnalysisLink* link_ = nullptr;
  std::map<std::uint64_t, Open> open_;  // by id: the oldest first
  std::vector<std::uint64_t> ordered_open_;  // open, ordered by a fence, no later write yet
  std::vector<ClockValue> clock_;      // this rank's clock after its last call with notes
  bool local_accesses_ = false;        // the rank reports its loads and stores
  std::uint64_t local_overflows_ = 0;  // times some of them went unreported
  struct Known {
    std::vector<ClockValue> clock;
    std::uint64_t seq = 0;
    bool valid = false;
  };
  std::vector<Known> known_;  // per rank, its last frontier
  Known own_;
  std::vector<ClockValue> scratch_clock_;
  // Records for other tools, sent at the end of the call that completed them.
  std::unordered_map<std::uint32_t, std::vector<std::uint8_t>> outbox_;
  std::vector<std::uint32_t> pending_;  // owners with a non-empty outbox
  std::size_t outbox_bytes_ = 0;
  std::uint64_t frontier_sent_seq_ = 0;
  std::unordered_map<std::uint64_t, Region> regions_;
  std::vector<Range> ranges_;
  struct Waiting {
    AccessRecord record;
    std::uint64_t offset;
    std::int64_t byte_offset;
    std::uint64_t bytes;
    std::uint32_t flags = 0;
  };
  std::unordered_map<std::uint64_t, std::vector<Waiting>> waiting_;
  // Other ranks' accesses that started after this rank's analysed calls, by
  // that start (this rank's entry of their clock): a tool that lags behind
  // its peers holds many, and releases the oldest at each call.
  std::multimap<ClockValue, Waiting> ahead_;
  ClockValue analysed_tick_ = 0;  // this rank's clock entry as far as analysed
  static constexpr std::size_t kMaxObservations = 1024;
  std::deque<Observation> observations_;
  ShadowMemory shadow_;
  std::map<std::tuple<std::uint64_t, std::uint16_t, int, std::uint64_t, std::uint16_t, int>,
           Finding>
      findings_;
  std::vector<std::uint8_t> wire_;
  std::string maps_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> code_;
  std::uint64_t checked_ = 0, sent_ = 0, malformed_ = 0, findings_dropped_ = 0;
  std::uint64_t seq_ = 0;  // note batches of this rank so far: its program order
};

const OptionSpec kOptions[] = {
    {"race.dir", "", "directory for each tool's findings (vcx-run --analysis race sets it)"},
    {nullptr, nullptr, nullptr},
};

Plugin* create(ToolHost& host, std::string* error) {
  const std::string dir = option_text(host.options(), kOptions, "race.dir");
  if (dir.empty()) {
    if (error)
      *error = "race: no findings directory (race.dir); run it with vcx-run --analysis race";
    return nullptr;
  }
  return new RaceModule(host, dir);
}

// After the run, in vcx-run: the report from every tool's file.
void build_report(const ReportRequest& request, AnalysisReport* out) {
  try {
    RaceReport r = build_race_report(request.dir, request.ranks);
    out->text = std::move(r.text);
    out->findings = r.findings.dump();
    out->counted = r.races;
    out->problems = std::move(r.problems);
  } catch (const std::exception& e) {
    out->problems.push_back(std::string("the race report failed: ") + e.what());
  }
}

const AnalysisReporting kReporting = {&build_report, nullptr};

const PluginDescriptor kDescriptor = {
    kPluginAbiVersion,
    PluginKind::Module,
    "race",
    "data races between one-sided accesses (MPI RMA, OpenSHMEM), reported with both source lines",
    kOptions,
    &create,
    0,  // needs nothing of the run (no stalls)
    &kReporting,
};

}  // namespace
}  // namespace vcx::race

VCX_PLUGIN(vcx::race::kDescriptor)
