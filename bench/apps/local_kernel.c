/* The cost of instrumented loads and stores (vcx-mpicc, docs/analyses.md,
 * "Local loads and stores"): a compute kernel over private memory in a
 * program that exposes memory to one-sided communication, built once
 * plainly (local_kernel) and once with vcx-mpicc (local_kernel_instrumented);
 * bench/local_access_cost runs both, natively and under vcx-run.
 *
 * The program allocates an RMA window (MPI_Win_allocate, 64 KiB), so under
 * `vcx-run --analysis race` the instrumented build has memory watched, and
 * then measures two kernels, each between fences of that window and with no
 * remote access at all:
 *
 *   private  a 1-D update over two malloc'd arrays of 2 MiB and a 2 KiB
 *            table on the caller's stack: per element 3 loads and 2 stores
 *            (dst[i] = x ^ tab[x-dependent index], x = src[i-1] + src[i+1];
 *            tab[i % 256] = x), integer arithmetic, the table index
 *            depending on the data, so that no compiler vectorises it or
 *            merges accesses: every access of the source is one access of
 *            the machine code (one __tsan_read8/__tsan_write8 call when
 *            instrumented). Each repetition is a fence pair (untimed) and
 *            then the timed sweeps. Under vcx-run every access must stay on
 *            the runtime's fast path.
 *   exposed  a streaming update between the two halves of the window's own
 *            memory (dst[i] = f(src[i-1] + src[i+1]): 2 loads and 1 store
 *            per element), 100 sweeps inside each fence epoch, timed
 *            without the fences. Informative: under
 *            `vcx-run --analysis race` each of these accesses is reported
 *            to the tool, which costs far more than a private one.
 *
 * Results per kernel: ns_per_access (the slowest rank's kernel time divided
 * by the accesses one rank makes), time (s) and accesses (per rank, by
 * construction, the same in every build). */
#include <stdint.h>

#include "../micro/bench_util.h"

#if defined(__GNUC__) && !defined(__clang__)
/* noipa: GCC must not propagate the constant sizes into the kernels (a
 * known trip count lets -O2 vectorise), nor inline them. */
#define KERNEL __attribute__((noipa))
#else
#define KERNEL __attribute__((noinline))
#endif

enum {
  kArrayElems = 256 * 1024, /* 2 MiB of uint64_t per private array */
  kTabElems = 256,          /* the stack table: 2 KiB */
  kTabMask = kTabElems - 1,
  kWinElems = 8 * 1024, /* the window: 64 KiB, two halves of 32 KiB */
};

/* One sweep over private memory: 3 loads and 2 stores per element. */
KERNEL static void private_sweep(uint64_t* dst, const uint64_t* src, uint64_t* tab, size_t n) {
  for (size_t i = 1; i + 1 < n; ++i) {
    const uint64_t x = src[i - 1] + src[i + 1];
    const uint64_t y = tab[(x >> 3) & kTabMask];
    dst[i] = x ^ y;
    tab[i & kTabMask] = x;
  }
}
static const double kPrivatePerElem = 5.0;

/* One sweep over exposed memory: 2 loads and 1 store per element. */
KERNEL static void exposed_sweep(uint64_t* dst, const uint64_t* src, size_t n) {
  for (size_t i = 1; i + 1 < n; ++i) {
    const uint64_t x = src[i - 1] + src[i + 1];
    dst[i] = x ^ (x >> 7);
  }
}
static const double kExposedPerElem = 3.0;

static uint64_t checksum(const uint64_t* a, size_t n) {
  uint64_t s = 0;
  for (size_t i = 0; i < n; ++i) s = s * 31 + a[i];
  return s;
}

static void report(const char* kernel, double local_time, double accesses) {
  const double t = bench_max_time(local_time);
  bench_result("local_kernel", kernel, "ns_per_access", t / accesses * 1e9, "ns");
  bench_result("local_kernel", kernel, "time", t, "s");
  bench_result("local_kernel", kernel, "accesses", accesses, "count");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  bench_init(argc, argv);
  const int rank = bench_rank();

  uint64_t* w;
  MPI_Win win;
  MPI_Win_allocate((MPI_Aint)(kWinElems * sizeof(uint64_t)), sizeof(uint64_t), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &w, &win);

  uint64_t* a = bench_alloc(kArrayElems * sizeof(uint64_t));
  uint64_t* b = bench_alloc(kArrayElems * sizeof(uint64_t));
  uint64_t tab[kTabElems];
  for (size_t i = 0; i < kArrayElems; ++i) a[i] = b[i] = i * 0x9e3779b97f4a7c15ULL + (uint64_t)rank;
  for (size_t i = 0; i < kTabElems; ++i) tab[i] = i;

  /* ---- private: fence pair (untimed), then the timed sweeps ---- */
  const long reps = bench_iters(60, 2);
  const long sweeps = 10; /* per repetition */
  double t_private = 0.0;
  for (long r = -(reps / 10 + 1); r < reps; ++r) {
    MPI_Win_fence(0, win);
    MPI_Win_fence(0, win);
    const double t0 = MPI_Wtime();
    for (long s = 0; s < sweeps; ++s) {
      private_sweep(b, a, tab, kArrayElems);
      uint64_t* x = a;
      a = b;
      b = x;
    }
    if (r >= 0) t_private += MPI_Wtime() - t0;
  }
  const double private_accesses = kPrivatePerElem * (kArrayElems - 2) * (double)(reps * sweeps);
  const uint64_t sum_private = checksum(a, kArrayElems) ^ checksum(tab, kTabElems);

  /* ---- exposed: the window's memory inside one fence epoch ---- */
  MPI_Win_fence(0, win);
  for (size_t i = 0; i < kWinElems; ++i) w[i] = i + (uint64_t)rank;
  MPI_Win_fence(0, win);
  const long ereps = bench_iters(40, 2);
  const long esweeps = 100; /* per epoch */
  const size_t half = kWinElems / 2;
  double t_exposed = 0.0;
  for (long r = -(ereps / 10 + 1); r < ereps; ++r) {
    MPI_Win_fence(0, win);
    const double t0 = MPI_Wtime();
    for (long s = 0; s < esweeps; ++s) {
      if (s & 1)
        exposed_sweep(w, w + half, half);
      else
        exposed_sweep(w + half, w, half);
    }
    if (r >= 0) t_exposed += MPI_Wtime() - t0;
    MPI_Win_fence(0, win);
  }
  const double exposed_accesses = kExposedPerElem * (double)(half - 2) * (double)(ereps * esweeps);
  const uint64_t sum_exposed = checksum(w, kWinElems);

  report("private", t_private, private_accesses);
  report("exposed", t_exposed, exposed_accesses);
  if (rank == 0)
    printf("local_kernel: %ld x %ld private sweeps of %d elements, %ld x %ld exposed sweeps of "
           "%zu elements, checksums %016llx %016llx\n",
           reps, sweeps, kArrayElems, ereps, esweeps, half, (unsigned long long)sum_private,
           (unsigned long long)sum_exposed);
  free(a);
  free(b);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
