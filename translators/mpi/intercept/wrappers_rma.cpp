// One-sided communication: window constructors, fence, post/start/complete/
// wait, locks, and the data calls (recorded, not clocked).
//
// Locks are the one place the application waits for its tool in either
// stall mode: MPI may take a lock lazily, after MPI_Win_lock returned, so
// the order in which MPI grants a lock cannot be seen from outside; the tool
// decides it instead, and MPI_Win_lock calls MPI only once the tool granted
// the lock. MPI_Win_unlock hands the lock back after MPI's unlock returned.
// A lock nobody else asked for stays with this process as a lease: taking it
// again asks nobody (vcx/channel/lease_table.h).
#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime.h"
#include "vcx/channel/lease_table.h"

using namespace vcx::mpi_intercept;
using vcx::mpi::Call;
using vcx::mpi::RmaKind;
using vcx::LocalAccessKind;
using vcx::intercept::Exposure;

namespace {

// ---- exposed memory, for the program's local loads and stores ----
// (vcx/intercept/local_accesses.h). Window memory is named by the window's
// handle and the offset from its member's base (a dynamic window's: the
// address); buffers of operations in flight by their address, until the
// window synchronisation that completes them.

vcx::intercept::ChannelClient& client() { return vcx::intercept::process_client(); }

void expose_memory(MPI_Win win, const void* lo, std::uint64_t bytes, std::uintptr_t base,
                   int owner) {
  Exposure e;
  e.lo = reinterpret_cast<std::uintptr_t>(lo);
  e.hi = e.lo + bytes;
  e.base = base;
  e.tag = e.key = window_handle(win);
  e.owner = owner;
  e.model = vcx::Model::Mpi;
  e.kind = LocalAccessKind::Memory;
  client().expose(e);
}

// A new window's memory: this member's, and with a shared window every
// member's, which this process reaches by loads and stores too.
void expose_window(Call call, MPI_Comm comm, MPI_Win win, const void* base, MPI_Aint bytes) {
  if (!client().local_accesses() || call == Call::Win_create_dynamic) return;
  if (call != Call::Win_allocate_shared && call != Call::Win_allocate_shared_c) {
    expose_memory(win, base, static_cast<std::uint64_t>(bytes),
                  reinterpret_cast<std::uintptr_t>(base), runtime().world_rank());
    return;
  }
  int n = 0;
  PMPI_Comm_size(comm, &n);
  MPI_Group group = MPI_GROUP_NULL;
  PMPI_Comm_group(comm, &group);
  for (int r = 0; r < n; ++r) {
    MPI_Aint size = 0;
    int unit = 0;
    void* at = nullptr;
    int world = MPI_UNDEFINED;
    PMPI_Group_translate_ranks(group, 1, &r, runtime().world_group(), &world);
    if (PMPI_Win_shared_query(win, r, &size, &unit, &at) == MPI_SUCCESS && world >= 0)
      expose_memory(win, at, static_cast<std::uint64_t>(size),
                    reinterpret_cast<std::uintptr_t>(at), world);
  }
  PMPI_Group_free(&group);
}

// Origin and result buffers of a data call, read or written until the call
// completes at this process.
void expose_buffer(MPI_Win win, int target, const void* addr, std::uint64_t bytes) {
  Exposure e;
  e.lo = reinterpret_cast<std::uintptr_t>(addr);
  e.hi = e.lo + bytes;
  e.key = window_handle(win);
  e.owner = runtime().world_rank();
  e.target = target;
  e.model = vcx::Model::Mpi;
  e.kind = LocalAccessKind::Buffer;
  client().expose(e);
}

// Window synchronisation that completes the buffers of the operations to
// `target` (every target: -1); freeing the window ends its memory too.
void end_exposures(Call call, MPI_Win win, int target) {
  bool all_targets = false, memory = false;
  switch (call) {
    case Call::Win_free: memory = all_targets = true; break;
    case Call::Win_fence:
    case Call::Win_complete:
    case Call::Win_unlock_all:
    case Call::Win_flush_all:
    case Call::Win_flush_local_all: all_targets = true; break;
    case Call::Win_unlock:
    case Call::Win_flush:
    case Call::Win_flush_local: break;
    default: return;
  }
  const std::uint64_t key = window_handle(win);
  client().unexpose_if([&](const Exposure& e) {
    if (e.model != vcx::Model::Mpi || e.key != key) return false;
    if (e.kind == LocalAccessKind::Memory) return memory;
    return all_targets || e.target == target;
  });
}

// A new window, with this member's memory (the race analysis compares
// accesses by their bytes in it).
void report_window(Call call, MPI_Comm comm, MPI_Win win, const void* base, MPI_Aint bytes,
                   MPI_Aint disp_unit, void* pc) {
  Runtime& rt = runtime();
  if (!rt.active()) return;
  vcx::mpi::WinCreateEvent ev{};
  ev.comm = comm_handle(comm);
  ev.win = window_handle(win);
  ev.base = reinterpret_cast<std::uint64_t>(base);
  ev.bytes = static_cast<std::uint64_t>(bytes);
  ev.pc = reinterpret_cast<std::uint64_t>(pc);
  ev.disp_unit = static_cast<std::uint32_t>(disp_unit);
  rt.push(call, ev, false);
  expose_window(call, comm, win, base, bytes);
}

// What a lease allows, as the tool publishes it: 1 for a shared lock.
std::uint32_t lease_kind(int lock_type) { return lock_type == MPI_LOCK_SHARED ? 1 : 0; }

std::uint64_t push_win(Call call, MPI_Win win, int rank, int arg, bool waits, void* pc) {
  vcx::mpi::WinEvent ev{};
  ev.win = window_handle(win);
  ev.rank = rank;
  ev.arg = arg;
  ev.pc = reinterpret_cast<std::uint64_t>(pc);
  const std::uint64_t ticket = runtime().push(call, ev, waits);
  if (client().local_accesses()) end_exposures(call, win, rank);
  return ticket;
}

// Post and start carry their group as world ranks.
std::uint64_t push_win_group(Call call, MPI_Win win, MPI_Group group, bool waits) {
  Runtime& rt = runtime();
  int n = 0;
  PMPI_Group_size(group, &n);
  thread_local std::vector<int> local, world;
  local.resize(static_cast<std::size_t>(n));
  world.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) local[static_cast<std::size_t>(i)] = i;
  if (n > 0) PMPI_Group_translate_ranks(group, n, local.data(), rt.world_group(), world.data());
  const std::size_t bytes = sizeof(vcx::mpi::WinGroupEvent) + static_cast<std::size_t>(n) * 4;
  auto* p = static_cast<std::uint8_t*>(rt.begin(call, bytes, waits && n > 0));
  if (!p) return 0;
  const vcx::mpi::WinGroupEvent head{window_handle(win), static_cast<std::uint32_t>(n), 0};
  std::memcpy(p, &head, sizeof head);
  if (n > 0) std::memcpy(p + sizeof head, world.data(), static_cast<std::size_t>(n) * 4);
  return rt.commit();
}

