#include "shmem_translator.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace vcx::shmem {
namespace {

constexpr std::uint64_t kSetSeed = 0x53484d454d534554ULL;   // "SHMEMSET"
constexpr std::uint64_t kLockSeed = 0x53484d454d4c4f43ULL;  // "SHMEMLOC"

}  // namespace

ShmemTranslator::ShmemTranslator(ToolHost& host)
    : host_(host), self_(host.rank()), world_size_(host.world_size()) {}

const char* ShmemTranslator::call_name(std::uint16_t call) const {
  return call < static_cast<std::uint16_t>(Call::Count) ? kCallNames[call] : "shmem_?";
}

GroupId ShmemTranslator::set_id(std::int32_t pe_start, std::int32_t log_stride,
                                std::int32_t pe_size) {
  std::uint64_t h = hash_combine(kSetSeed, static_cast<std::uint32_t>(pe_start));
  h = hash_combine(h, static_cast<std::uint32_t>(log_stride));
  return GroupId{hash_combine(h, static_cast<std::uint32_t>(pe_size))};
}

std::uint64_t ShmemTranslator::lock_id(const SymAddr& lock) {
  return hash_combine(hash_combine(kLockSeed, lock.object), lock.offset);
}

template <class T>
T ShmemTranslator::payload(const EventHeader& ev) const {
  if (ev.payload_size < sizeof(T))
    host_.fatal("shmem: event " + std::to_string(ev.type) +
                " is too short (interceptor and translator from different vcx versions?)");
  T t;
  std::memcpy(&t, reinterpret_cast<const std::uint8_t*>(&ev + 1), sizeof(T));
  return t;
}

void ShmemTranslator::bad(Call call, const std::string& what) const {
  host_.fatal("vcx: PE " + std::to_string(self_.value) + ": " +
              kCallNames[static_cast<std::size_t>(call)] + ": " + what);
}

void ShmemTranslator::translate(const EventHeader& ev, ExchangeControl& ctl, CallProgram& out) {
  if (ev.type >= static_cast<std::uint16_t>(Call::Count))
    host_.fatal("shmem: unknown event type " + std::to_string(ev.type) +
                " (interceptor and translator from different vcx versions?)");
  const auto call = static_cast<Call>(ev.type);
  const Family family = kCallFamily[ev.type];
  if (family != Family::Init && !started_)
    host_.fatal("shmem: PE " + std::to_string(self_.value) + " reported " +
                kCallNames[ev.type] + " before shmem_init");
  switch (family) {
    case Family::Init: on_init(payload<InitEvent>(ev)); break;
    case Family::Finalize: finalized_ = true; break;
    case Family::GlobalExit: break;  // the application job ends; the tools notice
    case Family::CollWorld:
    case Family::CollSet:
    case Family::BcastSet:
      on_collective(call, payload<CollectiveEvent>(ev), family == Family::BcastSet, ctl, out);
      break;
    case Family::LockSet:
    case Family::LockTest:
    case Family::LockClear: on_lock(call, payload<LockEvent>(ev), out); break;
    case Family::Data: on_data(call, payload<DataEvent>(ev), out); break;
    case Family::Completion: note_completion(call, payload<CompletionEvent>(ev), out); break;
    case Family::Annotate: on_annotate(call, payload<AnnotateEvent>(ev), ctl, out); break;
    case Family::FlagWrite: on_flag_write(ev.seq, payload<FlagWriteEvent>(ev), out); break;
    case Family::FlagResult: on_flag_result(payload<FlagResultEvent>(ev), out); break;
    case Family::FlagWait: on_flag_wait(call, payload<FlagWaitEvent>(ev), out); break;
    case Family::LocalAccess: note_local_accesses(ev, out); break;
  }
}

void ShmemTranslator::on_init(const InitEvent& e) {
  if (static_cast<std::uint32_t>(e.world_size) != world_size_ ||
      static_cast<std::uint32_t>(e.world_rank) != self_.value)
    host_.fatal("shmem: the application's PEs do not match the tool job");
  started_ = true;
}

