// Notes for the analyses (vcx/analysis.h, docs/analyses.md): the remote
// side of each data call, from the call to its completion.
//
// * Blocking gets, g, iget and fetching atomics have their data when they
//   return: complete at once.
// * Blocking puts, p, iput and atomics without a result return once the
//   source buffer may be reused; the remote write completes at the PE's
//   next shmem_quiet (shmem_ctx_quiet of the same context) or barrier
//   (shmem_barrier_all, shmem_barrier, the symmetric heap calls). So do the
//   _nbi calls. shmem_fence (shmem_ctx_fence) only orders the puts,
//   non-fetching atomics and _nbi puts of its context before the context's
//   later writes, and completes nothing.
// * Atomics of one type are atomic with each other whatever their
//   operation, on the same element; one that only fetches reads.
// Symmetric memory needs no region: every PE names it by the same object
// and offset (SymAddr), and all of it is exposed.
#include <string>
#include <string_view>

#include "shmem_translator.h"

namespace vcx::shmem {
namespace {

std::uint64_t space_of(const SymAddr& a, std::int32_t pe) {
  return hash_combine(hash_combine(hash_combine(0x53594d4d4554ULL, a.object),
                                   static_cast<std::uint64_t>(pe)),
                      0x4d454d4f5259ULL);
}

// The datatype of an atomic, from its name: shmem_[ctx_]TYPE_atomic_OP, or
// the older shmem_TYPE_OP. Atomics on one object are atomic with each other
// only for one type.
std::uint32_t atomic_type_of(std::string_view name) {
  if (name.substr(0, 6) == "shmem_") name.remove_prefix(6);
  if (name.substr(0, 4) == "ctx_") name.remove_prefix(4);
  std::string_view type;
  if (const auto at = name.find("_atomic_"); at != std::string_view::npos)
    type = name.substr(0, at);
  else if (const auto last = name.rfind('_'); last != std::string_view::npos)
    type = name.substr(0, last);
  std::uint64_t h = 0x54595045ULL;
  for (const char c : type) h = hash_combine(h, static_cast<unsigned char>(c));
  return static_cast<std::uint32_t>(h | 1);  // never 0
}

// Atomic reads, writes and read-modify-writes: all one operation class.
constexpr std::uint32_t kAnyAtomic = 1;
// Elements of a strided call described one by one at most.
constexpr std::uint64_t kMaxElements = 256;

}  // namespace

bool ShmemTranslator::notes_wanted() {
  if (notes_wanted_ < 0) notes_wanted_ = host_.notes_wanted() ? 1 : 0;
  return notes_wanted_ == 1;
}

bool ShmemTranslator::completes_data(Call call) const {
  return shmem::completes_data(kCallNames[static_cast<std::size_t>(call)]);
}

void ShmemTranslator::note_access(Call call, const DataEvent& e, CallProgram& out) {
  if (!notes_wanted()) return;
  const DataKind k = e.kind;
  const bool reads = k == DataKind::Get || k == DataKind::GetNbi || k == DataKind::Iget ||
                     k == DataKind::G || k == DataKind::AmoRead;
  const bool atomic = k == DataKind::AmoRead || k == DataKind::AmoWrite || k == DataKind::AmoRmw;
  // Complete when the call returns: it has its data.
  const bool now = k == DataKind::Get || k == DataKind::Iget || k == DataKind::G ||
                   k == DataKind::AmoRead || k == DataKind::AmoRmw;
  AccessNote a{};
  a.space = space_of(e.remote, e.pe);
  a.pc = e.pc;
  a.owner = static_cast<std::uint32_t>(e.pe);
  a.context = e.ctx;
  if (atomic) {
    a.atomic_op = kAnyAtomic;
    a.atomic_type = atomic_type_of(kCallNames[static_cast<std::size_t>(call)]);
    a.atomic_unit = static_cast<std::uint32_t>(e.elem_bytes);
    if (k == DataKind::AmoRead) a.flags |= kAccessAtomicRead;
  }
  a.call = static_cast<std::uint16_t>(call);
  a.mode = reads ? AccessMode::Read : AccessMode::Write;
  a.flags |= kAccessImplicitRegion;
  if (now) a.flags |= kAccessCompleteNow;
  auto add = [&](std::uint64_t offset, std::uint64_t bytes) {
    a.id = ++next_access_id_;
    a.offset = offset;
    a.bytes = bytes;
    out.add_note(NoteKind::Access, a);
    if (!now) open_.push_back(OpenAccess{a.id, e.ctx, !reads});
  };
  // The local buffer of an _nbi call, read or written until the call
  // completes (blocking calls are done with it when they return).
  if ((k == DataKind::PutNbi || k == DataKind::GetNbi) && e.local_addr && e.stride == 1) {
    AccessNote b{};
    b.id = ++next_access_id_;
    b.offset = e.local_addr;
    b.bytes = e.elem_bytes * e.count;
    b.pc = e.pc;
    b.owner = self_.value;
    b.call = a.call;
    b.mode = k == DataKind::PutNbi ? AccessMode::Read : AccessMode::Write;
    if (b.bytes) {
      out.add_note(NoteKind::Access, b);
      open_.push_back(OpenAccess{b.id, e.ctx, false});
    }
  }
  if (e.stride == 1 || e.count <= 1) {
    add(e.remote.offset, e.elem_bytes * e.count);
    return;
  }
  // Strided: one access per element (left out beyond kMaxElements rather
  // than widened, which could invent races).
  if (e.count > kMaxElements) return;
  for (std::uint64_t i = 0; i < e.count; ++i)
    add(e.remote.offset + static_cast<std::uint64_t>(static_cast<std::int64_t>(i) * e.stride *
                                                     static_cast<std::int64_t>(e.elem_bytes)),
        e.elem_bytes);
}

// The program's loads and stores (a build with the vcx compiler wrappers):
// symmetric memory as SymAddr names it, complete at once; _nbi buffers by
// address, like those calls' own accesses to them.
void ShmemTranslator::note_local_accesses(const EventHeader& ev, CallProgram& out) {
  if (!notes_wanted()) return;
  const auto* data = reinterpret_cast<const std::uint8_t*>(&ev + 1);
  const bool ok = out.add_local_accesses(
      {data, ev.payload_size}, static_cast<std::uint16_t>(Call::load),
      static_cast<std::uint16_t>(Call::store), next_access_id_,
      [&](const LocalAccessRecord& r, AccessNote& a) {
        a.offset = r.offset;
        if (r.kind == LocalAccessKind::Memory) {
          a.space = space_of(SymAddr{r.tag, r.offset}, r.owner);
          a.flags |= kAccessImplicitRegion;
        }
        return true;
      });
  if (!ok) host_.fatal("shmem: malformed local access event from PE " + std::to_string(self_.value));
}

void ShmemTranslator::complete_accesses(std::uint64_t ctx, bool every_context, CallProgram& out,
                                        std::uint64_t pc) {
  out.complete_accesses(
      open_, [&](const OpenAccess& a) { return every_context || a.ctx == ctx; }, pc);
}

void ShmemTranslator::note_completion(Call call, const CompletionEvent& e, CallProgram& out) {
  if (!notes_wanted()) return;
  if (shmem::completes_context(kCallNames[static_cast<std::size_t>(call)])) {
    complete_accesses(e.ctx, false, out, e.pc);
    return;
  }
  // shmem_fence and shmem_ctx_fence complete nothing: the context's remote
  // writes in flight (puts, non-fetching atomics, _nbi puts) are delivered
  // before its later writes to the same PE. Non-blocking gets are not
  // ordered, nor are the local buffers of _nbi calls.
  ordered_.clear();
  for (OpenAccess& a : open_)
    if (a.ctx == e.ctx && a.remote_write && !a.ordered) {
      a.ordered = true;
      ordered_.push_back(a.id);
    }
  if (!ordered_.empty())
    out.add_note(NoteKind::Ordered,
                 CompletionNote{static_cast<std::uint32_t>(ordered_.size()), 0, e.pc}, ordered_);
}

// A wait returned on a flag of this PE: the write it saw was delivered.
void ShmemTranslator::note_flag_observed(const FlagWaitEvent& e, CallProgram& out) {
  if (!notes_wanted()) return;
  out.add_note(NoteKind::FlagObserved,
               FlagObservedNote{space_of(e.addr, static_cast<std::int32_t>(self_.value)),
                                e.addr.offset, e.width});
}

}  // namespace vcx::shmem