std::uint64_t type_bytes(MPI_Count count, MPI_Datatype type) {
  int size = 0;
  PMPI_Type_size(type, &size);
  return static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(size);
}

std::uint64_t type_span(MPI_Count count, MPI_Datatype type) {
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(type, &lb, &extent);
  return static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(extent);
}

// Whether a datatype's data fills its extent without gaps, from offset 0:
// then `count` of them are one contiguous range of bytes.
bool dense(MPI_Datatype t) {
  if (t == MPI_DATATYPE_NULL) return false;
  MPI_Count size = 0, lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  PMPI_Type_size_x(t, &size);
  PMPI_Type_get_extent_x(t, &lb, &extent);
  PMPI_Type_get_true_extent_x(t, &true_lb, &true_extent);
  return lb == 0 && true_lb == 0 && size == extent && size == true_extent;
}

// Frees the derived datatypes MPI_Type_get_contents handed out (named ones
// are not copies), except `keep`.
void free_contents(std::vector<MPI_Datatype>& types, MPI_Datatype keep = MPI_DATATYPE_NULL) {
  for (MPI_Datatype& x : types) {
    int ni = 0, na = 0, nd = 0, combiner = 0;
    PMPI_Type_get_envelope(x, &ni, &na, &nd, &combiner);
    if (combiner != MPI_COMBINER_NAMED && x != keep) PMPI_Type_free(&x);
  }
}

// The predefined datatype a derived one is made of (accumulate operations
// allow only one), found through the type's constructors.
MPI_Datatype basic_of(MPI_Datatype t) {
  for (int depth = 0; depth < 32; ++depth) {
    int ints = 0, addresses = 0, types = 0, combiner = 0;
    PMPI_Type_get_envelope(t, &ints, &addresses, &types, &combiner);
    if (combiner == MPI_COMBINER_NAMED || types < 1) return t;
    std::vector<int> i(static_cast<std::size_t>(ints));
    std::vector<MPI_Aint> a(static_cast<std::size_t>(addresses));
    std::vector<MPI_Datatype> d(static_cast<std::size_t>(types));
    PMPI_Type_get_contents(t, ints, addresses, types, i.data(), a.data(), d.data());
    // Every constituent of an accumulate's type is the same basic type.
    const MPI_Datatype next = d[0];
    free_contents(d, next);
    if (depth > 0) PMPI_Type_free(&t);  // a copy get_contents handed out
    t = next;
  }
  return t;
}

// The bytes `count` elements of a datatype occupy, as blocks from the
// buffer's start (the type map, merged where blocks touch), for datatypes
// with gaps. At most kMaxBlocks; false beyond that or for constructors not
// described (subarray, darray): the access is then not checked.
constexpr std::size_t kMaxBlocks = 256;

bool flatten(MPI_Datatype t, std::int64_t at, std::vector<vcx::mpi::RmaBlock>& out, int depth);

// Adds `bytes` at `at`, joined to the last block where they touch.
bool append_block(std::vector<vcx::mpi::RmaBlock>& out, std::int64_t at, std::uint64_t bytes) {
  if (!out.empty() && out.back().offset + static_cast<std::int64_t>(out.back().bytes) == at)
    out.back().bytes += bytes;
  else
    out.push_back(vcx::mpi::RmaBlock{at, bytes});
  return out.size() <= kMaxBlocks;
}

bool flatten_each(MPI_Datatype t, std::int64_t at, std::int64_t count, std::int64_t step,
                  std::vector<vcx::mpi::RmaBlock>& out, int depth) {
  // Predefined elements side by side: one block.
  int ni = 0, na = 0, nd = 0, combiner = 0;
  PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
  if (combiner == MPI_COMBINER_NAMED && count > 1) {
    int size = 0;
    PMPI_Type_size(t, &size);
    if (size == step) return append_block(out, at, static_cast<std::uint64_t>(count * step));
  }
  for (std::int64_t k = 0; k < count; ++k)
    if (!flatten(t, at + k * step, out, depth)) return false;
  return true;
}

