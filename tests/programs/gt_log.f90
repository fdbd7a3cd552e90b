! Fortran interfaces to the C ground-truth logger gt.c (see gt.h for what
! each call logs and what the oracle needs), shared by the Fortran test
! programs. In MPICH a Fortran handle is the C handle (MPI_Comm_f2c is a
! cast), so handles go to gt as the integers Fortran holds (with mpi_f08:
! their MPI_VAL). Strings passed to gt must end in c_null_char.
module gt_log
  use iso_c_binding
  implicit none

  type, bind(C) :: gt_msgid
    integer(c_int) :: src, cnt
  end type gt_msgid

  ! gt.h's gt_req: the request's log name and its receive buffer.
  type, bind(C) :: gt_req
    character(kind=c_char) :: name(16)
    type(c_ptr) :: rbuf
    integer(c_int) :: cancel, cancelled
  end type gt_req

  ! gt.h's gt_mhandle: the log name of a matched-probe message.
  type, bind(C) :: gt_mhandle
    character(kind=c_char) :: name(16)
  end type gt_mhandle

  interface
    subroutine gt_init() bind(C, name='gt_init')
    end subroutine
    subroutine gt_finalize() bind(C, name='gt_finalize')
    end subroutine
    function gt_stamp(buf) bind(C, name='gt_stamp') result(id)
      import :: c_int, gt_msgid
      integer(c_int), intent(inout) :: buf(*)
      type(gt_msgid) :: id
    end function
    function gt_read(buf) bind(C, name='gt_read') result(id)
      import :: c_int, gt_msgid
      integer(c_int), intent(in) :: buf(*)
      type(gt_msgid) :: id
    end function
    subroutine gt_fill(buf, count) bind(C, name='gt_fill')
      import :: c_int
      integer(c_int), intent(inout) :: buf(*)
      integer(c_int), value :: count
    end subroutine
    function gt_check(buf, count) bind(C, name='gt_check') result(digest)
      import :: c_int, c_long
      integer(c_int), intent(in) :: buf(*)
      integer(c_int), value :: count
      integer(c_long) :: digest
    end function
    subroutine gt_req_send(r) bind(C, name='gt_req_send')
      import :: gt_req
      type(gt_req), intent(out) :: r
    end subroutine
    ! gt keeps the address of rbuf: pass a contiguous TARGET array.
    subroutine gt_req_recv(r, rbuf) bind(C, name='gt_req_recv')
      import :: c_int, gt_req
      type(gt_req), intent(out) :: r
      integer(c_int), intent(in) :: rbuf(*)
    end subroutine
    subroutine gt_unmark(rbuf) bind(C, name='gt_unmark')
      import :: c_int
      integer(c_int), intent(inout) :: rbuf(*)
    end subroutine
    subroutine gt_comm_add(comm, name) bind(C, name='gt_comm_add')
      import :: c_int, c_char
      integer(c_int), value :: comm
      character(kind=c_char), intent(in) :: name(*)
    end subroutine
    subroutine gt_comm_remove(comm) bind(C, name='gt_comm_remove')
      import :: c_int
      integer(c_int), value :: comm
    end subroutine
    ! The next send/recv/post/mprobe op logs this communicator, peer
    ! (communicator rank or MPI_ANY_SOURCE) and tag (gt.h).
    subroutine gt_match(comm, peer, tag) bind(C, name='gt_match')
      import :: c_int
      integer(c_int), value :: comm, peer, tag
    end subroutine
    subroutine gt_begin(call) bind(C, name='gt_begin')
      import :: c_char
      character(kind=c_char), intent(in) :: call(*)
    end subroutine
    subroutine gt_end() bind(C, name='gt_end')
    end subroutine
    subroutine gt_op_send(mode, msg, dest_world, req) bind(C, name='gt_op_send')
      import :: c_int, c_char, gt_msgid
      character(kind=c_char), intent(in) :: mode(*), req(*)
      type(gt_msgid), value :: msg
      integer(c_int), value :: dest_world
    end subroutine
    subroutine gt_op_post(req) bind(C, name='gt_op_post')
      import :: c_char
      character(kind=c_char), intent(in) :: req(*)
    end subroutine
    subroutine gt_op_init(req, type) bind(C, name='gt_op_init')
      import :: c_char
      character(kind=c_char), intent(in) :: req(*), type(*)
    end subroutine
    subroutine gt_op_free(req) bind(C, name='gt_op_free')
      import :: c_char
      character(kind=c_char), intent(in) :: req(*)
    end subroutine
    subroutine gt_mhandle_new(h) bind(C, name='gt_mhandle_new')
      import :: gt_mhandle
      type(gt_mhandle), intent(out) :: h
    end subroutine
    subroutine gt_op_mprobe(h) bind(C, name='gt_op_mprobe')
      import :: gt_mhandle
      type(gt_mhandle), intent(in) :: h
    end subroutine
    subroutine gt_op_mrecv(h, msg) bind(C, name='gt_op_mrecv')
      import :: gt_mhandle, gt_msgid
      type(gt_mhandle), intent(in) :: h
      type(gt_msgid), value :: msg
    end subroutine
    function gt_world_of(comm, rank) bind(C, name='gt_world_of') result(world)
      import :: c_int
      integer(c_int), value :: comm, rank
      integer(c_int) :: world
    end function
    subroutine gt_log_send(call, mode, msg, comm, dest) bind(C, name='gt_log_send')
      import :: c_int, c_char, gt_msgid
      character(kind=c_char), intent(in) :: call(*), mode(*)
      type(gt_msgid), value :: msg
      integer(c_int), value :: comm, dest
    end subroutine
    subroutine gt_log_isend(call, mode, msg, comm, dest, r) bind(C, name='gt_log_isend')
      import :: c_int, c_char, gt_msgid, gt_req
      character(kind=c_char), intent(in) :: call(*), mode(*)
      type(gt_msgid), value :: msg
      integer(c_int), value :: comm, dest
      type(gt_req), intent(in) :: r
    end subroutine
    subroutine gt_log_recv(call, rbuf) bind(C, name='gt_log_recv')
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: call(*)
      integer(c_int), intent(in) :: rbuf(*)
    end subroutine
    subroutine gt_log_post(call, r) bind(C, name='gt_log_post')
      import :: c_char, gt_req
      character(kind=c_char), intent(in) :: call(*)
      type(gt_req), intent(in) :: r
    end subroutine
    subroutine gt_log_coll(call, kind, comm, root) bind(C, name='gt_log_coll')
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: call(*), kind(*)
      integer(c_int), value :: comm, root
    end subroutine
    ! One completion line for info(idx(1..n)+1); idx holds 0-based indices.
    subroutine gt_log_icoll(call, kind, comm, root, r) bind(C, name='gt_log_icoll')
      import :: c_int, c_char, gt_req
      character(kind=c_char), intent(in) :: call(*), kind(*)
      integer(c_int), value :: comm, root
      type(gt_req), intent(in) :: r
    end subroutine
    subroutine gt_log_completed(call, info, idx, n) bind(C, name='gt_log_completed')
      import :: c_int, c_char, gt_req
      character(kind=c_char), intent(in) :: call(*)
      type(gt_req), intent(in) :: info(*)
      integer(c_int), intent(in) :: idx(*)
      integer(c_int), value :: n
    end subroutine
  end interface

