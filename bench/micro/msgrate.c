/* Message rate: ranks 2k send windows of 64 non-blocking 8-byte messages to
 * ranks 2k+1, which post matching receives; each window ends with
 * MPI_Waitall on both sides and a zero-byte acknowledgement. Reports the
 * messages per second of all pairs together. With one rank, the rank sends
 * to itself. Under vcx each MPI_Isend only pushes an event; the waits pay
 * for the clocks. */
#include "bench_util.h"

enum { kWindow = 64 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  bench_init(argc, argv);
  const int rank = bench_rank(), size = bench_size();
  const int solo = size == 1;
  const int peer = solo ? 0 : rank ^ 1;
  const int active = peer < size;
  const int sender = solo || rank % 2 == 0;
  const long windows = bench_iters(200, 3);
  const long warmup = windows / 10 + 1;
  double sbuf[kWindow], rbuf[kWindow];
  MPI_Request req[2 * kWindow];
  MPI_Status st[2 * kWindow]; /* not MPI_STATUSES_IGNORE: GCC warns wrongly about it */
  for (int i = 0; i < kWindow; ++i) sbuf[i] = i;

  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = 0.0;
  if (active) {
    for (long w = -warmup; w < windows; ++w) {
      if (w == 0) t0 = MPI_Wtime();
      int nreq = 0;
      if (!sender || solo)
        for (int i = 0; i < kWindow; ++i)
          MPI_Irecv(&rbuf[i], 1, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD, &req[nreq++]);
      if (sender)
        for (int i = 0; i < kWindow; ++i)
          MPI_Isend(&sbuf[i], 1, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD, &req[nreq++]);
      MPI_Waitall(nreq, req, st);
      if (!solo) {
        if (sender)
          MPI_Recv(NULL, 0, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
          MPI_Send(NULL, 0, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
      }
    }
  }
  const double elapsed = bench_max_time(active ? MPI_Wtime() - t0 : 0.0);
  const int pairs = solo ? 1 : size / 2;
  bench_result("msgrate", "8", "rate", (double)pairs * windows * kWindow / elapsed / 1e6,
               "Mmsg/s");
  MPI_Finalize();
  return 0;
}