MPI_Aint extent_of(MPI_Datatype t) {
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(t, &lb, &extent);
  return extent;
}

bool flatten(MPI_Datatype t, std::int64_t at, std::vector<vcx::mpi::RmaBlock>& out, int depth) {
  if (depth > 16 || out.size() > kMaxBlocks) return false;
  int ni = 0, na = 0, nd = 0, combiner = 0;
  PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
  if (combiner == MPI_COMBINER_NAMED) {
    int size = 0;
    PMPI_Type_size(t, &size);
    return size == 0 || append_block(out, at, static_cast<std::uint64_t>(size));
  }
  std::vector<int> i(static_cast<std::size_t>(ni));
  std::vector<MPI_Aint> a(static_cast<std::size_t>(na));
  std::vector<MPI_Datatype> d(static_cast<std::size_t>(nd));
  PMPI_Type_get_contents(t, ni, na, nd, i.data(), a.data(), d.data());
  bool ok = true;
  auto elem = [&](std::size_t k) { return static_cast<std::int64_t>(extent_of(d[k])); };
  switch (combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED: ok = flatten(d[0], at, out, depth + 1); break;
    case MPI_COMBINER_CONTIGUOUS: ok = flatten_each(d[0], at, i[0], elem(0), out, depth + 1); break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
      const std::int64_t stride =
          combiner == MPI_COMBINER_VECTOR ? i[2] * elem(0) : static_cast<std::int64_t>(a[0]);
      for (int k = 0; ok && k < i[0]; ++k)
        ok = flatten_each(d[0], at + k * stride, i[1], elem(0), out, depth + 1);
      break;
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
      for (int k = 0; ok && k < i[0]; ++k) {
        const std::int64_t disp = combiner == MPI_COMBINER_INDEXED
                                      ? i[static_cast<std::size_t>(i[0] + 1 + k)] * elem(0)
                                      : static_cast<std::int64_t>(a[static_cast<std::size_t>(k)]);
        ok = flatten_each(d[0], at + disp, i[static_cast<std::size_t>(1 + k)], elem(0), out,
                          depth + 1);
      }
      break;
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
      for (int k = 0; ok && k < i[0]; ++k) {
        const std::int64_t disp = combiner == MPI_COMBINER_INDEXED_BLOCK
                                      ? i[static_cast<std::size_t>(2 + k)] * elem(0)
                                      : static_cast<std::int64_t>(a[static_cast<std::size_t>(k)]);
        ok = flatten_each(d[0], at + disp, i[1], elem(0), out, depth + 1);
      }
      break;
    case MPI_COMBINER_STRUCT:
      for (int k = 0; ok && k < i[0]; ++k)
        ok = flatten_each(d[static_cast<std::size_t>(k)],
                          at + static_cast<std::int64_t>(a[static_cast<std::size_t>(k)]),
                          i[static_cast<std::size_t>(1 + k)], elem(static_cast<std::size_t>(k)),
                          out, depth + 1);
      break;
    default: ok = false;  // subarray, darray, ...: not described
  }
  free_contents(d);
  return ok;
}

// The blocks of `count` elements of `t`, sorted and merged; false when they
// are not described.
bool type_blocks(MPI_Count count, MPI_Datatype t, std::vector<vcx::mpi::RmaBlock>& out) {
  out.clear();
  const std::int64_t extent = extent_of(t);
  if (!flatten_each(t, 0, count, extent, out, 0) || out.size() > kMaxBlocks) return false;
  using vcx::mpi::RmaBlock;
  std::sort(out.begin(), out.end(),
            [](const RmaBlock& x, const RmaBlock& y) { return x.offset < y.offset; });
  auto end_of = [](const RmaBlock& b) { return b.offset + static_cast<std::int64_t>(b.bytes); };
  std::size_t n = 0;
  for (const auto& b : out) {
    if (n > 0 && end_of(out[n - 1]) >= b.offset) {
      const std::int64_t end = std::max(end_of(out[n - 1]), end_of(b));
      out[n - 1].bytes = static_cast<std::uint64_t>(end - out[n - 1].offset);
    } else {
      out[n++] = b;
    }
  }
  out.resize(n);
  return true;
}

// One data call as the race analysis sees it.
struct Access {
  Call call;
  RmaKind kind;
  const void* origin = nullptr;
  MPI_Count origin_count = 0;
  MPI_Datatype origin_type = MPI_DATATYPE_NULL;
  const void* result = nullptr;
  MPI_Count result_count = 0;
  MPI_Datatype result_type = MPI_DATATYPE_NULL;
  int target_rank = MPI_PROC_NULL;
  MPI_Aint target_disp = 0;
  MPI_Count target_count = 0;
  MPI_Datatype target_type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  MPI_Win win = MPI_WIN_NULL;
  const MPI_Request* request = nullptr;
  void* pc = nullptr;  // the application's return address
};

