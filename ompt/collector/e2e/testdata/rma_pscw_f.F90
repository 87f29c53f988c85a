! General active target synchronisation that waits, from Fortran, as
! rma_pscw.c does from C (use mpi; with -DUSE_F08 the mpi_f08 module and
! its handle types): ranks 0 and 1 are targets exposing a window
! (MPI_Win_create on MPI_COMM_WORLD) to the origins 2 and 3 with
! MPI_Win_post; each origin opens an access epoch to both with
! MPI_Win_start, puts a value into each and closes it with
! MPI_Win_complete; the targets close theirs with MPI_Win_wait, or, in
! every fourth iteration, by polling MPI_Win_test. Target 1 sleeps POST_US
! microseconds before each post (the origins wait in MPI_Win_start: Late
! Post), origin 3 COMPLETE_US before each complete (the targets wait in
! MPI_Win_wait: Early Wait).
!
! usage: rma_pscw_f ITERS POST_US COMPLETE_US; rank 0 prints
!   iterations=I epochs=E tests=T sum=S
program rma_pscw_f
  use, intrinsic :: iso_c_binding, only : c_int
#ifdef USE_F08
  use mpi_f08
  implicit none
  type(MPI_Win) :: win
  type(MPI_Group) :: world, targets, origins
  double precision, target :: buf(2)
#else
  use mpi
  implicit none
  integer :: win, world, targets, origins
  double precision, volatile :: buf(2)
#endif
  integer :: iters, post_us, complete_us, nprocs, rank, ierr, it, k
  integer :: t(2), o(2), mine(2), all(2)
  integer(kind=MPI_ADDRESS_KIND) :: wsize, disp
  double precision :: value, total, sum
  logical :: flag
  character(len=32) :: arg
  interface
    integer(c_int) function usleep(us) bind(C, name='usleep')
      import :: c_int
      integer(c_int), value :: us
    end function usleep
  end interface

  call MPI_Init(ierr)
  iters = 8
  post_us = 0
  complete_us = 0
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) iters
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) post_us
  end if
  if (command_argument_count() >= 3) then
    call get_command_argument(3, arg)
    read (arg, *) complete_us
  end if
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  if (nprocs /= 4) then
    if (rank == 0) print '(a)', 'rma_pscw_f: needs 4 ranks'
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  buf = 0
  wsize = 16
  call MPI_Win_create(buf, wsize, 8, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_Comm_group(MPI_COMM_WORLD, world, ierr)
  t = [0, 1]
  o = [2, 3]
  call MPI_Group_incl(world, 2, t, targets, ierr)
  call MPI_Group_incl(world, 2, o, origins, ierr)

  mine = 0 ! epochs, tests
  sum = 0
  value = rank
  do it = 0, iters - 1
    if (rank < 2) then
      if (rank == 1) call sleep_us(post_us)
      call MPI_Win_post(origins, 0, win, ierr)
      if (mod(it, 4) == 3) then
        flag = .false.
        do while (.not. flag)
          call MPI_Win_test(win, flag, ierr)
          mine(2) = mine(2) + 1
          if (.not. flag) call sleep_us(200)
        end do
      else
        call MPI_Win_wait(win, ierr)
      end if
      sum = sum + buf(1) + buf(2)
    else
      call MPI_Win_start(targets, 0, win, ierr)
      value = value + 1
      disp = rank - 2
      do k = 1, 2
        call MPI_Put(value, 1, MPI_DOUBLE_PRECISION, t(k), disp, 1, MPI_DOUBLE_PRECISION, win, ierr)
      end do
      if (rank == 3) call sleep_us(complete_us)
      call MPI_Win_complete(win, ierr)
      mine(1) = mine(1) + 1
    end if
  end do
  call MPI_Group_free(targets, ierr)
  call MPI_Group_free(origins, ierr)
  call MPI_Group_free(world, ierr)
  call MPI_Win_free(win, ierr)

  call MPI_Reduce(sum, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  call MPI_Reduce(mine, all, 2, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,i0,a,i0,a,i0)', 'iterations=', iters, ' epochs=', all(1), ' tests=', all(2), &
    ' sum=', nint(total)
  call MPI_Finalize(ierr)

contains

  ! sleeps: four ranks on a loaded machine keep the lateness (rma_pscw.c)
  subroutine sleep_us(us)
    integer, intent(in) :: us
    integer(c_int) :: rc
    if (us > 0) rc = usleep(int(us, c_int))
  end subroutine sleep_us
end program rma_pscw_f
