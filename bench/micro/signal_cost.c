/* Application-side cost of calls that only push an event to the tool and
 * never wait for it, in a tight loop (ns per call):
 *   tick       vcx_annotate_tick(): a clocked call that only ticks
 *   signal     vcx_annotate_process_signal() to the right neighbour (to
 *              itself with one rank): a clocked signal, as an MPI send's
 *   proc_null  MPI_Send to MPI_PROC_NULL: an event that is not clocked
 * Without vcx the annotations are an empty MPI_Pcontrol. Each loop ends with
 * a barrier. With --stall waits that returns only after the tool has worked
 * off the loop's events; by default nothing waits for the tool, so a burst
 * first sleeps long enough for the tool to have worked off what came
 * before (a tool that shares its rank's core reads at least every 20 ms),
 * and the bursts run before the sustained loops, whose backlog is longer. */
#include <unistd.h>
#include <vcx/annotate.h>

#include "bench_util.h"

static double loop_ns(int kind, long iters, int target) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (long i = 0; i < iters; ++i) {
    switch (kind) {
      case 0: vcx_annotate_tick(); break;
      case 1: vcx_annotate_process_signal(target, 7); break;
      default: MPI_Send(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD); break;
    }
  }
  const double t = MPI_Wtime() - t0;
  MPI_Barrier(MPI_COMM_WORLD);
  return bench_max_time(t) / iters * 1e9;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  bench_init(argc, argv);
  const int target = (bench_rank() + 1) % bench_size();
  /* A burst fits into the channel's ring (4 MiB, about 64 B per event), so
   * it measures the push alone; a sustained loop fills the ring and then
   * runs at the pace the tool consumes events. */
  const long burst = bench_iters(20000, 100);
  const long sustained = bench_iters(500000, 1000);
  const char* names[] = {"tick", "signal", "proc_null"};
  char param[64];
  /* Under vcx the first pass over the ring pays a page fault per page, once
   * per run; a sustained loop first, so that every burst finds it mapped. */
  loop_ns(2, sustained, target);
  sleep(1); /* its backlog: up to a few hundred ms of the tool's time */
  for (int kind = 0; kind < 3; ++kind) {
    loop_ns(kind, burst / 10 + 1, target); /* warm-up */
    usleep(50000);
    snprintf(param, sizeof param, "%s_burst", names[kind]);
    bench_result("signal_cost", param, "per_call", loop_ns(kind, burst, target), "ns");
  }
  for (int kind = 0; kind < 3; ++kind) {
    snprintf(param, sizeof param, "%s_sustained", names[kind]);
    bench_result("signal_cost", param, "per_call", loop_ns(kind, sustained, target), "ns");
  }
  MPI_Finalize();
  return 0;
}
