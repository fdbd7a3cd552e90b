// The calls a PE may wait in for other PEs, marked in the blocked-call slot
// (vcx/channel/blocked_call.h) for the deadlock analysis: the collectives,
// wait_until and wait, shmem_set_lock. The payload is the event the call
// reports once it returned, its outcome not known yet.
#include "report.h"

namespace vcx::shmem_intercept {
namespace {

template <class T>
bool enter(Call call, const T& payload, void* pc) {
  runtime().client().enter_blocked(Model::Shmem, static_cast<std::uint16_t>(call),
                                   reinterpret_cast<std::uint64_t>(pc), &payload, sizeof(T));
  return true;
}

shmem::Compare compare_of(int cmp) {
  using shmem::Compare;
  switch (cmp) {
    case SHMEM_CMP_EQ: return Compare::Eq;
    case SHMEM_CMP_NE: return Compare::Ne;
    case SHMEM_CMP_GT: return Compare::Gt;
    case SHMEM_CMP_LE: return Compare::Le;
    case SHMEM_CMP_LT: return Compare::Lt;
    case SHMEM_CMP_GE: return Compare::Ge;
    default: return Compare::Other;
  }
}

bool wanted(const Nesting& nesting) { return nesting.outermost() && runtime().active(); }

}  // namespace

bool enter_blocked_collective(const Nesting& nesting, Call call, int pe_start, int log_stride,
                              int pe_size, int root, void* pc) {
  if (!wanted(nesting)) return false;
  return enter(call, shmem::CollectiveEvent{pe_start, log_stride, pe_size, root}, pc);
}

bool enter_blocked_world_collective(const Nesting& nesting, Call call, void* pc) {
  if (!wanted(nesting)) return false;
  return enter(call, shmem::CollectiveEvent{0, 0, pshmem_n_pes(), -1}, pc);
}

bool enter_blocked_flag_wait(const Nesting& nesting, Call call, const volatile void* addr,
                             int cmp, std::uint64_t cmp_value, std::size_t width, bool is_signed,
                             void* pc) {
  if (!wanted(nesting)) return false;
  shmem::BlockedFlagWait ev{};
  ev.addr = symmetric_address(addr);
  ev.cmp_value = cmp_value;
  ev.compare = compare_of(cmp);
  ev.width = static_cast<std::uint8_t>(width);
  ev.is_signed = is_signed ? 1 : 0;
  return enter(call, ev, pc);
}

bool enter_blocked_lock(const Nesting& nesting, Call call, const volatile long* lock, void* pc) {
  if (!wanted(nesting)) return false;
  shmem::LockEvent ev{};
  ev.lock = symmetric_address(lock);
  ev.local_addr = reinterpret_cast<std::uint64_t>(lock);
  return enter(call, ev, pc);
}

void leave_blocked(bool entered) {
  if (entered) runtime().client().leave_blocked();
}

}  // namespace vcx::shmem_intercept
