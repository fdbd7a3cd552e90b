! Fortran (use mpi) point-to-point and collectives, with the same ground
! truth as the C programs. MPICH's Fortran bindings call the C entry points
! (MPI_Send, MPI_Wait, ...), converting Fortran handles, LOGICAL flags and
! MPI_STATUS(ES)_IGNORE; under vcx those calls reach the interceptor, and
! the oracle checks every clock of the run like for a C program.
!
! The ground truth is logged through the C library gt.c (bind(C)
! interfaces in gt_log.f90).
!
! Phases (every one deadlock-free without relying on MPI buffering):
!   1. token rings: MPI_Send / MPI_Recv with a status, then MPI_Ssend /
!      MPI_Recv with MPI_STATUS_IGNORE, the other way round;
!   2. neighbour exchange on a duplicate of the world: Irecv from both
!      sides, Isend and Issend, completed by one MPI_Waitall;
!   3. wildcards on the duplicate: rank 0 posts MPI_ANY_SOURCE/MPI_ANY_TAG
!      receives, every other rank sends one MPI_Isend and one MPI_Issend to
!      it (MPI_Waitall with MPI_STATUSES_IGNORE); rank 0 completes half with
!      MPI_Waitany and the rest with bounded MPI_Test loops and MPI_Wait;
!   4. MPI_Ssend into blocking wildcard receives at the last rank;
!   5. collectives: MPI_Barrier, MPI_Bcast on the duplicate from the last
!      rank, MPI_Allreduce of the digests on a split with reversed keys.
! Every rank prints one line with its digest sum and the reduced total.
program fortran_p2p
  use mpi
  use gt_log
  implicit none
  integer, parameter :: MSG = 8, MAXR = 16, MAX_SPINS = 200
  integer :: ierr, me, n, left, right, dup, rev, i, k, src, tag, done
  integer :: st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, MAXR)
  integer :: reqs(MAXR)
  type(gt_req), target :: info(MAXR)
  integer(c_int), target :: rbuf(MSG, MAXR)
  integer(c_int) :: sbuf(MSG, MAXR), token(MSG), bvals(4)
  integer(c_long) :: digests, total
  type(gt_msgid) :: id
  logical :: flag

  call MPI_Init(ierr)
  call check(ierr, 'MPI_Init')
  call gt_init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  right = mod(me + 1, n)
  left = mod(me - 1 + n, n)
  digests = 0

  ! 1. Token rings. Rank 0 starts, every other rank forwards.
  if (me == 0) then
    call send_std(token, right, 1, MPI_COMM_WORLD)
    call MPI_Recv(token, MSG, MPI_INTEGER, left, 1, MPI_COMM_WORLD, st, ierr)
    call gt_match(MPI_COMM_WORLD, left, 1)
    call after_recv(token, .true., left, 1)
  else
    call MPI_Recv(token, MSG, MPI_INTEGER, left, 1, MPI_COMM_WORLD, st, ierr)
    call gt_match(MPI_COMM_WORLD, left, 1)
    call after_recv(token, .true., left, 1)
    call send_std(token, right, 1, MPI_COMM_WORLD)
  end if
  if (me == 0) then
    call send_sync(token, left, 2, MPI_COMM_WORLD)
    call MPI_Recv(token, MSG, MPI_INTEGER, right, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call gt_match(MPI_COMM_WORLD, right, 2)
    call after_recv(token, .false., right, 2)
  else
    call MPI_Recv(token, MSG, MPI_INTEGER, right, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call gt_match(MPI_COMM_WORLD, right, 2)
    call after_recv(token, .false., right, 2)
    call send_sync(token, left, 2, MPI_COMM_WORLD)
  end if

  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call check(ierr, 'MPI_Comm_dup')
  call gt_comm_add(dup, 'dup'//c_null_char)

  ! 2. Neighbour exchange, all receives posted before the sends.
  call post(1, left, 3, dup)
  call post(2, right, 4, dup)
  call isend(3, 'std', right, 3, dup)
  call isend(4, 'sync', left, 4, dup)
  call MPI_Waitall(4, reqs, sts, ierr)
  call check(ierr, 'MPI_Waitall')
  do k = 1, 2
    if (sts(MPI_SOURCE, k) /= merge(left, right, k == 1)) call fail('neighbour source', &
                                                                    sts(MPI_SOURCE, k))
  end do
  call log_all('MPI_Waitall', info, 4)
  digests = digests + gt_check(rbuf(:, 1), MSG) + gt_check(rbuf(:, 2), MSG)

  ! 3. Wildcards at rank 0: every other rank sends tag 10+r (standard) and
  !    20+r (synchronous); the receives take them in any order.
  if (me == 0) then
    do k = 1, 2 * (n - 1)
      call post(k, MPI_ANY_SOURCE, MPI_ANY_TAG, dup)
    end do
    done = 0
    do while (done < n - 1)
      call MPI_Waitany(2 * (n - 1), reqs, k, st, ierr)
      call check(ierr, 'MPI_Waitany')
      call log_one('MPI_Waitany', info, k)
      call after_wild(k, st)
      done = done + 1
    end do
    do k = 1, 2 * (n - 1)
      if (reqs(k) == MPI_REQUEST_NULL) cycle
      flag = .false.
      i = 0
      do while (.not. flag .and. i < MAX_SPINS)
        call MPI_Test(reqs(k), flag, st, ierr)
        call check(ierr, 'MPI_Test')
        i = i + 1
      end do
      if (flag) then
        call log_one('MPI_Test', info, k)
      else
        call MPI_Wait(reqs(k), st, ierr)
        call check(ierr, 'MPI_Wait')
        call log_one('MPI_Wait', info, k)
      end if
      call after_wild(k, st)
    end do
  else
    call isend(1, 'std', 0, 10 + me, dup)
    call isend(2, 'sync', 0, 20 + me, dup)
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
    call check(ierr, 'MPI_Waitall')
    call log_all('MPI_Waitall', info, 2)
  end if

  ! 4. Synchronous sends into blocking wildcard receives at the last rank.
  if (me == n - 1) then
    do k = 1, n - 1
      call MPI_Recv(token, MSG, MPI_INTEGER, MPI_ANY_SOURCE, 30, MPI_COMM_WORLD, st, ierr)
      call gt_match(MPI_COMM_WORLD, MPI_ANY_SOURCE, 30)
      call after_recv(token, .true., st(MPI_SOURCE), 30)
    end do
  else
    call send_sync(token, n - 1, 30, MPI_COMM_WORLD)
  end if

  ! 5. Collectives.
  call MPI_Barrier(dup, ierr)
  call check(ierr, 'MPI_Barrier')
  call gt_log_coll('MPI_Barrier'//c_null_char, 'all_to_all'//c_null_char, dup, -1_c_int)

  bvals = 0
  if (me == n - 1) bvals = [7, 11, 13, 17]
  call MPI_Bcast(bvals, 4, MPI_INTEGER, n - 1, dup, ierr)
  call check(ierr, 'MPI_Bcast')
  call gt_log_coll('MPI_Bcast'//c_null_char, 'one_to_all'//c_null_char, dup, int(n - 1, c_int))
  if (any(bvals /= [7, 11, 13, 17])) call fail('MPI_Bcast delivered', bvals(1))

  call MPI_Comm_split(MPI_COMM_WORLD, 0, n - me, rev, ierr)
  call check(ierr, 'MPI_Comm_split')
  call gt_comm_add(rev, 'rev'//c_null_char)
  call MPI_Allreduce(digests, total, 1, MPI_INTEGER8, MPI_SUM, rev, ierr)
  call check(ierr, 'MPI_Allreduce')
  call gt_log_coll('MPI_Allreduce'//c_null_char, 'all_to_all'//c_null_char, rev, -1_c_int)

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call check(ierr, 'MPI_Barrier')
  call gt_log_coll('MPI_Barrier'//c_null_char, 'all_to_all'//c_null_char, MPI_COMM_WORLD, &
                   -1_c_int)

  call gt_comm_remove(rev)
  call MPI_Comm_free(rev, ierr)
  call gt_comm_remove(dup)
  call MPI_Comm_free(dup, ierr)

  write (*, '(A,I0,A,I0,A,I0)') 'fortran_p2p rank ', me, ' sum ', digests, ' total ', total
  flush (6)
  call gt_finalize()
  call MPI_Finalize(ierr)

contains

  subroutine send_std(buf, dest, tg, comm)
    integer(c_int), intent(inout) :: buf(MSG)
    integer, intent(in) :: dest, tg, comm
    id = gt_stamp(buf)
    call gt_fill(buf, MSG)
    call MPI_Send(buf, MSG, MPI_INTEGER, dest, tg, comm, ierr)
    call check(ierr, 'MPI_Send')
    call gt_match(comm, dest, tg)
    call gt_log_send('MPI_Send'//c_null_char, 'std'//c_null_char, id, comm, dest)
  end subroutine send_std

  subroutine send_sync(buf, dest, tg, comm)
    integer(c_int), intent(inout) :: buf(MSG)
    integer, intent(in) :: dest, tg, comm
    id = gt_stamp(buf)
    call gt_fill(buf, MSG)
    call MPI_Ssend(buf, MSG, MPI_INTEGER, dest, tg, comm, ierr)
    call check(ierr, 'MPI_Ssend')
    call gt_match(comm, dest, tg)
    call gt_log_send('MPI_Ssend'//c_null_char, 'sync'//c_null_char, id, comm, dest)
  end subroutine send_sync

  ! After a blocking MPI_Recv: check what arrived (the status st, where the
  ! call had one, must name the expected source and tag) and log it.
  subroutine after_recv(buf, with_status, from, tg)
    integer(c_int), intent(in) :: buf(MSG)
    logical, intent(in) :: with_status
    integer, intent(in) :: from, tg
    call check(ierr, 'MPI_Recv')
    if (with_status) then
      if (st(MPI_SOURCE) /= from) call fail('MPI_Recv source', st(MPI_SOURCE))
      if (st(MPI_TAG) /= tg) call fail('MPI_Recv tag', st(MPI_TAG))
    end if
    id = gt_read(buf)
    if (id % src /= from) call fail('MPI_Recv got a message of rank', id % src)
    call gt_log_recv('MPI_Recv'//c_null_char, buf)
    digests = digests + gt_check(buf, MSG)
  end subroutine after_recv

  ! A wildcard receive of phase 3 completed in slot k: the status must agree
  ! with the message's id and the tag scheme.
  subroutine after_wild(k, status)
    integer, intent(in) :: k, status(MPI_STATUS_SIZE)
    src = status(MPI_SOURCE)
    tag = status(MPI_TAG)
    id = gt_read(rbuf(:, k))
    if (id % src /= src) call fail('wildcard status source', src)
    if (tag /= 10 + src .and. tag /= 20 + src) call fail('wildcard status tag', tag)
    digests = digests + gt_check(rbuf(:, k), MSG)
  end subroutine after_wild

  ! MPI_Irecv into slot k, logged.
  subroutine post(k, from, tg, comm)
    integer, intent(in) :: k, from, tg, comm
    call gt_unmark(rbuf(:, k))
    call gt_req_recv(info(k), rbuf(:, k))
    call MPI_Irecv(rbuf(:, k), MSG, MPI_INTEGER, from, tg, comm, reqs(k), ierr)
    call check(ierr, 'MPI_Irecv')
    call gt_match(comm, from, tg)
    call gt_log_post('MPI_Irecv'//c_null_char, info(k))
  end subroutine post

  ! MPI_Isend ('std') or MPI_Issend ('sync') from slot k, logged.
  subroutine isend(k, mode, dest, tg, comm)
    integer, intent(in) :: k, dest, tg, comm
    character(len=*), intent(in) :: mode
    id = gt_stamp(sbuf(:, k))
    call gt_fill(sbuf(:, k), MSG)
    call gt_req_send(info(k))
    call gt_match(comm, dest, tg)
    if (mode == 'sync') then
      call MPI_Issend(sbuf(:, k), MSG, MPI_INTEGER, dest, tg, comm, reqs(k), ierr)
      call check(ierr, 'MPI_Issend')
      call gt_log_isend('MPI_Issend'//c_null_char, 'sync'//c_null_char, id, comm, dest, info(k))
    else
      call MPI_Isend(sbuf(:, k), MSG, MPI_INTEGER, dest, tg, comm, reqs(k), ierr)
      call check(ierr, 'MPI_Isend')
      call gt_log_isend('MPI_Isend'//c_null_char, 'std'//c_null_char, id, comm, dest, info(k))
    end if
  end subroutine isend
end program fortran_p2p
