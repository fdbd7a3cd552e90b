/* Byte-exact overlap in one fence epoch, on a window with displacement
 * unit 1 (displacements are bytes): derived target datatypes touch only the
 * bytes of their type map, not their whole extent, and partial overlaps of
 * predefined types count.
 *
 *   a  A puts a vector (ints at +0 and +8) at 16; B puts an int at 24;
 *   b  A puts an int at 40; B puts a char at 43 (one byte in common);
 *   c  A accumulates MPI_SUM on an int at 56; B accumulates MPI_SUM on a
 *      short at 58 (different basic datatypes);
 *   d  A puts an indexed type (ints at +0, +8, +20) at 64; B gets the int
 *      at 84;
 *   e  A puts two ints of a type resized to extent 8 at 96; B puts an int
 *      at 104.
 * Unmarked controls: B's int at 4, in the hole of A's vector at 0; shorts
 * at 32 and 34; an MPI_SUM on two ints (a contiguous type of MPI_INT) at
 * 48 against an MPI_SUM on an int at 52 (the same basic datatype); B's get
 * at 80, in a hole of the indexed type; B's put at 100, in the gap of the
 * resized type.
 *
 * race_free_datatypes.c has a fence between A's and B's accesses. Ranks:
 * A = 0 and B = 2 (1 with two ranks) access the window of T = 1; other
 * ranks only call the fences. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 2) {
    fprintf(stderr, "race_datatypes: needs at least 2 ranks\n");
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
    MPI_Put(ints, 2, MPI_INT, T, 16, 1, vec, win); /* race: a */
    MPI_Put(&s1, 1, MPI_SHORT, T, 32, 1, MPI_SHORT, win);
    MPI_Put(&one, 1, MPI_INT, T, 40, 1, MPI_INT, win); /* race: b */
    MPI_Accumulate(ints, 2, MPI_INT, T, 48, 1, contig2, MPI_SUM, win);
    MPI_Accumulate(&one, 1, MPI_INT, T, 56, 1, MPI_INT, MPI_SUM, win); /* race: c */
    MPI_Put(ints, 3, MPI_INT, T, 64, 1, idx, win); /* race: d */
    MPI_Put(ints, 2, MPI_INT, T, 96, 2, rsz, win); /* race: e */
  }
  /* Second accesses (race_free_datatypes.c has a fence here). */
  if (me == B) {
    MPI_Put(&one, 1, MPI_INT, T, 4, 1, MPI_INT, win);
    MPI_Put(&one, 1, MPI_INT, T, 24, 1, MPI_INT, win); /* race: a */
    MPI_Put(&s1, 1, MPI_SHORT, T, 34, 1, MPI_SHORT, win);
    MPI_Put(&c1, 1, MPI_CHAR, T, 43, 1, MPI_CHAR, win); /* race: b */
    MPI_Accumulate(&one, 1, MPI_INT, T, 52, 1, MPI_INT, MPI_SUM, win);
    MPI_Accumulate(&s1, 1, MPI_SHORT, T, 58, 1, MPI_SHORT, MPI_SUM, win); /* race: c */
    MPI_Get(&got[0], 1, MPI_INT, T, 80, 1, MPI_INT, win);
    MPI_Get(&got[1], 1, MPI_INT, T, 84, 1, MPI_INT, win); /* race: d */
    MPI_Put(&one, 1, MPI_INT, T, 100, 1, MPI_INT, win);
    MPI_Put(&one, 1, MPI_INT, T, 104, 1, MPI_INT, win); /* race: e */
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
