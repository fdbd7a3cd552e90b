#include "runtime.h"

#include "forced_matches.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace vcx::mpi_intercept {
namespace {

// A communicator of the interceptor's own, with one receive posted that
// nothing ever matches: testing it runs MPI's whole progress engine while
// the application waits for its tool, and touches nothing of the
// application's.
MPI_Comm g_progress_comm = MPI_COMM_NULL;
MPI_Request g_progress_request = MPI_REQUEST_NULL;
int g_progress_buffer = 0;

// Threads waiting for their tool at the same time must not use the one
// request concurrently (MPI forbids it); one testing it is enough.
std::atomic_flag g_progress_busy = ATOMIC_FLAG_INIT;

void drive_progress(void*) {
  if (g_progress_request == MPI_REQUEST_NULL) return;
  if (g_progress_busy.test_and_set(std::memory_order_acquire)) return;
  int flag = 0;
  PMPI_Test(&g_progress_request, &flag, MPI_STATUS_IGNORE);
  g_progress_busy.clear(std::memory_order_release);
}

void start_progress() {
  PMPI_Comm_dup(MPI_COMM_SELF, &g_progress_comm);
  PMPI_Irecv(&g_progress_buffer, 1, MPI_INT, 0, 0, g_progress_comm, &g_progress_request);
}

void stop_progress() {
  if (g_progress_request != MPI_REQUEST_NULL) {
    PMPI_Cancel(&g_progress_request);
    PMPI_Wait(&g_progress_request, MPI_STATUS_IGNORE);
  }
  if (g_progress_comm != MPI_COMM_NULL) PMPI_Comm_free(&g_progress_comm);
}

void abort_job(int status) { PMPI_Abort(MPI_COMM_WORLD, status); }

const char* call_name(std::uint16_t call) {
  return call < static_cast<std::uint16_t>(mpi::Call::Count) ? mpi::kCallNames[call] : "MPI_?";
}

}  // namespace

namespace {

// The address ranges of MPICH's Fortran bindings in this process (made once).
struct CodeRange {
  std::uintptr_t lo, hi;
};
struct FortranCode {
  CodeRange ranges[8];
  int count = 0;
};

const FortranCode& fortran_code() {
  static const FortranCode code = [] {
    FortranCode c;
    dl_iterate_phdr(
        [](dl_phdr_info* lib, std::size_t, void* data) {
          auto* out = static_cast<FortranCode*>(data);
          if (!lib->dlpi_name || !is_fortran_library(lib->dlpi_name)) return 0;
          for (int i = 0; i < lib->dlpi_phnum && out->count < 8; ++i) {
            const ElfW(Phdr)& ph = lib->dlpi_phdr[i];
            if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
            const std::uintptr_t lo = lib->dlpi_addr + ph.p_vaddr;
            out->ranges[out->count++] = CodeRange{lo, lo + ph.p_memsz};
          }
          return 0;
        },
        &c);
    return c;
  }();
  return code;
}

bool in_fortran_bindings(std::uintptr_t pc) {
  const FortranCode& c = fortran_code();
  for (int i = 0; i < c.count; ++i)
    if (pc >= c.ranges[i].lo && pc < c.ranges[i].hi) return true;
  return false;
}

// This library's own code, to skip its frames when unwinding.
bool in_interceptor(std::uintptr_t pc) {
  static const void* self = [] {
    Dl_info info{};
    return dladdr(reinterpret_cast<void*>(&in_interceptor), &info) ? info.dli_fbase : nullptr;
  }();
  Dl_info info{};
  return self && dladdr(reinterpret_cast<void*>(pc), &info) && info.dli_fbase == self;
}

}  // namespace

bool is_fortran_library(const char* path) {
  const char* base = std::strrchr(path, '/');
  base = base ? base + 1 : path;
  return std::strncmp(base, "libmpichfort.so", 15) == 0 ||
         std::strncmp(base, "libmpifort.so", 13) == 0;
}

