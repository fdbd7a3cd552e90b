/* Ping-pong latency: ranks 2k and 2k+1 pass a message back and forth
 * (MPI_Send/MPI_Recv) for each size from 8 B to 1 MiB; rank 0 reports the
 * half round trip of its pair. An odd last rank only joins the barriers.
 * Latency-bound code is the worst case for vcx: every receive waits until
 * its tool has the sender's clock. */
#include "bench_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  bench_init(argc, argv);
  const int rank = bench_rank(), size = bench_size();
  if (size < 2) {
    if (rank == 0) fprintf(stderr, "vcx: pingpong needs at least 2 ranks\n");
    MPI_Finalize();
    return 64;
  }
  const int peer = rank ^ 1;
  const int active = peer < size;
  const size_t sizes[] = {8, 64, 512, 4096, 32768, 262144, 1048576};
  const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
  char* buf = bench_alloc(sizes[nsizes - 1]);

  for (int s = 0; s < nsizes; ++s) {
    const size_t bytes = sizes[s];
    /* Fewer round trips for large messages, whose copies dominate. */
    const long base = bytes <= 4096 ? 300 : bytes <= 32768 ? 100 : bytes <= 262144 ? 30 : 10;
    const long iters = bench_iters(base, 5);
    const long warmup = iters / 10 + 1;
    double elapsed = 0.0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (active) {
      for (long i = -warmup; i < iters; ++i) {
        if (i == 0) elapsed = MPI_Wtime();
        if (rank % 2 == 0) {
          MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
          MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        }
      }
      elapsed = MPI_Wtime() - elapsed;
    }
    char param[32];
    snprintf(param, sizeof param, "%zu", bytes);
    bench_result("pingpong", param, "half_rtt", elapsed / iters / 2 * 1e6, "us");
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
