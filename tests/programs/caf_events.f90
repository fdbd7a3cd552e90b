! A Coarray Fortran program (OpenCoarrays over MPICH, caf.mpich): sync all,
! coarray puts, event post / event wait. OpenCoarrays' event wait holds
! MPI_Win_lock_all(MPI_MODE_NOCHECK) on the event's window and polls its
! memory while the posting images lock it exclusively (integration.coarray).
!
! `a` is large on purpose: MPICH 4.0.2 (ch4) sends RMA to rank 1 of a tiny
! MPI_Win_allocate window (4-8 bytes) to rank 0's memory, natively, so a put
! to a scalar coarray on image 2 would land on image 1.
program caf_events
  use, intrinsic :: iso_fortran_env, only: event_type
  implicit none
  integer :: a(1024)[*]
  type(event_type) :: ev[*]
  integer :: me, n, round

  me = this_image()
  n = num_images()
  a = 0
  sync all

  if (me == 1) a(1)[2] = 42          ! coarray put to image 2
  sync all

  do round = 1, 3
    if (me == 2) then
      a(1 + round)[1] = a(1) + round ! put a value back to image 1 ...
      event post (ev[1])             ! ... then tell image 1
    else if (me >= 3) then
      event post (ev[1])             ! the other images just post
    end if
    if (me == 1) then
      event wait (ev, until_count = n - 1)
      print '(a,i0,a,i0,a,i0)', 'image 1, round ', round, ': a = ', a(1 + round), &
            ', events ', n - 1
    end if
    sync all
  end do
end program
