#include <link.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "clock_sync.h"
#include "report.h"

namespace vcx::shmem_intercept {
namespace {

// The writable segments (data, bss) of every object loaded at start: where
// OpenSHMEM's static symmetric variables live. Each object is loaded at a
// different address on every PE, so they are named by object and offset.
struct Segment {
  std::uintptr_t begin, end;  // [begin, end)
  std::uintptr_t base;        // the object's load address
  std::uint64_t object;
};
std::vector<Segment> g_segments;

std::uint64_t object_id(const char* name, bool first) {
  // The program itself comes first and may have no name.
  if (first || !name || !*name) return 1;
  const char* slash = std::strrchr(name, '/');
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a of the file name
  for (const char* c = slash ? slash + 1 : name; *c; ++c) h = (h ^ static_cast<unsigned char>(*c)) * 0x100000001b3ULL;
  return h | 2;  // never 0 (raw addresses) nor 1 (the program)
}

int add_segments(dl_phdr_info* info, std::size_t, void* data) {
  auto* first = static_cast<bool*>(data);
  const std::uint64_t id = object_id(info->dlpi_name, *first);
  *first = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_W)) continue;
    const std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    g_segments.push_back(Segment{begin, begin + ph.p_memsz, info->dlpi_addr, id});
  }
  return 0;
}

void map_segments() {
  g_segments.clear();
  bool first = true;
  dl_iterate_phdr(&add_segments, &first);
  std::sort(g_segments.begin(), g_segments.end(),
            [](const Segment& a, const Segment& b) { return a.begin < b.begin; });
}

// ---- Exposed memory, for the program's loads and stores ----
// Symmetric memory is named as SymAddr names it: the program's static
// variables by object and offset, heap blocks by address; the buffers of
// _nbi calls by address, until the quiet or barrier that completes them.

using vcx::LocalAccessKind;
using vcx::intercept::Exposure;

Exposure symmetric(std::uintptr_t lo, std::uintptr_t hi, std::uintptr_t base, std::uint64_t tag) {
  Exposure e;
  e.lo = lo;
  e.hi = hi;
  e.base = base;
  e.tag = tag;
  e.owner = pshmem_my_pe();
  e.model = Model::Shmem;
  e.kind = LocalAccessKind::Memory;
  return e;
}

// The program's own static variables (those of the libraries it loads are
// not its symmetric data).
void expose_static_memory() {
  for (const Segment& s : g_segments)
    if (s.object == 1) runtime().client().expose(symmetric(s.begin, s.end, s.base, s.object));
}

// The _nbi buffers of context `ctx` are complete.
void end_buffers(std::uint64_t ctx) {
  runtime().client().unexpose_if([&](const Exposure& e) {
    return e.model == Model::Shmem && e.kind == LocalAccessKind::Buffer && e.key == ctx;
  });
}

void abort_job(int status) { pshmem_global_exit(status); }

// start_pes programs need not call shmem_finalize: Open MPI finalises at
// exit (and calls shmem_barrier_all then). The analysis ends first, as at
// shmem_finalize; a program that did call it has detached already.
void finish_at_exit() { runtime().stop(); }

const char* call_name(std::uint16_t call) {
  return call < static_cast<std::uint16_t>(Call::Count) ? shmem::kCallNames[call] : "shmem_?";
}

}  // namespace

Runtime& runtime() {
  static Runtime r;
  return r;
}

void Runtime::start(Call call, int thread_level) {
  intercept::ClientSetup setup;
  setup.model = Model::Shmem;
  setup.world_rank = pshmem_my_pe();
  setup.world_size = pshmem_n_pes();
  setup.serialise = thread_level == SHMEM_THREAD_MULTIPLE;
  setup.abort_job = &abort_job;
  setup.call_name = &call_name;
  if (!client_.attach(setup)) {
    clock_sync_start(client_);  // collective: agrees with the others not to measure
    return;
  }
  // Registered after Open MPI's own exit handler, so it runs before it.
  if (call == Call::start_pes) std::atexit(&finish_at_exit);
  map_segments();
  shmem::InitEvent ev{};
  ev.world_rank = setup.world_rank;
  ev.world_size = setup.world_size;
  ev.thread_level = thread_level;
  push(call, ev, false);
  client_.set_local_access_event(Model::Shmem, static_cast<std::uint16_t>(Call::load));
  expose_static_memory();
  clock_sync_start(client_);
}

