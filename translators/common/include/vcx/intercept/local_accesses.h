// The interceptor's side of local loads and stores (docs/analyses.md,
// "Local loads and stores"): which memory of the process is exposed to
// one-sided communication, and the program's accesses to it, reported by
// vcx's runtime for instrumented programs (vcx/instrument.h) and sent to the
// tool as LocalAccessRecords (vcx/local_access.h).
//
// The models' interceptors expose and unexpose memory as their calls make
// and end it (windows, symmetric objects, buffers of operations in flight).
// The runtime is told a few coarse address ranges covering all of it, so
// that every other access costs the program a couple of comparisons.
//
// Accesses between two events of the rank happen at one clock: the
// accesses of one instruction to adjacent or overlapping bytes become one
// record (a loop over an array, a value read again), and every record goes
// out before the next event. Everything here runs under the channel
// client's lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "vcx/channel/event_record.h"
#include "vcx/local_access.h"

namespace vcx::intercept {

struct Exposure {
  std::uintptr_t lo = 0, hi = 0;  // [lo, hi)
  std::uintptr_t base = 0;        // records give offsets from here
  std::uint64_t tag = 0;          // the model's name of the memory (LocalAccessRecord)
  std::uint64_t key = 0;          // the model's name of what ends it (a window)
  std::int32_t owner = -1;        // world rank whose memory it is
  std::int32_t target = -1;       // a buffer: its operation's target
  Model model = Model::Mpi;
  LocalAccessKind kind = LocalAccessKind::Memory;
};

class LocalAccesses {
 public:
  // Sends one batch (LocalAccessBatch and its records) as an event of the
  // model's local-access type.
  using Send = void (*)(void* ctx, Model model, std::uint16_t call, const void* data,
                        std::size_t bytes);

  // What the runtime calls for each access to watched memory.
  using Handler = void (*)(std::uintptr_t addr, std::uintptr_t bytes, int write,
                           std::uintptr_t pc);

  // Binds the runtime to `handler` if the program was built with the vcx
  // compiler wrappers; false if it was not (its loads and stores are not
  // seen). `max_payload` bounds a batch.
  bool start(Send send, void* ctx, std::size_t max_payload, Handler handler);
  // Unbinds; the runtime watches nothing any more.
  void stop();
  bool active() const { return active_; }

  // The event type that carries `model`'s local accesses; the first batch
  // of the model says that its accesses are reported.
  void set_event(Model model, std::uint16_t call);

  void expose(const Exposure& e);
  template <class Pred>
  void unexpose_if(Pred&& ends) {
    if (!active_) return;
    std::size_t kept = 0;
    for (const Exposure& e : table_)
      if (!ends(e)) table_[kept++] = e;
    if (kept == table_.size()) return;
    table_.resize(kept);
    rewatch();
  }

  // An access the runtime reported.
  void access(std::uintptr_t addr, std::uintptr_t bytes, bool write, std::uintptr_t pc);
  // Whether records wait to go out.
  bool pending() const { return pending_; }
  // Before each event: every record goes out.
  void flush();

 private:
  static constexpr std::size_t kModels = 8;
  static constexpr std::size_t kRunSlots = 64;
  // Buffers of operations in flight are many in some programs; past this,
  // accesses to further ones go unreported (and the report says so).
  static constexpr std::size_t kMaxExposures = 1024;

  struct Run {
    LocalAccessRecord record;
    Model model;
    bool used;
  };
  static std::size_t model_index(Model m) { return static_cast<std::size_t>(m) & (kModels - 1); }
  void add(const Exposure& e, std::uintptr_t lo, std::uintptr_t hi, bool write, std::uintptr_t pc);
  void emit(const Run& run);
  void send_batch(std::size_t m);
  void rewatch();

  bool active_ = false;
  bool pending_ = false;
  bool overflow_ = false;
  Send send_ = nullptr;
  void* ctx_ = nullptr;
  std::size_t batch_capacity_ = 0;
  void (*watch_)(const std::uintptr_t*, const std::uintptr_t*, int) = nullptr;
  int (*bind_)(int, void (*)(std::uintptr_t, std::uintptr_t, int, std::uintptr_t)) = nullptr;

  std::vector<Exposure> table_;
  // Scratch for rewatch(), reserved once.
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> spans_;
  std::vector<std::uintptr_t> gaps_, ranked_;

  Run runs_[kRunSlots] = {};
  std::uint8_t used_slots_[kRunSlots] = {};
  std::size_t used_count_ = 0;

  std::uint16_t event_[kModels] = {};
  bool has_event_[kModels] = {};
  bool announce_[kModels] = {};
  // Per model: a LocalAccessBatch, then the records.
  std::vector<std::uint8_t> batch_[kModels];
  std::size_t batch_count_[kModels] = {};
};

}  // namespace vcx::intercept