contains

  subroutine fail(what, code)
    use mpi
    character(len=*), intent(in) :: what
    integer, intent(in) :: code
    integer :: rank, ierr
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    write (0, '(A,I0,A,A,A,I0)') '[rank ', rank, '] test failure: ', what, ' ', code
    flush (0)
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    stop 1
  end subroutine fail

  subroutine check(ierr, what)
    use mpi
    integer, intent(in) :: ierr
    character(len=*), intent(in) :: what
    if (ierr /= MPI_SUCCESS) call fail(what//' returned', ierr)
  end subroutine check

  ! Logs the completion of the single request info(k).
  subroutine log_one(call, info, k)
    character(len=*), intent(in) :: call
    type(gt_req), intent(in) :: info(*)
    integer, intent(in) :: k
    integer(c_int) :: idx(1)
    idx(1) = k - 1
    call gt_log_completed(call//c_null_char, info, idx, 1_c_int)
  end subroutine log_one

  ! Logs the completion of info(1..n).
  subroutine log_all(call, info, n)
    character(len=*), intent(in) :: call
    type(gt_req), intent(in) :: info(*)
    integer, intent(in) :: n
    integer(c_int) :: idx(64)
    integer :: i
    do i = 1, n
      idx(i) = i - 1
    end do
    call gt_log_completed(call//c_null_char, info, idx, int(n, c_int))
  end subroutine log_all
end module gt_log
