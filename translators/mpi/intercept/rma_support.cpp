// Window memory and data calls as the race analysis sees them: the memory a
// window exposes to the program's own loads and stores, the buffers of
// operations in flight, a new window's report and the record of each data
// call (recorded, not clocked), with the bytes its datatypes touch.
#include "rma_support.h"

#include <algorithm>
#include <cstring>
#include <vector>

using vcx::LocalAccessKind;
using vcx::intercept::Exposure;
using vcx::mpi::Call;
using vcx::mpi::RmaKind;

namespace vcx::mpi_intercept {
namespace {

vcx::intercept::ChannelClient& client() { return vcx::intercept::process_client(); }

// ---- exposed memory, for the program's local loads and stores ----
// (vcx/intercept/local_accesses.h). Window memory is named by the window's
// handle and the offset from its member's base (a dynamic window's: the
// address); buffers of operations in flight by their address, until the
// window synchronisation that completes them.

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

}  // namespace

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

// Recorded, never waited for.
void record_access(const RmaAccess& x) {
  Runtime& rt = runtime();
  if (!rt.active() || x.target.rank == MPI_PROC_NULL) return;
  vcx::mpi::RmaAccessEvent ev{};
  ev.win = window_handle(x.win);
  const bool ignores_origin = x.op == MPI_NO_OP && x.kind != RmaKind::Put;
  if (x.origin.addr && !ignores_origin && x.origin.type != MPI_DATATYPE_NULL) {
    ev.origin_addr = reinterpret_cast<std::uint64_t>(x.origin.addr);
    ev.origin_bytes = type_span(x.origin.count, x.origin.type);
    if (dense(x.origin.type)) ev.flags |= vcx::mpi::kRmaOriginDense;
  }
  if (x.result.addr && x.result.type != MPI_DATATYPE_NULL) {
    ev.result_addr = reinterpret_cast<std::uint64_t>(x.result.addr);
    ev.result_bytes = type_span(x.result.count, x.result.type);
    if (dense(x.result.type)) ev.flags |= vcx::mpi::kRmaResultDense;
  }
  ev.target_disp = x.target.disp;
  ev.target_bytes = type_bytes(x.target.count, x.target.type);
  if (dense(x.target.type)) ev.flags |= vcx::mpi::kRmaTargetDense;
  ev.request = x.request ? rt.new_request_id(*x.request) : 0;
  ev.pc = reinterpret_cast<std::uint64_t>(x.pc);
  ev.target_rank = x.target.rank;
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(x.target.type, &lb, &extent);
  ev.target_extent = static_cast<std::uint32_t>(extent);
  if (x.op != MPI_OP_NULL || x.kind == RmaKind::CompareAndSwap) {
    ev.op = static_cast<std::uint32_t>(handle_bits(x.op));
    const MPI_Datatype basic = basic_of(x.target.type);
    ev.basic_type = static_cast<std::uint32_t>(handle_bits(basic));
    int size = 0;
    if (basic != MPI_DATATYPE_NULL) PMPI_Type_size(basic, &size);
    ev.basic_size = static_cast<std::uint16_t>(size);
    if (x.op == MPI_NO_OP) ev.flags |= vcx::mpi::kRmaNoOp;
  }
  ev.kind = x.kind;
  // A target datatype with gaps: the blocks it touches follow the event.
  thread_local std::vector<vcx::mpi::RmaBlock> blocks;
  blocks.clear();
  if (!(ev.flags & vcx::mpi::kRmaTargetDense) && type_blocks(x.target.count, x.target.type, blocks))
    ev.target_blocks = static_cast<std::uint32_t>(blocks.size());
  const std::size_t tail = blocks.size() * sizeof(vcx::mpi::RmaBlock);
  auto* p = static_cast<std::uint8_t*>(rt.begin(x.call, sizeof ev + tail, false));
  if (!p) return;
  std::memcpy(p, &ev, sizeof ev);
  if (tail) std::memcpy(p + sizeof ev, blocks.data(), tail);
  rt.commit();
  if (client().local_accesses()) {
    if (ev.flags & vcx::mpi::kRmaOriginDense)
      expose_buffer(x.win, x.target.rank, x.origin.addr, ev.origin_bytes);
    if (ev.flags & vcx::mpi::kRmaResultDense)
      expose_buffer(x.win, x.target.rank, x.result.addr, ev.result_bytes);
  }
}

void unexpose_attached(MPI_Win win, const void* base) {
  const std::uint64_t key = window_handle(win);
  client().unexpose_if([&](const Exposure& e) {
    return e.model == vcx::Model::Mpi && e.kind == LocalAccessKind::Memory && e.key == key &&
           e.lo == reinterpret_cast<std::uintptr_t>(base);
  });
}

}  // namespace vcx::mpi_intercept