// Recorded, never waited for.
void record(const Access& x) {
  Runtime& rt = runtime();
  if (!rt.active() || x.target_rank == MPI_PROC_NULL) return;
  vcx::mpi::RmaAccessEvent ev{};
  ev.win = window_handle(x.win);
  const bool ignores_origin = x.op == MPI_NO_OP && x.kind != RmaKind::Put;
  if (x.origin && !ignores_origin && x.origin_type != MPI_DATATYPE_NULL) {
    ev.origin_addr = reinterpret_cast<std::uint64_t>(x.origin);
    ev.origin_bytes = type_span(x.origin_count, x.origin_type);
    if (dense(x.origin_type)) ev.flags |= vcx::mpi::kRmaOriginDense;
  }
  if (x.result && x.result_type != MPI_DATATYPE_NULL) {
    ev.result_addr = reinterpret_cast<std::uint64_t>(x.result);
    ev.result_bytes = type_span(x.result_count, x.result_type);
    if (dense(x.result_type)) ev.flags |= vcx::mpi::kRmaResultDense;
  }
  ev.target_disp = x.target_disp;
  ev.target_bytes = type_bytes(x.target_count, x.target_type);
  if (dense(x.target_type)) ev.flags |= vcx::mpi::kRmaTargetDense;
  ev.request = x.request ? rt.new_request_id(*x.request) : 0;
  ev.pc = reinterpret_cast<std::uint64_t>(x.pc);
  ev.target_rank = x.target_rank;
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(x.target_type, &lb, &extent);
  ev.target_extent = static_cast<std::uint32_t>(extent);
  if (x.op != MPI_OP_NULL || x.kind == RmaKind::CompareAndSwap) {
    ev.op = static_cast<std::uint32_t>(handle_bits(x.op));
    ev.basic_type = static_cast<std::uint32_t>(handle_bits(basic_of(x.target_type)));
    if (x.op == MPI_NO_OP) ev.flags |= vcx::mpi::kRmaNoOp;
  }
  ev.kind = x.kind;
  // A target datatype with gaps: the blocks it touches follow the event.
  thread_local std::vector<vcx::mpi::RmaBlock> blocks;
  blocks.clear();
  if (!(ev.flags & vcx::mpi::kRmaTargetDense) && type_blocks(x.target_count, x.target_type, blocks))
    ev.target_blocks = static_cast<std::uint32_t>(blocks.size());
  const std::size_t tail = blocks.size() * sizeof(vcx::mpi::RmaBlock);
  auto* p = static_cast<std::uint8_t*>(rt.begin(x.call, sizeof ev + tail, false));
  if (!p) return;
  std::memcpy(p, &ev, sizeof ev);
  if (tail) std::memcpy(p + sizeof ev, blocks.data(), tail);
  rt.commit();
  if (client().local_accesses()) {
    if (ev.flags & vcx::mpi::kRmaOriginDense)
      expose_buffer(x.win, x.target_rank, x.origin, ev.origin_bytes);
    if (ev.flags & vcx::mpi::kRmaResultDense)
      expose_buffer(x.win, x.target_rank, x.result, ev.result_bytes);
  }
}

}  // namespace

extern "C" {

// ---- windows ----

int MPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                   MPI_Win* win) {
  const int rc = PMPI_Win_create(base, size, disp_unit, info, comm, win);
  if (rc == MPI_SUCCESS)
    report_window(Call::Win_create, comm, *win, base, size, disp_unit, VCX_CALLER());
  return rc;
}
#if MPI_VERSION >= 4
int MPI_Win_create_c(void* base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                     MPI_Win* win) {
  const int rc = PMPI_Win_create_c(base, size, disp_unit, info, comm, win);
  if (rc == MPI_SUCCESS)
    report_window(Call::Win_create_c, comm, *win, base, size, disp_unit,
                  VCX_CALLER());
  return rc;
}
#endif  // MPI_VERSION >= 4
int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                     MPI_Win* win) {
  const int rc = PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win);
  if (rc == MPI_SUCCESS)
    report_window(Call::Win_allocate, comm, *win, *static_cast<void**>(baseptr), size,
                  disp_unit, VCX_CALLER());
  return rc;
}
#if MPI_VERSION >= 4
int MPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                       void* baseptr, MPI_Win* win) {
  const int rc = PMPI_Win_allocate_c(size, disp_unit, info, comm, baseptr, win);
  if (rc == MPI_SUCCESS)
    report_window(Call::Win_allocate_c, comm, *win, *static_cast<void**>(baseptr), size,
                  disp_unit, VCX_CALLER());
  return rc;
}
#endif  // MPI_VERSION >= 4
int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                            void* baseptr, MPI_Win* win) {
  const int rc = PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win);
  if (rc == MPI_SUCCESS)
    report_window(Call::Win_allocate_shared, comm, *win, *static_cast<void**>(baseptr), size,
                  disp_unit, VCX_CALLER());
  return rc;
}
#if MPI_VERSION >= 4
int MPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                              void* baseptr, MPI_Win* win) {
  const int rc = PMPI_Win_allocate_shared_c(size, disp_unit, info, comm, baseptr, win);
  if (rc == MPI_SUCCESS)
    report_window(Call::Win_allocate_shared_c, comm, *win, *static_cast<void**>(baseptr), size,
                  disp_unit, VCX_CALLER());
  return rc;
}
#endif  // MPI_VERSION >= 4
int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  const int rc = PMPI_Win_create_dynamic(info, comm, win);
  if (rc == MPI_SUCCESS)
    report_window(Call::Win_create_dynamic, comm, *win, nullptr, 0, 1, VCX_CALLER());
  return rc;
}