void Runtime::stop() {
  client_.finish(Model::Shmem, static_cast<std::uint16_t>(Call::shmem_finalize));
  // Open MPI's shmem_finalize finalises MPI as well, where the program also
  // uses MPI (the MPI+OpenSHMEM interceptor): that analysis ends now too.
  client_.end_other_models(Model::Shmem);
}

shmem::SymAddr symmetric_address(const volatile void* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  auto it = std::upper_bound(g_segments.begin(), g_segments.end(), a,
                             [](std::uintptr_t v, const Segment& s) { return v < s.begin; });
  if (it != g_segments.begin()) {
    --it;
    if (a < it->end) return shmem::SymAddr{it->object, a - it->base};
  }
  return shmem::SymAddr{0, a};
}

void record_data(Call call, DataKind kind, const volatile void* remote, std::uint64_t local,
                 std::size_t elem_bytes, std::size_t count, std::ptrdiff_t stride,
                 std::uint64_t ctx, int pe, void* pc) {
  Runtime& rt = runtime();
  if (!rt.active()) return;
  shmem::DataEvent ev{};
  ev.pc = reinterpret_cast<std::uint64_t>(pc);
  ev.remote = symmetric_address(remote);
  ev.local_addr = local;
  ev.elem_bytes = elem_bytes;
  ev.count = count;
  ev.stride = stride;
  ev.ctx = ctx;
  ev.pe = pe;
  ev.kind = kind;
  rt.push(call, ev, false);
  // The local buffer of an _nbi call is read or written until it completes.
  if ((kind == DataKind::PutNbi || kind == DataKind::GetNbi) && local && stride == 1 &&
      rt.client().local_accesses()) {
    Exposure e;
    e.lo = local;
    e.hi = local + elem_bytes * count;
    e.key = ctx;
    e.owner = pshmem_my_pe();
    e.model = Model::Shmem;
    e.kind = LocalAccessKind::Buffer;
    rt.client().expose(e);
  }
}

void note_heap_block(const void* block, std::size_t bytes) {
  Runtime& rt = runtime();
  if (!block || !bytes || !rt.client().local_accesses()) return;
  const auto lo = reinterpret_cast<std::uintptr_t>(block);
  rt.client().expose(symmetric(lo, lo + bytes, 0, 0));
}

void end_heap_block(const void* block) {
  const auto lo = reinterpret_cast<std::uintptr_t>(block);
  runtime().client().unexpose_if([&](const Exposure& e) {
    return e.model == Model::Shmem && e.kind == LocalAccessKind::Memory && e.tag == 0 &&
           e.lo == lo;
  });
}

void record_completion(Call call, std::uint64_t ctx, void* pc) {
  Runtime& rt = runtime();
  if (!rt.active()) return;
  rt.push(call, shmem::CompletionEvent{ctx, reinterpret_cast<std::uint64_t>(pc)}, false);
  if (rt.client().local_accesses() &&
      shmem::completes_context(shmem::kCallNames[static_cast<std::size_t>(call)]))
    end_buffers(ctx);
}

void report_collective(Call call, int pe_start, int log_stride, int pe_size, int root) {
  Runtime& rt = runtime();
  if (!rt.active()) return;
  rt.client().wait(rt.push(call, shmem::CollectiveEvent{pe_start, log_stride, pe_size, root}, true));
  if (rt.client().local_accesses() &&
      shmem::completes_data(shmem::kCallNames[static_cast<std::size_t>(call)]))
    end_buffers(0);  // the default context's, as the translator completes them
}

void report_world_collective(Call call) {
  if (runtime().active()) report_collective(call, 0, 0, pshmem_n_pes(), -1);
}

}  // namespace vcx::shmem_intercept
