/* 2-D Jacobi stencil on a Cartesian grid of ranks: each iteration exchanges
 * the four halos with MPI_Isend/MPI_Irecv/MPI_Waitall, updates the local
 * block (5-point average) and computes the global residual with
 * MPI_Allreduce. Reports the time of the iterations (the slowest rank's).
 * The local block is fixed (weak scaling), so the work per rank is the
 * same for any number of ranks. */
#include <math.h>

#include "../micro/bench_util.h"

enum { kLocal = 160 }; /* local block edge, without halos */
#define AT(a, i, j) ((a)[(size_t)(i) * (kLocal + 2) + (j)])

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  bench_init(argc, argv);
  const int size = bench_size();
  int dims[2] = {0, 0}, periods[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  int up, down, left, right;
  MPI_Cart_shift(cart, 0, 1, &up, &down);
  MPI_Cart_shift(cart, 1, 1, &left, &right);

  const size_t cells = (size_t)(kLocal + 2) * (kLocal + 2);
  double* u = bench_alloc(cells * sizeof(double));
  double* v = bench_alloc(cells * sizeof(double));
  double* sendcol[2] = {bench_alloc(kLocal * sizeof(double)), bench_alloc(kLocal * sizeof(double))};
  double* recvcol[2] = {bench_alloc(kLocal * sizeof(double)), bench_alloc(kLocal * sizeof(double))};
  for (size_t k = 0; k < cells; ++k) u[k] = v[k] = 0.0;
  /* A hot boundary on the grid's top edge. */
  if (up == MPI_PROC_NULL)
    for (int j = 0; j < kLocal + 2; ++j) AT(u, 0, j) = AT(v, 0, j) = 1.0;

  const long iters = bench_iters(300, 3);
  double residual = 0.0, t0 = 0.0;
  for (long it = -(iters / 10 + 1); it < iters; ++it) {
    if (it == 0) {
      MPI_Barrier(cart);
      t0 = MPI_Wtime();
    }
    MPI_Request req[8];
    MPI_Status st[8]; /* not MPI_STATUSES_IGNORE: GCC warns wrongly about it */
    int n = 0;
    for (int i = 0; i < kLocal; ++i) {
      sendcol[0][i] = AT(u, i + 1, 1);
      sendcol[1][i] = AT(u, i + 1, kLocal);
    }
    MPI_Irecv(&AT(u, 0, 1), kLocal, MPI_DOUBLE, up, 0, cart, &req[n++]);
    MPI_Irecv(&AT(u, kLocal + 1, 1), kLocal, MPI_DOUBLE, down, 1, cart, &req[n++]);
    MPI_Irecv(recvcol[0], kLocal, MPI_DOUBLE, left, 2, cart, &req[n++]);
    MPI_Irecv(recvcol[1], kLocal, MPI_DOUBLE, right, 3, cart, &req[n++]);
    MPI_Isend(&AT(u, 1, 1), kLocal, MPI_DOUBLE, up, 1, cart, &req[n++]);
    MPI_Isend(&AT(u, kLocal, 1), kLocal, MPI_DOUBLE, down, 0, cart, &req[n++]);
    MPI_Isend(sendcol[0], kLocal, MPI_DOUBLE, left, 3, cart, &req[n++]);
    MPI_Isend(sendcol[1], kLocal, MPI_DOUBLE, right, 2, cart, &req[n++]);
    MPI_Waitall(n, req, st);
    if (left != MPI_PROC_NULL)
      for (int i = 0; i < kLocal; ++i) AT(u, i + 1, 0) = recvcol[0][i];
    if (right != MPI_PROC_NULL)
      for (int i = 0; i < kLocal; ++i) AT(u, i + 1, kLocal + 1) = recvcol[1][i];

    double local = 0.0;
    for (int i = 1; i <= kLocal; ++i)
      for (int j = 1; j <= kLocal; ++j) {
        const double nv =
            0.25 * (AT(u, i - 1, j) + AT(u, i + 1, j) + AT(u, i, j - 1) + AT(u, i, j + 1));
        local += (nv - AT(u, i, j)) * (nv - AT(u, i, j));
        AT(v, i, j) = nv;
      }
    double* w = u;
    u = v;
    v = w;
    MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, cart);
  }
  const double t = bench_max_time(MPI_Wtime() - t0);
  if (!(residual >= 0.0) || isinf(residual)) bench_fail("the residual is not a finite number");
  bench_result("stencil", "0", "time", t, "s");
  if (bench_rank() == 0) printf("stencil: %ld iterations, residual %.6e\n", iters, sqrt(residual));
  free(u);
  free(v);
  for (int k = 0; k < 2; ++k) {
    free(sendcol[k]);
    free(recvcol[k]);
  }
  MPI_Comm_free(&cart);
  MPI_Finalize();
  return 0;
}
