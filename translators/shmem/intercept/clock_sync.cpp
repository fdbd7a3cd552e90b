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
  int agreed;    // 0: no PE measures; 1: this PE measures; 2: it reads PE 0's clock
  int flags[1];  // n_pes entries: whether each PE measures
};

SyncArea* g_area = nullptr;
long* g_ping = nullptr;
// On PE 0: every PE's trace_clock_domain(); a PE with PE 0's own takes no
// part in the ping-pongs.
unsigned long long* g_domains = nullptr;
intercept::ChannelClient* g_client = nullptr;

void measure(unsigned phase) {
  const int me = pshmem_my_pe(), n = pshmem_n_pes();
  if (me == 0) {
    for (int pe = 1; pe < n; ++pe)
      for (long k = 1; k <= kRounds && g_domains[pe] != g_domains[0]; ++k) {
        pshmem_long_wait_until(&g_ping[pe], SHMEM_CMP_GE, k + phase * kRounds);
        const auto now = static_cast<long>(intercept::trace_clock_ns());
        pshmem_long_p(&g_area->pong_time, now, pe);
        pshmem_fence();  // the time arrives before the round number
        pshmem_long_p(&g_area->pong_round, k + phase * kRounds, pe);
        pshmem_quiet();
      }
  }
  if (me == 0 || g_area->agreed == 2) {
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
  auto* domains = static_cast<unsigned long long*>(
      pshmem_calloc(static_cast<std::size_t>(n), sizeof(unsigned long long)));
  // Every PE fails alike: the allocation is collective.
  if (!area || !ping || !domains) return;
  // Whether every PE measures, and which PEs read PE 0's clock: PE 0 learns
  // the flags (puts) and the clocks (gets: an 8-byte put was seen to arrive
  // after the barrier with Open MPI), and tells everyone.
  pshmem_int_p(&area->flags[me], client.active() && client.timed() ? 1 : 0, 0);
  domains[me] = intercept::trace_clock_domain(me);
  pshmem_barrier_all();
  if (me == 0) {
    for (int pe = 1; pe < n; ++pe) domains[pe] = pshmem_ulonglong_g(&domains[pe], pe);
    int all = 1;
    for (int pe = 0; pe < n; ++pe) all = all && area->flags[pe];
    for (int pe = 0; pe < n; ++pe)
      pshmem_int_p(&area->agreed, all ? (domains[pe] == domains[0] ? 2 : 1) : 0, pe);
  }
  pshmem_barrier_all();
  if (!area->agreed) {
    pshmem_free(domains);
    pshmem_free(ping);
    pshmem_free(area);
    return;
  }
  g_area = area;
  g_ping = ping;
  g_domains = domains;
  g_client = &client;
  measure(0);
}

void clock_sync_end() {
  if (!g_area) return;
  measure(1);
  pshmem_barrier_all();  // nobody writes into the areas any more
  pshmem_free(g_domains);
  pshmem_free(g_ping);
  pshmem_free(g_area);
  g_area = nullptr;
  g_ping = nullptr;
  g_domains = nullptr;
}

}  // namespace vcx::shmem_intercept
