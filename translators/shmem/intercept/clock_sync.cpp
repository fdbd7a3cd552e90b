#include "clock_sync.h"

#include <pshmem.h>
#include <shmem.h>

#include <cstdint>

#include "vcx/intercept/call_timing.h"

namespace vcx::shmem_intercept {
namespace {

constexpr int kRounds = 5;

// Symmetric: PE 0 reads a PE's round number in ping[pe]; a PE reads PE 0's
// answer (its clock, then the round number) in pong_time and pong_round.
struct SyncArea {
  long pong_time;
  long pong_round;
  int agreed;
  int flags[1];  // n_pes entries: whether each PE measures
};

SyncArea* g_area = nullptr;
long* g_ping = nullptr;
intercept::ChannelClient* g_client = nullptr;

void measure(unsigned phase) {
  const int me = pshmem_my_pe(), n = pshmem_n_pes();
  if (me == 0) {
    for (int pe = 1; pe < n; ++pe)
      for (long k = 1; k <= kRounds; ++k) {
        pshmem_long_wait_until(&g_ping[pe], SHMEM_CMP_GE, k + phase * kRounds);
        const auto now = static_cast<long>(intercept::trace_clock_ns());
        pshmem_long_p(&g_area->pong_time, now, pe);
        pshmem_fence();  // the time arrives before the round number
        pshmem_long_p(&g_area->pong_round, k + phase * kRounds, pe);
        pshmem_quiet();
      }
    g_client->send_clock_sync(ClockSyncEvent{phase, 0, 0, intercept::trace_clock_ns(), 0});
    return;
  }
  g_client->send_clock_sync(intercept::measure_clock_offset(phase, kRounds, [&](int round) {
    const long k = round + 1 + static_cast<long>(phase) * kRounds;
    pshmem_long_p(&g_ping[me], k, 0);
    pshmem_quiet();
    pshmem_long_wait_until(&g_area->pong_round, SHMEM_CMP_GE, k);
    return static_cast<std::uint64_t>(g_area->pong_time);
  }));
}

}  // namespace

void clock_sync_start(intercept::ChannelClient& client) {
  const int me = pshmem_my_pe(), n = pshmem_n_pes();
  auto* area = static_cast<SyncArea*>(pshmem_calloc(1, sizeof(SyncArea) + n * sizeof(int)));
  auto* ping = static_cast<long*>(pshmem_calloc(static_cast<std::size_t>(n), sizeof(long)));
  if (!area || !ping) return;  // every PE fails alike: the allocation is collective
  // Whether every PE measures: each tells PE 0, which tells everyone.
  pshmem_int_p(&area->flags[me], client.active() && client.timed() ? 1 : 0, 0);
  pshmem_barrier_all();
  if (me == 0) {
    int all = 1;
    for (int pe = 0; pe < n; ++pe) all = all && area->flags[pe];
    for (int pe = 0; pe < n; ++pe) pshmem_int_p(&area->agreed, all, pe);
  }
  pshmem_barrier_all();
  if (!area->agreed) {
    pshmem_free(ping);
    pshmem_free(area);
    return;
  }
  g_area = area;
  g_ping = ping;
  g_client = &client;
  measure(0);
}

void clock_sync_end() {
  if (!g_area) return;
  measure(1);
  pshmem_barrier_all();  // nobody writes into the areas any more
  pshmem_free(g_ping);
  pshmem_free(g_area);
  g_area = nullptr;
  g_ping = nullptr;
}

}  // namespace vcx::shmem_intercept