int MPI_Win_free(MPI_Win* win) {
  Runtime& rt = runtime();
  // A later window may get the same handle: its locks are not these.
  if (vcx::channel::LeaseTable* leases = rt.leases())
    vcx::channel::lease_drop(*leases, window_handle(*win));
  const std::uint64_t ticket = rt.active() ? push_win(Call::Win_free, *win, 0, 0, true,
                                                      VCX_CALLER()) : 0;
  const int rc = PMPI_Win_free(win);
  rt.wait(ticket);
  return rc;
}

// ---- active target ----

int MPI_Win_fence(int assert, MPI_Win win) {
  Runtime& rt = runtime();
  const std::uint64_t ticket = rt.active() ? push_win(Call::Win_fence, win, 0, assert, true,
                                                      VCX_CALLER()) : 0;
  const int rc = PMPI_Win_fence(assert, win);
  rt.wait(ticket);
  return rc;
}

int MPI_Win_post(MPI_Group group, int assert, MPI_Win win) {
  if (runtime().active()) push_win_group(Call::Win_post, win, group, false);
  const int rc = PMPI_Win_post(group, assert, win);
  runtime().call_returned();
  return rc;
}

int MPI_Win_start(MPI_Group group, int assert, MPI_Win win) {
  Runtime& rt = runtime();
  const std::uint64_t ticket = rt.active() ? push_win_group(Call::Win_start, win, group, true) : 0;
  const int rc = PMPI_Win_start(group, assert, win);
  rt.wait(ticket);
  return rc;
}

int MPI_Win_complete(MPI_Win win) {
  if (runtime().active()) push_win(Call::Win_complete, win, 0, 0, false,
                                   VCX_CALLER());
  const int rc = PMPI_Win_complete(win);
  runtime().call_returned();
  return rc;
}

int MPI_Win_wait(MPI_Win win) {
  const vcx::intercept::CallEntry entered;  // the event is sent after the call
  Runtime& rt = runtime();
  if (!rt.active()) return PMPI_Win_wait(win);
  const int rc = rt.yields()
                     ? test_yielding([&](int* flag) { return PMPI_Win_test(win, flag); })
                     : PMPI_Win_wait(win);
  if (rc == MPI_SUCCESS) rt.wait(push_win(Call::Win_wait, win, 0, 1, true,
                                          VCX_CALLER()));
  return rc;
}

int MPI_Win_test(MPI_Win win, int* flag) {
  const vcx::intercept::CallEntry entered;  // the event is sent after the call
  Runtime& rt = runtime();
  if (!rt.active()) return PMPI_Win_test(win, flag);
  const int rc = PMPI_Win_test(win, flag);
  if (rc == MPI_SUCCESS && *flag) rt.wait(push_win(Call::Win_test, win, 0, 1, true,
                                                   VCX_CALLER()));
  return rc;
}

// ---- passive target ----

// MPI_PROC_NULL is a valid lock target that locks nothing: no event, not clocked.
//
// With MPI_MODE_NOCHECK MPI acquires no lock (the program asserts that no
// conflicting lock is held or requested meanwhile; OpenCoarrays' event wait
// relies on MPICH not enforcing that): there is no order to impose, and
// waiting for a grant would make other ranks' real locks wait behind a
// holding MPI does not have. The call is only reported.
int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win) {
  Runtime& rt = runtime();
  if (rt.active() && rank != MPI_PROC_NULL) {
    vcx::mpi::WinEvent ev{};
    ev.win = window_handle(win);
    ev.rank = rank;
    ev.arg = lock_type == MPI_LOCK_SHARED ? vcx::mpi::kLockShared : vcx::mpi::kLockExclusive;
    vcx::channel::LeaseTable* leases = rt.leases();
    if (assert & MPI_MODE_NOCHECK) {
      ev.arg |= vcx::mpi::kLockNoCheck;
      rt.push(Call::Win_lock, ev, false);
    } else if (leases && vcx::channel::lease_acquire(*leases, ev.win,
                                                     static_cast<std::uint32_t>(rank),
                                                     lease_kind(lock_type)) >= 0) {
      ev.arg |= vcx::mpi::kLockLeased;
      rt.wait(rt.push(Call::Win_lock, ev, true));
    } else if (void* p = rt.begin_always_answered(Call::Win_lock, sizeof ev)) {
      std::memcpy(p, &ev, sizeof ev);
      rt.wait_always(rt.commit());
    }
  }
  const int rc = PMPI_Win_lock(lock_type, rank, assert, win);
  if (rank != MPI_PROC_NULL) rt.call_returned();  // its event was sent
  return rc;
}

int MPI_Win_unlock(int rank, MPI_Win win) {
  const vcx::intercept::CallEntry entered;  // the event is sent after the call
  const int rc = PMPI_Win_unlock(rank, win);
  Runtime& rt = runtime();
  if (rc != MPI_SUCCESS || rank == MPI_PROC_NULL || !rt.active()) return rc;
  int arg = 0;
  // Released under a lease: it goes on, unless the tool recalled it.
  vcx::channel::LeaseTable* leases = rt.leases();
  if (const int slot = leases ? vcx::channel::lease_held(*leases, window_handle(win),
                                                         static_cast<std::uint32_t>(rank))
                              : -1;
      slot >= 0) {
    arg = vcx::mpi::kLockLeased;
    if (!vcx::channel::lease_release(*leases, slot)) arg |= vcx::mpi::kLockLeaseEnded;
  }
  push_win(Call::Win_unlock, win, rank, arg, false, VCX_CALLER());
  return rc;
}

