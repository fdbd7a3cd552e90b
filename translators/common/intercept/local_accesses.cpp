#include "vcx/intercept/local_accesses.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>

#include "vcx/instrument.h"

namespace vcx::intercept {
namespace {

bool same_run(const LocalAccessRecord& a, const LocalAccessRecord& b) {
  return a.pc == b.pc && a.write == b.write && a.tag == b.tag && a.owner == b.owner &&
         a.kind == b.kind;
}

std::size_t slot_of(std::uintptr_t pc, bool write, std::uint64_t tag) {
  std::uint64_t h = (pc ^ (tag * 0x9e3779b97f4a7c15ULL)) + (write ? 1 : 0);
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ULL;
  return static_cast<std::size_t>(h >> 58);  // 64 slots
}

}  // namespace

bool LocalAccesses::start(Send send, void* ctx, std::size_t max_payload, Handler handler) {
  bind_ = reinterpret_cast<vcx_instrument_bind_fn>(dlsym(RTLD_DEFAULT, "vcx_instrument_bind"));
  watch_ = reinterpret_cast<vcx_instrument_watch_fn>(dlsym(RTLD_DEFAULT, "vcx_instrument_watch"));
  if (!bind_ || !watch_) return false;
  send_ = send;
  ctx_ = ctx;
  batch_capacity_ = std::min<std::size_t>(
      256, (max_payload - sizeof(LocalAccessBatch)) / sizeof(LocalAccessRecord));
  if (batch_capacity_ == 0) return false;
  table_.reserve(kMaxExposures);
  spans_.reserve(kMaxExposures);
  gaps_.reserve(kMaxExposures);
  ranked_.reserve(kMaxExposures);
  if (bind_(VCX_INSTRUMENT_ABI_VERSION, handler) != VCX_INSTRUMENT_ABI_VERSION)
    return false;
  active_ = true;
  return true;
}

void LocalAccesses::stop() {
  if (!active_) return;
  flush();
  watch_(nullptr, nullptr, 0);
  bind_(VCX_INSTRUMENT_ABI_VERSION, nullptr);
  table_.clear();
  active_ = false;
}

void LocalAccesses::set_event(Model model, std::uint16_t call) {
  if (!active_) return;
  const std::size_t m = model_index(model);
  if (has_event_[m]) return;
  event_[m] = call;
  has_event_[m] = true;
  announce_[m] = true;
  batch_[m].assign(sizeof(LocalAccessBatch) + batch_capacity_ * sizeof(LocalAccessRecord), 0);
  pending_ = true;
}

void LocalAccesses::expose(const Exposure& e) {
  if (!active_ || e.hi <= e.lo || !has_event_[model_index(e.model)]) return;
  // The same buffer again (a loop sending from one array) is watched once.
  for (const Exposure& x : table_)
    if (x.lo == e.lo && x.hi == e.hi && x.kind == e.kind && x.tag == e.tag && x.key == e.key &&
        x.owner == e.owner && x.target == e.target && x.base == e.base)
      return;
  if (table_.size() >= kMaxExposures) {
    overflow_ = true;
    pending_ = true;
    return;
  }
  table_.push_back(e);
  rewatch();
}

// The runtime checks at most VCX_INSTRUMENT_MAX_RANGES ranges: the exposed
// spans, merged where they touch, and then across the smallest gaps until
// that many remain. Accesses in a gap reach access() and find nothing.
void LocalAccesses::rewatch() {
  spans_.clear();
  for (const Exposure& e : table_) spans_.emplace_back(e.lo, e.hi);
  std::sort(spans_.begin(), spans_.end());
  std::size_t n = 0;
  for (const auto& s : spans_) {
    if (n > 0 && s.first <= spans_[n - 1].second)
      spans_[n - 1].second = std::max(spans_[n - 1].second, s.second);
    else
      spans_[n++] = s;
  }
  spans_.resize(n);
  constexpr std::size_t kMax = VCX_INSTRUMENT_MAX_RANGES;
  if (n > kMax) {
    // Keep the kMax - 1 widest gaps (ties: the first ones); close the others.
    gaps_.clear();
    for (std::size_t i = 1; i < n; ++i) gaps_.push_back(spans_[i].first - spans_[i - 1].second);
    ranked_ = gaps_;
    std::nth_element(ranked_.begin(), ranked_.begin() + (kMax - 2), ranked_.end(),
                     std::greater<>());
    const std::uintptr_t least = ranked_[kMax - 2];
    std::size_t ties = kMax - 1;
    for (const std::uintptr_t g : gaps_)
      if (g > least) --ties;
    std::size_t out = 1;
    for (std::size_t i = 1; i < n; ++i) {
      const std::uintptr_t g = gaps_[i - 1];
      const bool cut = g > least || (g == least && ties > 0 && ties--);
      if (cut)
        spans_[out++] = spans_[i];
      else
        spans_[out - 1].second = spans_[i].second;
    }
    spans_.resize(out);
  }
  std::uintptr_t lo[kMax], hi[kMax];
  for (std::size_t i = 0; i < spans_.size(); ++i) {
    lo[i] = spans_[i].first;
    hi[i] = spans_[i].second;
  }
  watch_(lo, hi, static_cast<int>(spans_.size()));
}

void LocalAccesses::access(std::uintptr_t addr, std::uintptr_t bytes, bool write,
                           std::uintptr_t pc) {
  if (!active_) return;
  const std::uintptr_t end = addr + bytes;
  // Memory may be exposed twice: a window element that is also the buffer
  // of an operation in flight is both.
  for (const Exposure& e : table_)
    if (addr < e.hi && end > e.lo) add(e, std::max(addr, e.lo), std::min(end, e.hi), write, pc);
}

void LocalAccesses::add(const Exposure& e, std::uintptr_t lo, std::uintptr_t hi, bool write,
                        std::uintptr_t pc) {
  LocalAccessRecord r{};
  r.tag = e.tag;
  r.offset = lo - e.base;
  r.bytes = hi - lo;
  r.pc = pc;
  r.owner = e.owner;
  r.write = write ? 1 : 0;
  r.kind = e.kind;
  const std::size_t slot = slot_of(pc, write, e.tag);
  Run& run = runs_[slot];
  if (run.used && run.model == e.model && same_run(run.record, r)) {
    const std::uint64_t run_end = run.record.offset + run.record.bytes;
    if (r.offset <= run_end && r.offset + r.bytes >= run.record.offset) {
      const std::uint64_t start = std::min(run.record.offset, r.offset);
      run.record.bytes = std::max(run_end, r.offset + r.bytes) - start;
      run.record.offset = start;
      return;
    }
  }
  if (run.used)
    emit(run);
  else
    used_slots_[used_count_++] = static_cast<std::uint8_t>(slot);
  run.record = r;
  run.model = e.model;
  run.used = true;
  pending_ = true;
}

void LocalAccesses::emit(const Run& run) {
  const std::size_t m = model_index(run.model);
  if (batch_count_[m] == batch_capacity_) send_batch(m);
  std::memcpy(batch_[m].data() + sizeof(LocalAccessBatch) +
                  batch_count_[m] * sizeof(LocalAccessRecord),
              &run.record, sizeof run.record);
  ++batch_count_[m];
}

void LocalAccesses::send_batch(std::size_t m) {
  LocalAccessBatch b{};
  b.count = static_cast<std::uint32_t>(batch_count_[m]);
  if (announce_[m]) b.flags |= kLocalAccessesStart;
  if (overflow_) b.flags |= kLocalAccessesOverflow;
  std::memcpy(batch_[m].data(), &b, sizeof b);
  send_(ctx_, static_cast<Model>(m), event_[m], batch_[m].data(),
        sizeof b + batch_count_[m] * sizeof(LocalAccessRecord));
  announce_[m] = false;
  overflow_ = false;
  batch_count_[m] = 0;
}

void LocalAccesses::flush() {
  if (!pending_) return;
  pending_ = false;
  for (std::size_t i = 0; i < used_count_; ++i) {
    Run& run = runs_[used_slots_[i]];
    emit(run);
    run.used = false;
  }
  used_count_ = 0;
  for (std::size_t m = 0; m < kModels; ++m)
    if (has_event_[m] && (batch_count_[m] > 0 || announce_[m] || overflow_)) send_batch(m);
}

}  // namespace vcx::intercept
