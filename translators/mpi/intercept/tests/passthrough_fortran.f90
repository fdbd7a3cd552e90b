! Fortran MPI calls under the preloaded interceptor. MPICH's Fortran
! bindings (libmpichfort: mpi_send_, ...) call the C entry points MPI_Send,
! MPI_Bcast, ... by their MPI_ names, so with the interceptor preloaded
! those calls enter it exactly like C calls do (the test driver checks the
! undefined MPI_ references of libmpichfort with nm). Run with 2 or more
! processes; every rank prints, the test compares sorted lines (each
! line is flushed at once so that mpiexec never interleaves two).
program passthrough_fortran
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, i
  integer :: status(MPI_STATUS_SIZE)
  integer :: token, mine, total, maxval_all
  integer :: values(4)
  double precision :: t0

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  t0 = MPI_Wtime()

  ! Ring of point-to-point messages: 0 -> 1 -> ... -> 0.
  if (rank == 0) then
    token = 100
    call MPI_Send(token, 1, MPI_INTEGER, mod(rank + 1, nprocs), 5, MPI_COMM_WORLD, ierr)
    call MPI_Recv(token, 1, MPI_INTEGER, nprocs - 1, 5, MPI_COMM_WORLD, status, ierr)
  else
    call MPI_Recv(token, 1, MPI_INTEGER, rank - 1, 5, MPI_COMM_WORLD, status, ierr)
    token = token + rank
    call MPI_Send(token, 1, MPI_INTEGER, mod(rank + 1, nprocs), 5, MPI_COMM_WORLD, ierr)
  end if
  write (*, '(A,I0,A,I0,A,I0)') 'r', rank, ' ring token ', token, ' from ', status(MPI_SOURCE)
  flush (6)

  ! Broadcast from the last rank.
  if (rank == nprocs - 1) then
    do i = 1, 4
      values(i) = i * i
    end do
  else
    values = 0
  end if
  call MPI_Bcast(values, 4, MPI_INTEGER, nprocs - 1, MPI_COMM_WORLD, ierr)
  write (*, '(A,I0,A,4(1X,I0))') 'r', rank, ' bcast', values
  flush (6)

  ! Reductions over every rank.
  mine = rank + 1
  call MPI_Allreduce(mine, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(rank, maxval_all, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  write (*, '(A,I0,A,I0,A,I0)') 'r', rank, ' allreduce sum ', total, ' max ', maxval_all
  flush (6)

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (MPI_Wtime() < t0) write (*, '(A,I0,A)') 'r', rank, ' clock went backwards'
  flush (6)
  call MPI_Finalize(ierr)
  write (*, '(A,I0,A,I0)') 'r', rank, ' finalized ierr ', ierr
  flush (6)
end program passthrough_fortran
