/* Uses every annotation of vcx/annotate.h once per rank and links nothing
 * but MPI: tests/integration/annotate_native.sh builds it with mpicc.mpich
 * alone, runs it natively and under vcx-run. Needs 2 ranks or more. */
#include <stdio.h>

#include "vcx/annotate.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  vcx_annotate_tick();
  /* Ring on queue 5, generic and MPI forms. */
  vcx_annotate_process_signal((me + 1) % n, 5);
  vcx_annotate_process_wait((me + n - 1) % n, 5);
  vcx_annotate_mpi_process_signal((me + 1) % n, MPI_COMM_WORLD, 6);
  vcx_annotate_mpi_process_wait((me + n - 1) % n, MPI_COMM_WORLD, 6);
  /* Deposit, then let the next rank fetch after a message says so. */
  int token = 0;
  if (me == 0) {
    vcx_annotate_resource_signal(42, n - 1);
    MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  } else if (me == 1) {
    MPI_Recv(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    vcx_annotate_mpi_resource_wait(42, n - 1, MPI_COMM_WORLD);
  }
  vcx_annotate_mpi_resource_signal(43, 0, MPI_COMM_WORLD);
  vcx_annotate_resource_wait(44, 0);
  MPI_Pcontrol(1); /* an ordinary level still reaches MPI */
  printf("annotate_native rank %d ok\n", me);
  MPI_Finalize();
  return 0;
}
