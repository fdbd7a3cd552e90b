#include "clock_sync.h"

#include <cstdint>

#include "vcx/intercept/call_timing.h"

namespace vcx::mpi_intercept {
namespace {

constexpr int kRounds = 5;
constexpr int kTag = 0x7c5;

}  // namespace

void ClockSync::start(intercept::ChannelClient& client) {
  client_ = &client;
  int all = client.active() && client.timed() ? 1 : 0;
  PMPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all) return;
  PMPI_Comm_dup(MPI_COMM_WORLD, &comm_);
  PMPI_Comm_rank(comm_, &rank_);
  PMPI_Comm_size(comm_, &size_);
  domains_.assign(static_cast<std::size_t>(size_), 0);
  std::uint64_t mine = intercept::trace_clock_domain(rank_);
  PMPI_Allgather(&mine, 1, MPI_UINT64_T, domains_.data(), 1, MPI_UINT64_T, comm_);
  measure(0);
}

void ClockSync::stop() {
  if (comm_ == MPI_COMM_NULL) return;
  measure(1);
  PMPI_Comm_free(&comm_);
}

// Rank 0 answers each other rank in turn; a rank sends, rank 0 answers with
// its clock, and the round with the shortest round trip gives the offset:
// rank 0's time minus the middle of the round on this rank's clock. Ranks
// that read rank 0's clock take no part.
void ClockSync::measure(unsigned phase) {
  const auto shares_rank0_clock = [&](int r) { return domains_[r] == domains_[0]; };
  if (rank_ == 0) {
    for (int r = 1; r < size_; ++r) {
      if (shares_rank0_clock(r)) continue;
      for (int k = 0; k < kRounds; ++k) {
        int round = 0;
        PMPI_Recv(&round, 1, MPI_INT, r, kTag, comm_, MPI_STATUS_IGNORE);
        const std::uint64_t now = intercept::trace_clock_ns();
        PMPI_Send(&now, 1, MPI_UINT64_T, r, kTag, comm_);
      }
    }
  }
  if (shares_rank0_clock(rank_)) {
    client_->send_clock_sync(ClockSyncEvent{phase, 0, 0, intercept::trace_clock_ns(), 0});
    return;
  }
  client_->send_clock_sync(intercept::measure_clock_offset(phase, kRounds, [&](int k) {
    PMPI_Send(&k, 1, MPI_INT, 0, kTag, comm_);
    std::uint64_t reference = 0;
    PMPI_Recv(&reference, 1, MPI_UINT64_T, 0, kTag, comm_, MPI_STATUS_IGNORE);
    return reference;
  }));
}

}  // namespace vcx::mpi_intercept
