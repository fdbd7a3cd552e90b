/* MPI_Alltoall, 8 B and 4 KiB to every rank. */
#include "collective.h"

static void alltoall(size_t bytes, void* sbuf, void* rbuf) {
  MPI_Alltoall(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  bench_init(argc, argv);
  const size_t sizes[] = {8, 4096};
  bench_collective("alltoall", sizes, 2, 1000, 4096 * (size_t)bench_size(), alltoall);
  MPI_Finalize();
  return 0;
}
