! Local loads and stores of window memory from Fortran (use mpi_f08), in
! one MPI_Win_fence epoch: the window is a Fortran integer array, T accesses
! it with plain assignments (instrumented by vcx-mpifort) while A's puts
! into the same elements are in flight; they end only at the closing fence.
!
!   a  T stores an element A puts into;
!   b  T loads an element A puts into;
!   c  T stores an array section (mem(9:11)) that holds the element of A's
!      one-element put into mem(10).
! Unmarked controls: T stores and loads elements next to those A puts into
! (different bytes); T stores an element after the closing fence of the
! epoch of A's put into it; T stores, loads and stores again an element no
! other rank accesses (local accesses of one rank are in program order).
! The array descriptors and temporaries gfortran builds for the calls live
! on the stack, which no window exposes: none of them is a race.
!
! race_free_local_fortran.f90 has a fence between A's puts and T's local
! accesses. Ranks: A = 0, T = 1; other ranks only call the fences. Window
! elements are default integers, mem(k) at displacement k.
program race_local_fortran
  use mpi_f08
  implicit none
  integer, parameter :: SLOTS = 16, A = 0, T = 1
  ! Initialised data (no stores before the window exposes it).
  integer, asynchronous, target, save :: mem(0:SLOTS - 1) = 0
  integer, asynchronous :: one, two(2)
  integer :: me, n, isz, s
  integer(kind=MPI_ADDRESS_KIND) :: bytes
  type(MPI_Win) :: win

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  call MPI_Comm_size(MPI_COMM_WORLD, n)
  if (n < 2) then
    write (0, '(a)') 'race_local_fortran: needs at least 2 ranks'
    call MPI_Abort(MPI_COMM_WORLD, 2)
  end if
  call MPI_Type_size(MPI_INTEGER, isz)
  bytes = int(SLOTS, MPI_ADDRESS_KIND) * isz
  call MPI_Win_create(mem, bytes, isz, MPI_INFO_NULL, MPI_COMM_WORLD, win)

  one = 1
  two = [2, 3]
  s = 0

  call MPI_Win_fence(MPI_MODE_NOPRECEDE, win)
  ! A's puts into T's window.
  if (me == A) then
    call MPI_Put(one, 1, MPI_INTEGER, T, 0_MPI_ADDRESS_KIND, 1, MPI_INTEGER, win) ! /* race: a */
    call MPI_Put(one, 1, MPI_INTEGER, T, 1_MPI_ADDRESS_KIND, 1, MPI_INTEGER, win) ! /* race: b */
    call MPI_Put(two, 2, MPI_INTEGER, T, 3_MPI_ADDRESS_KIND, 2, MPI_INTEGER, win)
    call MPI_Put(one, 1, MPI_INTEGER, T, 8_MPI_ADDRESS_KIND, 1, MPI_INTEGER, win)
    call MPI_Put(one, 1, MPI_INTEGER, T, 10_MPI_ADDRESS_KIND, 1, MPI_INTEGER, win) ! /* race: c */
    call MPI_Put(one, 1, MPI_INTEGER, T, 13_MPI_ADDRESS_KIND, 1, MPI_INTEGER, win)
  end if
  ! T's local accesses (race_free_local_fortran.f90 has a fence here).
  if (me == T) then
    mem(0) = 5 ! /* race: a */
    s = s + mem(1) ! /* race: b */
    mem(2) = 5
    s = s + mem(5)
    mem(9:11) = 7 ! /* race: c */
    mem(12) = 5
    s = s + mem(12)
    mem(12) = 6
  end if
  call MPI_Win_fence(0, win)

  ! Control: T's store after the fence that completed A's put into mem(13).
  if (me == T) then
    mem(13) = 6
  end if
  call MPI_Win_fence(MPI_MODE_NOSUCCEED, win)

  ! Uses s, so that an optimised build keeps T's loads.
  if (s == -1) write (0, '(a)') 'race_local_fortran: impossible sum'
  call MPI_Win_free(win)
  call MPI_Finalize()
end program race_local_fortran
