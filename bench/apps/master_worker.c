/* Master/worker: rank 0 hands out tasks to whichever worker answers first
 * (MPI_Recv from MPI_ANY_SOURCE); a worker computes its task (a fixed
 * amount of arithmetic) and sends the result back, until the master sends
 * a stop. With one rank the master computes every task itself. Reports the
 * time to finish all tasks and checks the sum of the results. */
#include "../micro/bench_util.h"

enum { kTagTask = 1, kTagResult = 2, kTagStop = 3, kWork = 20000 };

static double compute(long task) {
  double x = (double)task, s = 0.0;
  for (int i = 0; i < kWork; ++i) {
    x = x * 0.999999 + 1.0;
    s += x * 1e-9;
  }
  return s;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  bench_init(argc, argv);
  const int rank = bench_rank(), size = bench_size();
  const long tasks = bench_iters(1000, 10);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  double total = 0.0;
  if (rank == 0) {
    long next = 0, done = 0;
    if (size == 1) {
      for (; next < tasks; ++next) total += compute(next);
    } else {
      /* Two tasks in flight per worker, so workers never idle on a round trip. */
      for (int w = 1; w < size; ++w)
        for (int k = 0; k < 2; ++k) {
          if (next < tasks) {
            MPI_Send(&next, 1, MPI_LONG, w, kTagTask, MPI_COMM_WORLD);
            ++next;
          }
        }
      while (done < tasks) {
        double result;
        MPI_Status st;
        MPI_Recv(&result, 1, MPI_DOUBLE, MPI_ANY_SOURCE, kTagResult, MPI_COMM_WORLD, &st);
        total += result;
        ++done;
        if (next < tasks) {
          MPI_Send(&next, 1, MPI_LONG, st.MPI_SOURCE, kTagTask, MPI_COMM_WORLD);
          ++next;
        }
      }
      for (int w = 1; w < size; ++w) MPI_Send(NULL, 0, MPI_BYTE, w, kTagStop, MPI_COMM_WORLD);
    }
  } else {
    for (;;) {
      long task;
      MPI_Status st;
      MPI_Recv(&task, 1, MPI_LONG, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      if (st.MPI_TAG == kTagStop) break;
      const double result = compute(task);
      MPI_Send(&result, 1, MPI_DOUBLE, 0, kTagResult, MPI_COMM_WORLD);
    }
  }
  const double t = bench_max_time(MPI_Wtime() - t0);
  if (rank == 0) {
    double expect = 0.0;
    for (long k = 0; k < tasks; ++k) expect += compute(k);
    /* Results arrive in any order: compare with a tolerance for rounding. */
    if (expect - total > 1e-9 * expect || total - expect > 1e-9 * expect)
      bench_fail("the master's sum of results differs from the tasks' sum");
  }
  bench_result("master_worker", "0", "time", t, "s");
  MPI_Finalize();
  return 0;
}
