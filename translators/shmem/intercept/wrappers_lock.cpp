// shmem_set_lock, shmem_test_lock, shmem_clear_lock.
//
// Open MPI decides who gets a lock; vcx learns that order exactly without
// changing it. A release deposits its clock at the lock's deposition and
// waits until the deposition has taken the deposit in (in either
// stall mode) before Open MPI releases the lock; an acquisition, reported
// once Open MPI granted the lock, fetches every deposit so far and waits
// for the answer before the program goes on. So the next holder, which can
// only take the lock after the release, always finds the release's deposit
// in, and no later release can be in before the fetch (it would follow the
// holder's own release). Nothing waits for a lock inside vcx: a
// shmem_test_lock that fails is not delayed, and one that succeeds is
// ordered like a shmem_set_lock.
#include "report.h"

using namespace vcx::shmem_intercept;

namespace {

void report_lock(Call call, volatile long* lock, bool acquired) {
  Runtime& rt = runtime();
  if (!rt.active()) return;
  vcx::shmem::LockEvent ev{};
  ev.lock = symmetric_address(lock);
  ev.local_addr = reinterpret_cast<std::uint64_t>(lock);
  ev.acquired = acquired ? 1 : 0;
  if (call == Call::shmem_test_lock && !acquired)
    rt.push(call, ev, false);  // not clocked: nothing to wait for
  else
    rt.push_and_wait_always(call, ev);
}

}  // namespace

extern "C" {

void shmem_set_lock(volatile long* lock) {
  const Nesting nesting;
  const bool blocked =
      enter_blocked_lock(nesting, Call::shmem_set_lock, lock, __builtin_return_address(0));
  pshmem_set_lock(lock);
  leave_blocked(blocked);
  if (nesting.outermost()) report_lock(Call::shmem_set_lock, lock, true);
}

int shmem_test_lock(volatile long* lock) {
  const Nesting nesting;
  const int rc = pshmem_test_lock(lock);
  if (nesting.outermost()) report_lock(Call::shmem_test_lock, lock, rc == 0);
  return rc;
}

void shmem_clear_lock(volatile long* lock) {
  const Nesting nesting;
  if (nesting.outermost()) report_lock(Call::shmem_clear_lock, lock, false);
  pshmem_clear_lock(lock);
}

}  // extern "C"
