// The offsets between the ranks' clocks, for traces of runs across nodes
// (whose clocks have offsets and drift): at the start and at the end of the
// run, each rank measures rank 0's clock against its own with a few
// ping-pongs and tells its tool; `vcx-trace` corrects the times linearly
// between the two before it applies the clock condition. A rank that reads
// rank 0's own clock (the same node) measures nothing and reports a
// measurement of no rounds: its offset is zero.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "vcx/intercept/channel_client.h"

namespace vcx::mpi_intercept {

class ClockSync {
 public:
  // After MPI_Init. Collective: every rank agrees whether to measure (only
  // when the events carry times, which every tool asks alike, but a rank
  // whose tool is missing must not leave the others waiting).
  void start(intercept::ChannelClient& client);
  // Before MPI_Finalize, when start() measured. Collective.
  void stop();

 private:
  void measure(unsigned phase);

  intercept::ChannelClient* client_ = nullptr;
  MPI_Comm comm_ = MPI_COMM_NULL;  // a duplicate of MPI_COMM_WORLD, vcx's own
  int rank_ = 0, size_ = 1;
  std::vector<std::uint64_t> domains_;  // every rank's trace_clock_domain()
};

}  // namespace vcx::mpi_intercept
