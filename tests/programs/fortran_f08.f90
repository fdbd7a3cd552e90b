! Fortran 2008 bindings (use mpi_f08). MPICH's mpi_f08 routines without a
! choice buffer call PMPI_ directly; the interceptor points them at its
! MPI_ wrappers (translators/mpi/intercept/fortran_f08.cpp). This program
! goes through those routines (MPI_Init, MPI_Comm_dup/split/free,
! MPI_Startall, MPI_Wait/Waitall/Waitany/Waitsome, MPI_Test/Testall/Testany,
! MPI_Request_free, MPI_Mprobe, MPI_Barrier, MPI_Ibarrier, MPI_Finalize)
! next to buffer routines (which the bindings send through MPI_ anyway), so
! a routine that escaped vcx would show up as a missing clock or an unknown
! communicator.
! Ground truth as in the C programs, through gt_log.f90.
!
! Phases (every one deadlock-free without relying on MPI buffering):
!   1. persistent ring on a duplicate of the world: MPI_Recv_init from the
!      left, MPI_Send_init to the right, started three times with
!      MPI_Startall and completed with MPI_Waitall, then MPI_Request_free;
!   2. rank 0 takes one MPI_Issend from every other rank through
!      MPI_ANY_SOURCE receives completed with MPI_Waitsome (the senders use
!      bounded MPI_Test loops and MPI_Wait), then sends each of them a
!      message they take with MPI_Mprobe + MPI_Mrecv (rank 0 completes its
!      sends with bounded MPI_Testall loops and MPI_Waitall);
!   3. a ring of MPI_Isend / MPI_Issend and MPI_Irecv both ways, completed
!      with bounded MPI_Testany loops and MPI_Waitany;
!   4. MPI_Barrier, MPI_Ibarrier + MPI_Wait, MPI_Bcast, and MPI_Allreduce on
!      a split with reversed keys.
! Every rank prints one line with its digest sum and the reduced total.
program fortran_f08
  use mpi_f08
  use gt_log
  implicit none
  integer, parameter :: MSG = 8, MAXR = 16, MAX_SPINS = 200
  integer :: ierr, me, n, left, right, i, k, round, outcount, remaining
  integer :: idx(MAXR), senders(MAXR)
  logical :: active(MAXR)
  type(MPI_Comm) :: dup, rev
  type(MPI_Request) :: reqs(MAXR), preq(2)
  type(MPI_Status) :: st, sts(MAXR)
  type(MPI_Message) :: message
  type(gt_req), target :: info(MAXR), pinfo(2)
  type(gt_mhandle) :: handle
  integer(c_int), target :: rbuf(MSG, MAXR), prbuf(MSG)
  integer(c_int) :: sbuf(MSG, MAXR), psbuf(MSG), bvals(4)
  integer(c_long) :: digests, total
  type(gt_msgid) :: id
  logical :: flag

  call MPI_Init(ierr)
  call check(ierr, 'MPI_Init')
  call gt_init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  call MPI_Comm_size(MPI_COMM_WORLD, n)
  right = mod(me + 1, n)
  left = mod(me - 1 + n, n)
  digests = 0
  active = .false.

  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call check(ierr, 'MPI_Comm_dup')
  call gt_comm_add(dup%MPI_VAL, 'dup'//c_null_char)

  ! 1. Persistent ring.
  call MPI_Recv_init(prbuf, MSG, MPI_INTEGER, left, 1, dup, preq(1), ierr)
  call check(ierr, 'MPI_Recv_init')
  call gt_req_recv(pinfo(1), prbuf)
  call gt_begin('MPI_Recv_init'//c_null_char)
  call gt_op_init(pinfo(1)%name, 'recv'//c_null_char)
  call gt_end()
  call MPI_Send_init(psbuf, MSG, MPI_INTEGER, right, 1, dup, preq(2), ierr)
  call check(ierr, 'MPI_Send_init')
  call gt_req_send(pinfo(2))
  call gt_begin('MPI_Send_init'//c_null_char)
  call gt_op_init(pinfo(2)%name, 'send'//c_null_char)
  call gt_end()
  do round = 1, 3
    ! The line is assembled before the call (the send's id must be in its
    ! buffer when it starts) and written once the call returned.
    call gt_begin('MPI_Startall'//c_null_char)
    call gt_unmark(prbuf)
    call gt_match(dup%MPI_VAL, left, 1)
    call gt_op_post(pinfo(1)%name)
    id = gt_stamp(psbuf)
    call gt_fill(psbuf, MSG)
    call gt_match(dup%MPI_VAL, right, 1)
    call gt_op_send('std'//c_null_char, id, gt_world_of(dup%MPI_VAL, right), pinfo(2)%name)
    call MPI_Startall(2, preq, ierr)
    call check(ierr, 'MPI_Startall')
    call gt_end()
    call MPI_Waitall(2, preq, sts, ierr)
    call check(ierr, 'MPI_Waitall')
    if (sts(1)%MPI_SOURCE /= left) call fail('persistent receive from', sts(1)%MPI_SOURCE)
    call log_all('MPI_Waitall', pinfo, 2)
    digests = digests + gt_check(prbuf, MSG)
  end do
  do k = 1, 2
    call MPI_Request_free(preq(k), ierr)
    call check(ierr, 'MPI_Request_free')
    call gt_begin('MPI_Request_free'//c_null_char)
    call gt_op_free(pinfo(k)%name)
    call gt_end()
  end do

  ! 2. Synchronous sends into wildcard receives at rank 0, then matched
  !    probes at the others.
  if (me == 0) then
    do k = 1, n - 1
      call post(k, MPI_ANY_SOURCE, 5, dup)
    end do
    i = 0
    do while (i < n - 1)
      call MPI_Waitsome(n - 1, reqs, outcount, idx, sts, ierr)
      call check(ierr, 'MPI_Waitsome')
      call completed_slots(n - 1, outcount, 'MPI_Waitsome')
      do k = 1, outcount
        id = gt_read(rbuf(:, idx(k)))
        senders(k) = id%src
        digests = digests + gt_check(rbuf(:, idx(k)), MSG)
      end do
      ! The statuses come in MPI's order; each names one of the senders.
      do k = 1, outcount
        if (.not. any(senders(1:outcount) == sts(k)%MPI_SOURCE)) &
          call fail('MPI_Waitsome status source', sts(k)%MPI_SOURCE)
      end do
      i = i + outcount
    end do
    do k = 1, n - 1
      call isend(k, 'std', k, 6, dup)
    end do
    flag = .false.
    i = 0
    do while (.not. flag .and. i < MAX_SPINS)
      call MPI_Testall(n - 1, reqs, flag, MPI_STATUSES_IGNORE, ierr)
      call check(ierr, 'MPI_Testall')
      i = i + 1
    end do
    if (flag) then
      call log_all('MPI_Testall', info, n - 1)
    else
      call MPI_Waitall(n - 1, reqs, MPI_STATUSES_IGNORE, ierr)
      call check(ierr, 'MPI_Waitall')
      call log_all('MPI_Waitall', info, n - 1)
    end if
  else
    call isend(1, 'sync', 0, 5, dup)
    flag = .false.
    i = 0
    do while (.not. flag .and. i < MAX_SPINS)
      call MPI_Test(reqs(1), flag, MPI_STATUS_IGNORE, ierr)
      call check(ierr, 'MPI_Test')
      i = i + 1
    end do
    if (flag) then
      call log_all('MPI_Test', info, 1)
    else
      call MPI_Wait(reqs(1), MPI_STATUS_IGNORE, ierr)
      call check(ierr, 'MPI_Wait')
      call log_all('MPI_Wait', info, 1)
    end if
    call MPI_Mprobe(0, 6, dup, message, st, ierr)
    call check(ierr, 'MPI_Mprobe')
    call gt_mhandle_new(handle)
    call gt_begin('MPI_Mprobe'//c_null_char)
    call gt_match(dup%MPI_VAL, 0, 6)
    call gt_op_mprobe(handle)
    call gt_end()
    call MPI_Mrecv(rbuf(:, 1), MSG, MPI_INTEGER, message, st, ierr)
    call check(ierr, 'MPI_Mrecv')
    if (st%MPI_TAG /= 6) call fail('MPI_Mrecv tag', st%MPI_TAG)
    call gt_begin('MPI_Mrecv'//c_null_char)
    call gt_op_mrecv(handle, gt_read(rbuf(:, 1)))
    call gt_end()
    digests = digests + gt_check(rbuf(:, 1), MSG)
  end if

  ! 3. Ring completed with MPI_Testany, then MPI_Waitany. Every request of
  !    the phases before is complete.
  active = .false.
  call post(1, left, 7, dup)
  call isend(2, 'std', right, 7, dup)
  call post(3, right, 8, dup)
  call isend(4, 'sync', left, 8, dup)
  remaining = 4
  i = 0
  do while (remaining > 0 .and. i < MAX_SPINS)
    call MPI_Testany(4, reqs, k, flag, st, ierr)
    call check(ierr, 'MPI_Testany')
    if (flag) then
      if (k == MPI_UNDEFINED) call fail('MPI_Testany found no active request', remaining)
      call completed_slots(4, 1, 'MPI_Testany')
      remaining = remaining - 1
    else
      i = i + 1
    end if
  end do
  do while (remaining > 0)
    call MPI_Waitany(4, reqs, k, st, ierr)
    call check(ierr, 'MPI_Waitany')
    if (k == MPI_UNDEFINED) call fail('MPI_Waitany found no active request', remaining)
    call completed_slots(4, 1, 'MPI_Waitany')
    remaining = remaining - 1
  end do
  digests = digests + gt_check(rbuf(:, 1), MSG) + gt_check(rbuf(:, 3), MSG)

  ! 4. Collectives.
  call MPI_Barrier(dup, ierr)
  call check(ierr, 'MPI_Barrier')
  call gt_log_coll('MPI_Barrier'//c_null_char, 'all_to_all'//c_null_char, dup%MPI_VAL, &
                   -1_c_int)

  call MPI_Ibarrier(MPI_COMM_WORLD, reqs(1), ierr)
  call check(ierr, 'MPI_Ibarrier')
  call gt_req_send(info(1))
  call gt_log_icoll('MPI_Ibarrier'//c_null_char, 'all_to_all'//c_null_char, &
                    MPI_COMM_WORLD%MPI_VAL, -1_c_int, info(1))
  call MPI_Wait(reqs(1), st, ierr)
  call check(ierr, 'MPI_Wait')
  call log_all('MPI_Wait', info, 1)

  bvals = 0
  if (me == 0) bvals = [3, 5, 7, 9]
  call MPI_Bcast(bvals, 4, MPI_INTEGER, 0, dup, ierr)
  call check(ierr, 'MPI_Bcast')
  call gt_log_coll('MPI_Bcast'//c_null_char, 'one_to_all'//c_null_char, dup%MPI_VAL, 0_c_int)
  if (any(bvals /= [3, 5, 7, 9])) call fail('MPI_Bcast delivered', bvals(1))

  call MPI_Comm_split(MPI_COMM_WORLD, 0, n - me, rev, ierr)
  call check(ierr, 'MPI_Comm_split')
  call gt_comm_add(rev%MPI_VAL, 'rev'//c_null_char)
  call MPI_Allreduce(digests, total, 1, MPI_INTEGER8, MPI_SUM, rev, ierr)
  call check(ierr, 'MPI_Allreduce')
  call gt_log_coll('MPI_Allreduce'//c_null_char, 'all_to_all'//c_null_char, rev%MPI_VAL, &
                   -1_c_int)

  call gt_comm_remove(rev%MPI_VAL)
  call MPI_Comm_free(rev, ierr)
  call gt_comm_remove(dup%MPI_VAL)
  call MPI_Comm_free(dup, ierr)

  write (*, '(A,I0,A,I0,A,I0)') 'fortran_f08 rank ', me, ' sum ', digests, ' total ', total
  flush (6)
  call gt_finalize()
  call MPI_Finalize(ierr)

contains

  ! MPI_Irecv into slot k, logged.
  subroutine post(k, from, tg, comm)
    integer, intent(in) :: k, from, tg
    type(MPI_Comm), intent(in) :: comm
    call gt_unmark(rbuf(:, k))
    call gt_req_recv(info(k), rbuf(:, k))
    call MPI_Irecv(rbuf(:, k), MSG, MPI_INTEGER, from, tg, comm, reqs(k), ierr)
    call check(ierr, 'MPI_Irecv')
    active(k) = .true.
    call gt_match(comm%MPI_VAL, from, tg)
    call gt_log_post('MPI_Irecv'//c_null_char, info(k))
  end subroutine post

  ! MPI_Isend ('std') or MPI_Issend ('sync') from slot k, logged.
  subroutine isend(k, mode, dest, tg, comm)
    integer, intent(in) :: k, dest, tg
    character(len=*), intent(in) :: mode
    type(MPI_Comm), intent(in) :: comm
    id = gt_stamp(sbuf(:, k))
    call gt_fill(sbuf(:, k), MSG)
    call gt_req_send(info(k))
    call gt_match(comm%MPI_VAL, dest, tg)
    if (mode == 'sync') then
      call MPI_Issend(sbuf(:, k), MSG, MPI_INTEGER, dest, tg, comm, reqs(k), ierr)
      call check(ierr, 'MPI_Issend')
      active(k) = .true.
      call gt_log_isend('MPI_Issend'//c_null_char, 'sync'//c_null_char, id, comm%MPI_VAL, &
                        dest, info(k))
    else
      call MPI_Isend(sbuf(:, k), MSG, MPI_INTEGER, dest, tg, comm, reqs(k), ierr)
      call check(ierr, 'MPI_Isend')
      active(k) = .true.
      call gt_log_isend('MPI_Isend'//c_null_char, 'std'//c_null_char, id, comm%MPI_VAL, &
                        dest, info(k))
    end if
  end subroutine isend

  ! After a Waitany/Testany/Waitsome/Testsome among reqs(1..count) that
  ! completed `expected` requests: finds them as the active slots whose
  ! handle MPI reset to MPI_REQUEST_NULL (MPICH 4.0.2's mpi_f08 reports the
  ! indices of these calls 0-based, so they are not used), puts them into
  ! idx(1..expected) and logs the completion line.
  subroutine completed_slots(count, expected, call)
    integer, intent(in) :: count, expected
    character(len=*), intent(in) :: call
    integer(c_int) :: zero_based(MAXR)
    integer :: j, found
    found = 0
    do j = 1, count
      if (active(j) .and. reqs(j) == MPI_REQUEST_NULL) then
        found = found + 1
        idx(found) = j
        zero_based(found) = j - 1
        active(j) = .false.
      end if
    end do
    if (found /= expected) call fail(call//' completed requests:', found)
    call gt_log_completed(call//c_null_char, info, zero_based, int(found, c_int))
  end subroutine completed_slots
end program fortran_f08
