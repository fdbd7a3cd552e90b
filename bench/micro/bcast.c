/* MPI_Bcast from rank 0, 8 B and 64 KiB. */
#include "collective.h"

static void bcast(size_t bytes, void* sbuf, void* rbuf) {
  (void)rbuf;
  MPI_Bcast(sbuf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  bench_init(argc, argv);
  const size_t sizes[] = {8, 65536};
  bench_collective("bcast", sizes, 2, 1000, 65536, bcast);
  MPI_Finalize();
  return 0;
}