void* application_pc(void* ra) {
  const auto pc = reinterpret_cast<std::uintptr_t>(ra);
  if (!in_fortran_bindings(pc)) return ra;
  void* frames[16];
  const int n = backtrace(frames, 16);
  for (int i = 0; i < n; ++i) {
    const auto f = reinterpret_cast<std::uintptr_t>(frames[i]);
    if (!in_fortran_bindings(f) && !in_interceptor(f)) return frames[i];
  }
  return ra;
}

Runtime& runtime() {
  static Runtime r;
  return r;
}

std::vector<MPI_Request>& Runtime::saved_requests() {
  thread_local std::vector<MPI_Request> v;
  return v;
}

std::vector<MPI_Status>& Runtime::statuses() {
  thread_local std::vector<MPI_Status> v;
  return v;
}

void Runtime::note_progress() { forced_matches().progress(); }

void Runtime::start(int thread_level) {
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank_);
  int world_size = 0;
  PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
  PMPI_Comm_group(MPI_COMM_WORLD, &world_group_);

  intercept::ClientSetup setup;
  setup.model = Model::Mpi;
  setup.world_rank = world_rank_;
  setup.world_size = world_size;
  setup.serialise = thread_level == MPI_THREAD_MULTIPLE;
  setup.abort_job = &abort_job;
  // Other ranks' operations (passive-target RMA, rendezvous transfers) may
  // need this rank's MPI to progress before the tool can answer; without
  // vcx the rank would be waiting inside MPI, progressing it.
  setup.progress = &drive_progress;
  setup.call_name = &call_name;
  setup.end = [] { runtime().stop(); };
  if (!client_.attach(setup)) {
    clock_sync_.start(client_);  // collective: agrees with the others not to measure
    return;
  }
  serialise_ = setup.serialise;
  forced_matches().load(world_rank_, world_group_, thread_level);
  force_ = forced_matches().active();
  find_shared_done_request();
  start_progress();

  mpi::InitEvent ev{};
  ev.comm_world = comm_handle(MPI_COMM_WORLD);
  ev.comm_self = comm_handle(MPI_COMM_SELF);
  ev.world_rank = world_rank_;
  ev.world_size = world_size;
  ev.thread_level = thread_level;
  push(mpi::Call::Init, ev, false);
  client_.set_local_access_event(Model::Mpi, static_cast<std::uint16_t>(mpi::Call::Load));
  clock_sync_.start(client_);
}

// Open MPI hands out one predefined, already complete request for every
// non-blocking collective that completes at once (on a one-member
// communicator); MPICH's such requests are recognised by their handle kind
// (collective_support.h). Two one-member barriers name it if it exists.
void Runtime::find_shared_done_request() {
#ifndef MPICH
  MPI_Request first = MPI_REQUEST_NULL, second = MPI_REQUEST_NULL;
  if (PMPI_Ibarrier(MPI_COMM_SELF, &first) != MPI_SUCCESS) return;
  if (PMPI_Ibarrier(MPI_COMM_SELF, &second) != MPI_SUCCESS) {
    PMPI_Wait(&first, MPI_STATUS_IGNORE);
    return;
  }
  if (first == second && first != MPI_REQUEST_NULL) shared_done_request_ = first;
  PMPI_Wait(&second, MPI_STATUS_IGNORE);
  PMPI_Wait(&first, MPI_STATUS_IGNORE);
#endif
}

void Runtime::stop() {
  const bool was_active = active();
  forced_matches().stop();
  client_.finish(Model::Mpi, static_cast<std::uint16_t>(mpi::Call::Finalize));
  if (was_active) stop_progress();
}