bool ShmemTranslator::set_members(const CollectiveEvent& e, std::vector<Rank>* out) const {
  const std::int64_t start = e.pe_start, log = e.log_stride, size = e.pe_size;
  if (start < 0 || log < 0 || log > 30 || size < 1 ||
      start + ((size - 1) << log) >= static_cast<std::int64_t>(world_size_))
    return false;
  for (std::int64_t i = 0; out && i < size; ++i)
    out->push_back(Rank{static_cast<std::uint32_t>(start + (i << log))});
  return true;
}

void ShmemTranslator::on_collective(Call call, const CollectiveEvent& e, bool one_to_all,
                                    ExchangeControl& ctl, CallProgram& out) {
  const std::int64_t start = e.pe_start, log = e.log_stride, size = e.pe_size;
  if (!set_members(e, nullptr))
    bad(call, "the active set PE_start=" + std::to_string(start) + ", logPE_stride=" +
                  std::to_string(log) + ", PE_size=" + std::to_string(size) +
                  " names PEs outside 0.." + std::to_string(world_size_ - 1));
  const std::int64_t mine = static_cast<std::int64_t>(self_.value) - start;
  if (mine < 0 || (mine & ((std::int64_t{1} << log) - 1)) != 0 || (mine >> log) >= size)
    bad(call, "called by a PE outside its active set (PE_start=" + std::to_string(start) +
                  ", logPE_stride=" + std::to_string(log) + ", PE_size=" + std::to_string(size) +
                  ")");
  const GroupId group = set_id(e.pe_start, e.log_stride, e.pe_size);
  if (registered_.insert(group).second) {
    std::vector<Rank> members;
    set_members(e, &members);
    ctl.register_group(group, members);
  }
  CollectiveRef ref;
  ref.group = group;
  // Every call of every member counts, so instance numbers agree everywhere.
  ref.instance = ++instances_[group];
  ref.kind = CollectiveKind::AllToAll;
  if (one_to_all) {
    if (e.root < 0 || e.root >= e.pe_size)
      bad(call, "PE_root " + std::to_string(e.root) + " is not an index into the active set of " +
                    std::to_string(size) + " PEs");
    ref.kind = CollectiveKind::OneToAll;
    ref.root = Rank{static_cast<std::uint32_t>(start + (std::int64_t{e.root} << log))};
  }
  // A blocking call: every member is clocked, contributes and completes.
  out.mark_clocked();
  if (completes_data(call)) complete_accesses(0, false, out);
  out.push(Op::contribute(ref, kCollectiveBlocking));
  out.push(Op::complete(ref));
}

void ShmemTranslator::on_lock(Call call, const LockEvent& e, CallProgram& out) {
  const std::uint64_t id = lock_id(e.lock);
  const Rank deposition{static_cast<std::uint32_t>(mix64(id) % world_size_)};
  if (kCallFamily[static_cast<std::size_t>(call)] == Family::LockClear) {
    // The release: deposit (an exclusive acquisition that merges nothing,
    // then the release that adds this clock to the lock's deposits). It
    // completes the critical region's puts first.
    if (auto it = std::find(locks_held_.begin(), locks_held_.end(), id); it != locks_held_.end())
      locks_held_.erase(it);
    out.mark_clocked();
    complete_accesses(0, false, out);
    out.push(Op::acquire(deposition, id, kResourceDeposit));
    out.push(Op::release(deposition, id, kResourceDeposit));
    return;
  }
  if (!e.acquired) return;  // shmem_test_lock found the lock taken
  locks_held_.push_back(id);
  // The acquisition: fetch every release so far.
  out.mark_clocked();
  out.push(Op::acquire(deposition, id, kResourceShared | kResourceFetch));
}

void ShmemTranslator::on_data(Call call, const DataEvent& e, CallProgram& out) {
  if (e.pe < 0 || static_cast<std::uint32_t>(e.pe) >= world_size_)
    bad(call, "target PE " + std::to_string(e.pe) + " is outside 0.." +
                  std::to_string(world_size_ - 1));
  if (e.kind != kCallDataKind[static_cast<std::size_t>(call)])
    host_.fatal("shmem: a data event whose kind does not match its call "
                "(interceptor and translator from different vcx versions?)");
  note_access(call, e, out);
}

}  // namespace vcx::shmem
