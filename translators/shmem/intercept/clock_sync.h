// The offsets between the PEs' clocks, for traces of runs across nodes, as
// the MPI interceptor measures them (translators/mpi/intercept/clock_sync.h):
// at the start and at the end of the run each PE measures PE 0's clock
// against its own with a few ping-pongs of one-sided writes.
#pragma once

#include "vcx/intercept/channel_client.h"

namespace vcx::shmem_intercept {

// After pshmem_init. Collective: every PE agrees whether to measure.
void clock_sync_start(intercept::ChannelClient& client);
// In shmem_finalize, before the runtime stops. Collective.
void clock_sync_end();

}  // namespace vcx::shmem_intercept
