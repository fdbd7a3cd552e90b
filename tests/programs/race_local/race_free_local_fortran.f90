! Race-free twin of race_local_fortran.f90: the same puts of A and local
! accesses of T, with a fence between them, so that T's loads and stores
! follow the completion of A's puts. The controls are those of
! race_local_fortran.f90. No races.
!
! Ranks: A = 0, T = 1; other ranks only call the fences. Window elements
! are default integers, mem(k) at displacement k.
program race_free_local_fortran
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
    write (0, '(a)') 'race_free_local_fortran: needs at least 2 ranks'
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
    call MPI_Put(one, 1, MPI_INTEGER, T, 0_MPI_ADDRESS_KIND, 1, MPI_INTEGER, win)
    call MPI_Put(one, 1, MPI_INTEGER, T, 1_MPI_ADDRESS_KIND, 1, MPI_INTEGER, win)
    call MPI_Put(two, 2, MPI_INTEGER, T, 3_MPI_ADDRESS_KIND, 2, MPI_INTEGER, win)
    call MPI_Put(one, 1, MPI_INTEGER, T, 8_MPI_ADDRESS_KIND, 1, MPI_INTEGER, win)
    call MPI_Put(one, 1, MPI_INTEGER, T, 10_MPI_ADDRESS_KIND, 1, MPI_INTEGER, win)
    call MPI_Put(one, 1, MPI_INTEGER, T, 13_MPI_ADDRESS_KIND, 1, MPI_INTEGER, win)
  end if
  ! The fence race_local_fortran.f90 lacks.
  call MPI_Win_fence(0, win)
  ! T's local accesses.
  if (me == T) then
    mem(0) = 5
    s = s + mem(1)
    mem(2) = 5
    s = s + mem(5)
    mem(9:11) = 7
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
  if (s == -1) write (0, '(a)') 'race_free_local_fortran: impossible sum'
  call MPI_Win_free(win)
  call MPI_Finalize()
end program race_free_local_fortran