int MPI_Win_lock_all(int assert, MPI_Win win) {
  Runtime& rt = runtime();
  if (rt.active()) {
    vcx::mpi::WinEvent ev{};
    ev.win = window_handle(win);
    if (assert & MPI_MODE_NOCHECK) {
      ev.arg = vcx::mpi::kLockNoCheck;
      rt.push(Call::Win_lock_all, ev, false);
    } else if (void* p = rt.begin_always_answered(Call::Win_lock_all, sizeof ev)) {
      std::memcpy(p, &ev, sizeof ev);
      rt.wait_always(rt.commit());
    }
  }
  const int rc = PMPI_Win_lock_all(assert, win);
  rt.call_returned();
  return rc;
}

int MPI_Win_unlock_all(MPI_Win win) {
  const vcx::intercept::CallEntry entered;  // the event is sent after the call
  const int rc = PMPI_Win_unlock_all(win);
  if (rc == MPI_SUCCESS && runtime().active()) push_win(Call::Win_unlock_all, win, 0, 0, false,
                                                        VCX_CALLER());
  return rc;
}

// ---- data calls ----
// Each records its accesses with the caller's return address: the line the
// race analysis reports. Request-based forms record once the request exists.
int MPI_Put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int
    target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
    {
  record(Access{.call = Call::Put, .kind = RmaKind::Put, .origin = origin_addr, .origin_count =
         origin_count, .origin_type = origin_datatype, .target_rank = target_rank, .target_disp =
         target_disp, .target_count = target_count, .target_type = target_datatype, .win = win, .pc
         = VCX_CALLER()});
  return PMPI_Put(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
    target_count, target_datatype, win);
}
#if MPI_VERSION >= 4
int MPI_Put_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int
    target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win
    win) {
  record(Access{.call = Call::Put_c, .kind = RmaKind::Put, .origin = origin_addr, .origin_count =
         origin_count, .origin_type = origin_datatype, .target_rank = target_rank, .target_disp =
         target_disp, .target_count = target_count, .target_type = target_datatype, .win = win, .pc
         = VCX_CALLER()});
  return PMPI_Put_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
    target_count, target_datatype, win);
}
#endif  // MPI_VERSION >= 4
int MPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  record(Access{.call = Call::Get, .kind = RmaKind::Get, .result = origin_addr, .result_count =
         origin_count, .result_type = origin_datatype, .target_rank = target_rank, .target_disp =
         target_disp, .target_count = target_count, .target_type = target_datatype, .win = win, .pc
         = VCX_CALLER()});
  return PMPI_Get(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
    target_count, target_datatype, win);
}
#if MPI_VERSION >= 4
int MPI_Get_c(void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int
    target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win
    win) {
  record(Access{.call = Call::Get_c, .kind = RmaKind::Get, .result = origin_addr, .result_count =
         origin_count, .result_type = origin_datatype, .target_rank = target_rank, .target_disp =
         target_disp, .target_count = target_count, .target_type = target_datatype, .win = win, .pc
         = VCX_CALLER()});
  return PMPI_Get_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
    target_count, target_datatype, win);
}
#endif  // MPI_VERSION >= 4
int MPI_Accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int
    target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
    MPI_Win win) {
  record(Access{.call = Call::Accumulate, .kind = RmaKind::Accumulate, .origin = origin_addr,
         .origin_count = origin_count, .origin_type = origin_datatype, .target_rank = target_rank,
         .target_disp = target_disp, .target_count = target_count, .target_type = target_datatype,
         .op = op, .win = win, .pc = VCX_CALLER()});
  return PMPI_Accumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
    target_count, target_datatype, op, win);
}
#if MPI_VERSION >= 4
int MPI_Accumulate_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
    int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype,
    MPI_Op op, MPI_Win win) {
  record(Access{.call = Call::Accumulate_c, .kind = RmaKind::Accumulate, .origin = origin_addr,
         .origin_count = origin_count, .origin_type = origin_datatype, .target_rank = target_rank,
         .target_disp = target_disp, .target_count = target_count, .target_type = target_datatype,
         .op = op, .win = win, .pc = VCX_CALLER()});
  return PMPI_Accumulate_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
    target_count, target_datatype, op, win);
}
#endif  // MPI_VERSION >= 4
int MPI_Get_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
    void* result_addr, int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint
    target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  record(Access{.call = Call::Get_accumulate, .kind = RmaKind::GetAccumulate, .origin = origin_addr,
         .origin_count = origin_count, .origin_type = origin_datatype, .result = result_addr,
         .result_count = result_count, .result_type = result_datatype, .target_rank = target_rank,
         .target_disp = target_disp, .target_count = target_count, .target_type = target_datatype,
         .op = op, .win = win, .pc = VCX_CALLER()});
  return PMPI_Get_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
    result_datatype, target_rank, target_disp, target_count, target_datatype, op, win);
}
#if MPI_VERSION >= 4
int MPI_Get_accumulate_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype
    origin_datatype, void* result_addr, MPI_Count result_count, MPI_Datatype result_datatype, int
    target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op
    op, MPI_Win win) {
  record(Access{.call = Call::Get_accumulate_c, .kind = RmaKind::GetAccumulate, .origin =
         origin_addr, .origin_count = origin_count, .origin_type = origin_datatype, .result =
         result_addr, .result_count = result_count, .result_type = result_datatype, .target_rank =
         target_rank, .target_disp = target_disp, .target_count = target_count, .target_type =
         target_datatype, .op = op, .win = win, .pc = VCX_CALLER()});
  return PMPI_Get_accumulate_c(origin_addr, origin_count, origin_datatype, result_addr,
    result_count, result_datatype, target_rank, target_disp, target_count, target_datatype, op,
    win);
}
#endif  // MPI_VERSION >= 4
int MPI_Rput(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int
    target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
    MPI_Request* request) {
  const int rc = PMPI_Rput(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
    target_count, target_datatype, win, request);
  if (rc == MPI_SUCCESS)
    record(Access{.call = Call::Rput, .kind = RmaKind::Put, .origin = origin_addr, .origin_count =
           origin_count, .origin_type = origin_datatype, .target_rank = target_rank, .target_disp =
           target_disp, .target_count = target_count, .target_type = target_datatype, .win = win,
           .request = request, .pc = VCX_CALLER()});
  return rc;
}
#if MPI_VERSION >= 4
int MPI_Rput_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int
    target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win
    win, MPI_Request* request) {
  const int rc = PMPI_Rput_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
    target_count, target_datatype, win, request);
  if (rc == MPI_SUCCESS)
    record(Access{.call = Call::Rput_c, .kind = RmaKind::Put, .origin = origin_addr, .origin_count =
           origin_count, .origin_type = origin_datatype, .target_rank = target_rank, .target_disp =
           target_disp, .target_count = target_count, .target_type = target_datatype, .win = win,
           .request = request, .pc = VCX_CALLER()});
  return rc;
}
#endif  // MPI_VERSION >= 4
int MPI_Rget(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request*
    request) {
  const int rc = PMPI_Rget(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
    target_count, target_datatype, win, request);
  if (rc == MPI_SUCCESS)
    record(Access{.call = Call::Rget, .kind = RmaKind::Get, .result = origin_addr, .result_count =
           origin_count, .result_type = origin_datatype, .target_rank = target_rank, .target_disp =
           target_disp, .target_count = target_count, .target_type = target_datatype, .win = win,
           .request = request, .pc = VCX_CALLER()});
  return rc;
}
#if MPI_VERSION >= 4
int MPI_Rget_c(void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int
    target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win
    win, MPI_Request* request) {
  const int rc = PMPI_Rget_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
    target_count, target_datatype, win, request);
  if (rc == MPI_SUCCESS)
    record(Access{.call = Call::Rget_c, .kind = RmaKind::Get, .result = origin_addr, .result_count =
           origin_count, .result_type = origin_datatype, .target_rank = target_rank, .target_disp =
           target_disp, .target_count = target_count, .target_type = target_datatype, .win = win,
           .request = request, .pc = VCX_CALLER()});
  return rc;
}
#endif  // MPI_VERSION >= 4
int MPI_Raccumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int
    target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
    MPI_Win win, MPI_Request* request) {
  const int rc = PMPI_Raccumulate(origin_addr, origin_count, origin_datatype, target_rank,
    target_disp, target_count, target_datatype, op, win, request);
  if (rc == MPI_SUCCESS)
    record(Access{.call = Call::Raccumulate, .kind = RmaKind::Accumulate, .origin = origin_addr,
           .origin_count = origin_count, .origin_type = origin_datatype, .target_rank = target_rank,
           .target_disp = target_disp, .target_count = target_count, .target_type = target_datatype,
           .op = op, .win = win, .request = request, .pc = VCX_CALLER()});
  return rc;
}
#if MPI_VERSION >= 4
int MPI_Raccumulate_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
    int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype,
    MPI_Op op, MPI_Win win, MPI_Request* request) {
  const int rc = PMPI_Raccumulate_c(origin_addr, origin_count, origin_datatype, target_rank,
    target_disp, target_count, target_datatype, op, win, request);
  if (rc == MPI_SUCCESS)
    record(Access{.call = Call::Raccumulate_c, .kind = RmaKind::Accumulate, .origin = origin_addr,
           .origin_count = origin_count, .origin_type = origin_datatype, .target_rank = target_rank,
           .target_disp = target_disp, .target_count = target_count, .target_type = target_datatype,
           .op = op, .win = win, .request = request, .pc = VCX_CALLER()});
  return rc;
}
#endif  // MPI_VERSION >= 4
int MPI_Rget_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
    void* result_addr, int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint
    target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
    MPI_Request* request) {
  const int rc = PMPI_Rget_accumulate(origin_addr, origin_count, origin_datatype, result_addr,
    result_count, result_datatype, target_rank, target_disp, target_count, target_datatype, op, win,
    request);
  if (rc == MPI_SUCCESS)
    record(Access{.call = Call::Rget_accumulate, .kind = RmaKind::GetAccumulate, .origin =
           origin_addr, .origin_count = origin_count, .origin_type = origin_datatype, .result =
           result_addr, .result_count = result_count, .result_type = result_datatype, .target_rank =
           target_rank, .target_disp = target_disp, .target_count = target_count, .target_type =
           target_datatype, .op = op, .win = win, .request = request, .pc =
           VCX_CALLER()});
  return rc;
}
#if MPI_VERSION >= 4
int MPI_Rget_accumulate_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype
    origin_datatype, void* result_addr, MPI_Count result_count, MPI_Datatype result_datatype, int
    target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op
    op, MPI_Win win, MPI_Request* request) {
  const int rc = PMPI_Rget_accumulate_c(origin_addr, origin_count, origin_datatype, result_addr,
    result_count, result_datatype, target_rank, target_disp, target_count, target_datatype, op, win,
    request);
  if (rc == MPI_SUCCESS)
    record(Access{.call = Call::Rget_accumulate_c, .kind = RmaKind::GetAccumulate, .origin =
           origin_addr, .origin_count = origin_count, .origin_type = origin_datatype, .result =
           result_addr, .result_count = result_count, .result_type = result_datatype, .target_rank =
           target_rank, .target_disp = target_disp, .target_count = target_count, .target_type =
           target_datatype, .op = op, .win = win, .request = request, .pc =
           VCX_CALLER()});
  return rc;
}
#endif  // MPI_VERSION >= 4
int MPI_Fetch_and_op(const void* origin_addr, void* result_addr, MPI_Datatype datatype,
                     int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  record(Access{.call = Call::Fetch_and_op, .kind = RmaKind::FetchAndOp, .origin = origin_addr,
                .origin_count = 1, .origin_type = datatype, .result = result_addr,
                .result_count = 1, .result_type = datatype, .target_rank = target_rank,
                .target_disp = target_disp, .target_count = 1, .target_type = datatype, .op = op,
                .win = win, .pc = VCX_CALLER()});
  return PMPI_Fetch_and_op(origin_addr, result_addr, datatype, target_rank, target_disp, op, win);
}
// The compare buffer is read like the origin buffer; only the origin
// buffer is recorded.
int MPI_Compare_and_swap(const void* origin_addr, const void* compare_addr, void* result_addr,
                         MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                         MPI_Win win) {
  record(Access{.call = Call::Compare_and_swap, .kind = RmaKind::CompareAndSwap,
                .origin = origin_addr, .origin_count = 1, .origin_type = datatype,
                .result = result_addr, .result_count = 1, .result_type = datatype,
                .target_rank = target_rank, .target_disp = target_disp, .target_count = 1,
                .target_type = datatype, .win = win, .pc = VCX_CALLER()});
  return PMPI_Compare_and_swap(origin_addr, compare_addr, result_addr, datatype, target_rank,
                               target_disp, win);
}

