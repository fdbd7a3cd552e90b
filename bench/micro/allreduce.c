/* MPI_Allreduce (sum of doubles), 8 B and 8 KiB. */
#include "collective.h"

static void allreduce(size_t bytes, void* sbuf, void* rbuf) {
  MPI_Allreduce(sbuf, rbuf, (int)(bytes / sizeof(double)), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  bench_init(argc, argv);
  const size_t sizes[] = {8, 8192};
  bench_collective("allreduce", sizes, 2, 1000, 8192, allreduce);
  MPI_Finalize();
  return 0;
}
