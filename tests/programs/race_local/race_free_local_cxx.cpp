/* Race-free twin of race_local_cxx.cpp: the same epoch of A and local
 * accesses of T, with a barrier between them that follows A's unlock, so
 * that T's loads and stores follow the completion of A's puts. The controls
 * are those of race_local_cxx.cpp. No races.
 *
 * Ranks: A = 0, T = 1; other ranks only call the barriers. Window slots are
 * ints. */
#include <mpi.h>

#include <cstdio>
#include <vector>

namespace {

constexpr int SLOTS = 16;

// [first, last) of ints, for a range-for over part of a vector.
struct Range {
  const int* first;
  const int* last;
  const int* begin() const { return first; }
  const int* end() const { return last; }
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) {
    std::fprintf(stderr, "race_free_local_cxx: needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int A = 0, T = 1;
  const MPI_Comm W = MPI_COMM_WORLD;
  std::vector<int> v(SLOTS);
  MPI_Win win;
  MPI_Win_create(v.data(), static_cast<MPI_Aint>(v.size() * sizeof(int)), sizeof(int),
                 MPI_INFO_NULL, W, &win);

  int one = 1, two[2] = {2, 3};
  long sum = 0;

  /* A's epoch on T's window. */
  if (me == A) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, T, 0, win);
    MPI_Put(&one, 1, MPI_INT, T, 3, 1, MPI_INT, win);
    MPI_Put(two, 2, MPI_INT, T, 5, 2, MPI_INT, win);
    MPI_Win_unlock(T, win);
  }
  /* The barrier race_local_cxx.cpp lacks. */
  MPI_Barrier(W);
  /* T's local accesses. */
  if (me == T) {
    v[3] = 5;
    for (int x : Range{v.data() + 6, v.data() + 9}) sum += x;
    v[4] = 5;
    for (int x : Range{v.data() + 7, v.data() + 10}) sum += x;
    v[12] = 5;
    sum += v[12];
    v[12] = 6;
  }
  MPI_Barrier(W);

  /* Controls: the elements of a and b, after the barrier that follows A's
   * unlock. */
  if (me == T) {
    v[3] = 6;
    v[6] = 6;
  }
  MPI_Barrier(W);

  /* Uses sum, so that an optimised build keeps T's loads. */
  if (sum == -1) std::fprintf(stderr, "race_free_local_cxx: impossible sum\n");
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