// ---- completion without synchronisation: flushes; memory of dynamic windows ----

int MPI_Win_flush(int rank, MPI_Win win) {
  const vcx::intercept::CallEntry entered;  // the event is sent after the call
  const int rc = PMPI_Win_flush(rank, win);
  if (rc == MPI_SUCCESS && runtime().active()) push_win(Call::Win_flush, win, rank, 0, false,
                                                        VCX_CALLER());
  return rc;
}
int MPI_Win_flush_all(MPI_Win win) {
  const vcx::intercept::CallEntry entered;  // the event is sent after the call
  const int rc = PMPI_Win_flush_all(win);
  if (rc == MPI_SUCCESS && runtime().active()) push_win(Call::Win_flush_all, win, 0, 0, false,
                                                        VCX_CALLER());
  return rc;
}
int MPI_Win_flush_local(int rank, MPI_Win win) {
  const vcx::intercept::CallEntry entered;  // the event is sent after the call
  const int rc = PMPI_Win_flush_local(rank, win);
  if (rc == MPI_SUCCESS && runtime().active())
    push_win(Call::Win_flush_local, win, rank, 0, false, VCX_CALLER());
  return rc;
}
int MPI_Win_flush_local_all(MPI_Win win) {
  const vcx::intercept::CallEntry entered;  // the event is sent after the call
  const int rc = PMPI_Win_flush_local_all(win);
  if (rc == MPI_SUCCESS && runtime().active())
    push_win(Call::Win_flush_local_all, win, 0, 0, false, VCX_CALLER());
  return rc;
}

