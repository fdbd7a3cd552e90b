/* Race-free twin of race_datatypes.c: the same derived-datatype and
 * partial-overlap accesses, with a fence between A's and B's. No races.
 *
 * Ranks: A = 0 and B = 2 (1 with two ranks) access the window of T = 1;
 * other ranks only call the fences. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) {
    fprintf(stderr, "race_free_datatypes: needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int A = 0, T = 1, B = n > 2 ? 2 : 1;
  static int mem[32];
  MPI_Win win;
  MPI_Win_create(mem, sizeof mem, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);

  /* ints at +0 and +8 */
  MPI_Datatype vec, contig2, idx, rsz;
  MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  MPI_Type_contiguous(2, MPI_INT, &contig2);
  MPI_Type_commit(&contig2);
  /* ints at +0, +8 and +20 */
  const int lens[3] = {1, 1, 1}, displs[3] = {0, 2, 5};
  MPI_Type_indexed(3, lens, displs, MPI_INT, &idx);
  MPI_Type_commit(&idx);
  /* an int with extent 8 */
  MPI_Type_create_resized(MPI_INT, 0, 8, &rsz);
  MPI_Type_commit(&rsz);

  int one = 1, ints[3] = {1, 2, 3}, got[2];
  short s1 = 1;
  char c1 = 1;

  MPI_Win_fence(0, win);
  /* First accesses. */
  if (me == A) {
    MPI_Put(ints, 2, MPI_INT, T, 0, 1, vec, win);
    MPI_Put(ints, 2, MPI_INT, T, 16, 1, vec, win);
    MPI_Put(&s1, 1, MPI_SHORT, T, 32, 1, MPI_SHORT, win);
    MPI_Put(&one, 1, MPI_INT, T, 40, 1, MPI_INT, win);
    MPI_Accumulate(ints, 2, MPI_INT, T, 48, 1, contig2, MPI_SUM, win);
    MPI_Accumulate(&one, 1, MPI_INT, T, 56, 1, MPI_INT, MPI_SUM, win);
    MPI_Put(ints, 3, MPI_INT, T, 64, 1, idx, win);
    MPI_Put(ints, 2, MPI_INT, T, 96, 2, rsz, win);
  }
  /* The fence race_datatypes.c lacks. */
  MPI_Win_fence(0, win);
  /* Second accesses. */
  if (me == B) {
    MPI_Put(&one, 1, MPI_INT, T, 4, 1, MPI_INT, win);
    MPI_Put(&one, 1, MPI_INT, T, 24, 1, MPI_INT, win);
    MPI_Put(&s1, 1, MPI_SHORT, T, 34, 1, MPI_SHORT, win);
    MPI_Put(&c1, 1, MPI_CHAR, T, 43, 1, MPI_CHAR, win);
    MPI_Accumulate(&one, 1, MPI_INT, T, 52, 1, MPI_INT, MPI_SUM, win);
    MPI_Accumulate(&s1, 1, MPI_SHORT, T, 58, 1, MPI_SHORT, MPI_SUM, win);
    MPI_Get(&got[0], 1, MPI_INT, T, 80, 1, MPI_INT, win);
    MPI_Get(&got[1], 1, MPI_INT, T, 84, 1, MPI_INT, win);
    MPI_Put(&one, 1, MPI_INT, T, 100, 1, MPI_INT, win);
    MPI_Put(&one, 1, MPI_INT, T, 104, 1, MPI_INT, win);
  }
  MPI_Win_fence(0, win);

  MPI_Type_free(&vec);
  MPI_Type_free(&contig2);
  MPI_Type_free(&idx);
  MPI_Type_free(&rsz);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