namespace {

// Where the generation goes: above MPICH's 32-bit int handles, above the
// 48 bits of Open MPI's pointer handles (its low 16 bits).
constexpr bool kPointerHandles = std::is_pointer_v<MPI_Request>;
static_assert(kPointerHandles || sizeof(MPI_Request) <= sizeof(std::uint32_t),
              "request ids pack handle and generation");

std::uint64_t with_generation(std::uint64_t key, std::uint32_t generation) {
  if constexpr (kPointerHandles)
    return std::uint64_t{generation & 0xffffu} << 48 | key;
  else
    return std::uint64_t{generation} << 32 | key;
}

}  // namespace

std::uint64_t Runtime::next_generation(std::uint64_t key) {
  lock();
  const std::uint32_t generation = ++generations_[key];
  unlock();
  return with_generation(key, generation);
}

std::uint64_t Runtime::this_generation(std::uint64_t key) {
  lock();
  const auto it = generations_.find(key);
  const std::uint32_t generation = it == generations_.end() ? 0 : it->second;
  unlock();
  return with_generation(key, generation);
}

void Runtime::remember(MPI_Request r, RequestKind k, bool persistent, Life life) {
  const bool waits_in_mpi = life == Life::WaitsInMpi;
  if ((k == RequestKind::Other && !persistent && !waits_in_mpi) || !active() ||
      r == MPI_REQUEST_NULL)
    return;
  const std::uint64_t id = request_id(r);
  lock();
  insert(id, k, persistent, !persistent, waits_in_mpi);
  if (waits_in_mpi) waits_in_mpi_.fetch_add(1, std::memory_order_relaxed);
  unlock();
}

void Runtime::insert(std::uint64_t key, RequestKind k, bool persistent, bool active,
                     bool waits_in_mpi) {
  if ((request_count_ + 1) * 2 > requests_.size()) {
    std::vector<Entry> old(requests_.size() * 2);
    old.swap(requests_);
    request_count_ = 0;
    for (const Entry& e : old)
      if (e.used) insert(e.key, e.kind, e.persistent, e.active, e.waits_in_mpi);
  }
  std::size_t i = mix64(key) & (requests_.size() - 1);
  while (requests_[i].used && requests_[i].key != key) i = (i + 1) & (requests_.size() - 1);
  if (!requests_[i].used) ++request_count_;
  requests_[i] = Entry{key, k, persistent, active, true, waits_in_mpi};
}

Runtime::Entry* Runtime::find(std::uint64_t key) {
  const std::size_t mask = requests_.size() - 1;
  for (std::size_t i = mix64(key) & mask; requests_[i].used; i = (i + 1) & mask)
    if (requests_[i].key == key) return &requests_[i];
  return nullptr;
}

void Runtime::activate(MPI_Request r) {
  const std::uint64_t id = request_id(r);
  lock();
  if (Entry* e = find(id)) e->active = true;
  unlock();
}

std::optional<RequestKind> Runtime::complete(std::uint64_t id) {
  lock();
  std::optional<RequestKind> result = RequestKind::Other;
  if (Entry* e = find(id)) {
    result = e->kind;
    if (e->persistent) {
      if (!e->active) result.reset();
      e->active = false;
    } else {
      erase(id);
    }
  }
  unlock();
  return result;
}

void Runtime::forget(std::uint64_t id) {
  lock();
  erase(id);
  unlock();
}

void Runtime::erase(std::uint64_t key) {
  const std::size_t mask = requests_.size() - 1;
  std::size_t i = mix64(key) & mask;
  while (requests_[i].used && requests_[i].key != key) i = (i + 1) & mask;
  if (!requests_[i].used) return;
  if (requests_[i].waits_in_mpi) waits_in_mpi_.fetch_sub(1, std::memory_order_relaxed);
  // Backward-shift deletion keeps probe chains intact without tombstones.
  std::size_t hole = i;
  for (std::size_t j = (i + 1) & mask; requests_[j].used; j = (j + 1) & mask) {
    const std::size_t home = mix64(requests_[j].key) & mask;
    const bool movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
    if (movable) {
      requests_[hole] = requests_[j];
      hole = j;
    }
  }
  requests_[hole].used = false;
  --request_count_;
}

}  // namespace vcx::mpi_intercept