int MPI_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
  const int rc = PMPI_Win_attach(win, base, size);
  Runtime& rt = runtime();
  if (rc == MPI_SUCCESS && rt.active()) {
    rt.push(Call::Win_attach,
            vcx::mpi::WinAttachEvent{window_handle(win), reinterpret_cast<std::uint64_t>(base),
                                     static_cast<std::uint64_t>(size),
                                     reinterpret_cast<std::uint64_t>(VCX_CALLER())},
            false);
    // Named by address, like the displacements of the window's accesses.
    expose_memory(win, base, static_cast<std::uint64_t>(size), 0, rt.world_rank());
  }
  return rc;
}
int MPI_Win_detach(MPI_Win win, const void* base) {
  const int rc = PMPI_Win_detach(win, base);
  Runtime& rt = runtime();
  const std::uint64_t key = window_handle(win);
  if (rc == MPI_SUCCESS)
    client().unexpose_if([&](const Exposure& e) {
      return e.model == vcx::Model::Mpi && e.kind == LocalAccessKind::Memory && e.key == key &&
             e.lo == reinterpret_cast<std::uintptr_t>(base);
    });
  if (rc == MPI_SUCCESS && rt.active())
    rt.push(Call::Win_detach,
            vcx::mpi::WinAttachEvent{window_handle(win), reinterpret_cast<std::uint64_t>(base), 0,
                                     reinterpret_cast<std::uint64_t>(VCX_CALLER())},
            false);
  return rc;
}

}  // extern "C"
