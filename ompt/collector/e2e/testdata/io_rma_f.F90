! One-sided halo updates, matched probes, a nonblocking reduction and an
! MPI-IO checkpoint from Fortran, as io_rma.c does from C (use mpi; with
! -DUSE_F08 the mpi_f08 module and its handle types): per
! iteration an MPI_Put into the right neighbour's window between two
! MPI_Win_fence, a ring message received with MPI_Mprobe + MPI_Mrecv, an
! MPI_Iallreduce overlapped with computation and waited for, and every 10
! iterations an MPI_File_write_at_all (every other time as the split
! collective MPI_File_write_at_all_begin/_end). Rank 0 computes LATE_US
! microseconds more each iteration, so the others wait in MPI_Win_fence.
!
! usage: io_rma_f ITERS LATE_US FILE; rank 0 prints
!   iterations=I messages=M collectives=C
program io_rma_f
#ifdef USE_F08
  use mpi_f08
  implicit none
  type(MPI_File) :: fh
  type(MPI_Win) :: win
  type(MPI_Message) :: msg
  type(MPI_Request) :: req, sreq
  type(MPI_Status) :: status
#else
  use mpi
  implicit none
  integer :: fh, win, msg, req, sreq
  integer :: status(MPI_STATUS_SIZE)
#endif
  integer :: iters, late, nprocs, rank, ierr, it, left, right, n
  integer(kind=MPI_ADDRESS_KIND) :: winsize, disp
  integer(kind=MPI_OFFSET_KIND) :: at
  double precision :: halo, value, got, local, global, rec(2)
  integer :: counts(2), totals(2)
  character(len=256) :: arg, path

  call MPI_Init(ierr)
  iters = 20
  late = 0
  path = 'io_rma_f.out'
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) iters
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) late
  end if
  if (command_argument_count() >= 3) call get_command_argument(3, path)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  left = mod(rank + nprocs - 1, nprocs)
  right = mod(rank + 1, nprocs)

  halo = 0
  winsize = 8
  call MPI_Win_create(halo, winsize, 8, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_File_open(MPI_COMM_WORLD, trim(path), MPI_MODE_CREATE + MPI_MODE_WRONLY, MPI_INFO_NULL, fh, ierr)
  if (ierr /= MPI_SUCCESS) stop 'MPI_File_open failed'

  counts = 0
  value = rank
  call MPI_Win_fence(0, win, ierr)
  do it = 1, iters
    local = value
    call MPI_Iallreduce(local, global, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, req, ierr)
    call spin(300 + merge(late, 0, rank == 0))
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    value = value + 1
    disp = 0
    call MPI_Put(value, 1, MPI_DOUBLE_PRECISION, right, disp, 1, MPI_DOUBLE_PRECISION, win, ierr)
    call MPI_Win_fence(0, win, ierr)

    call MPI_Isend(value, 1, MPI_DOUBLE_PRECISION, right, it, MPI_COMM_WORLD, sreq, ierr)
    call MPI_Mprobe(left, it, MPI_COMM_WORLD, msg, status, ierr)
    call MPI_Get_count(status, MPI_DOUBLE_PRECISION, n, ierr)
    call MPI_Mrecv(got, n, MPI_DOUBLE_PRECISION, msg, MPI_STATUS_IGNORE, ierr)
    call MPI_Wait(sreq, MPI_STATUS_IGNORE, ierr)
    counts(1) = counts(1) + 1

    if (mod(it, 10) == 0) then
      rec(1) = value
      rec(2) = got + halo + global
      at = (int(it / 10 - 1, MPI_OFFSET_KIND) * nprocs + rank) * 16
      if (mod(it, 20) == 10) then
        call MPI_File_write_at_all(fh, at, rec, 2, MPI_DOUBLE_PRECISION, MPI_STATUS_IGNORE, ierr)
      else
        call MPI_File_write_at_all_begin(fh, at, rec, 2, MPI_DOUBLE_PRECISION, ierr)
        call MPI_File_write_at_all_end(fh, rec, MPI_STATUS_IGNORE, ierr)
      end if
    end if
  end do
  call MPI_File_close(fh, ierr)
  call MPI_Win_free(win, ierr)
  call MPI_Reduce(counts, totals, 2, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call MPI_File_delete(trim(path), MPI_INFO_NULL, ierr)
    ! the collectives: an MPI_Iallreduce per iteration and the MPI_Reduce
    print '(a,i0,a,i0,a,i0)', 'iterations=', iters, ' messages=', totals(1), ' collectives=', iters + 1
  end if
  call MPI_Finalize(ierr)

contains

  subroutine spin(us)
    integer, intent(in) :: us
    integer(kind=8) :: t0, t1, rate
    call system_clock(t0, rate)
    do
      call system_clock(t1)
      if ((t1 - t0) * 1000000_8 / rate >= us) exit
    end do
  end subroutine spin
end program io_rma_f
