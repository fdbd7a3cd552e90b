/* Local loads and stores of window memory from C++ (MPI's C API) against a
 * passive-target epoch: the window is the storage of a std::vector<int>
 * (its data()), T accesses it through the vector (instrumented by
 * vcx-mpicxx). A's puts under an exclusive lock of T are complete at A's
 * MPI_Win_unlock, but that orders them only before what T does after a
 * later synchronisation with A; T's accesses here have none.
 *
 *   a  T stores an element A puts into (v[3] = 5);
 *   b  T loads, in a range-for over a sub-range of the vector, the second
 *      element of A's two-element put.
 * Unmarked controls: T stores the element between A's put and A's
 * two-element put, and loads in a range-for the sub-range after the
 * two-element put (different bytes); T stores, loads and stores again an
 * element no other rank accesses (local accesses of one rank are in program
 * order); T stores the elements of a and b after the barrier that follows
 * A's unlock.
 *
 * race_free_local_cxx.cpp has a barrier between A's epoch and T's
 * accesses. Ranks: A = 0, T = 1; other ranks only call the barriers. Window
 * slots are ints. */
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
    std::fprintf(stderr, "race_local_cxx: needs at least 2 ranks\n");
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
    MPI_Put(&one, 1, MPI_INT, T, 3, 1, MPI_INT, win); /* race: a */
    MPI_Put(two, 2, MPI_INT, T, 5, 2, MPI_INT, win); /* race: b */
    MPI_Win_unlock(T, win);
  }
  /* T's local accesses (race_free_local_cxx.cpp has a barrier here). */
  if (me == T) {
    v[3] = 5; /* race: a */
    for (int x : Range{v.data() + 6, v.data() + 9}) sum += x; /* race: b */
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
  if (sum == -1) std::fprintf(stderr, "race_local_cxx: impossible sum\n");
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
