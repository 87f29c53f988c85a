! Neighbourhood collectives from Fortran, as neighbor_cart.c does from C
! (use mpi; with -DUSE_F08 the mpi_f08 module and its handle types): per
! iteration an MPI_Neighbor_alltoall on a periodic 2-D MPI_Cart_create
! grid, before which grid rank 0 computes LATE_US microseconds more (its
! neighbours wait for it), an MPI_Barrier, an MPI_Ineighbor_allgather on a
! non-periodic grid (MPI_PROC_NULL past its edges) completed by MPI_Wait
! and an MPI_Neighbor_alltoallv on the same grid. Grid ranks are world
! ranks (no reordering).
!
! usage: neighbor_cart_f ITERS LATE_US; rank 0 prints
!   iterations=I messages=M collectives=C
program neighbor_cart_f
#ifdef USE_F08
  use mpi_f08
  implicit none
  type(MPI_Comm) :: torus, grid
  type(MPI_Request) :: req
#else
  use mpi
  implicit none
  integer :: torus, grid, req
#endif
  integer :: iters, late, nprocs, rank, ierr, it, d, src, dst, nmsg, total, k
  integer :: dims(2), counts(4), displs(4)
  logical :: periodic(2), open(2)
  double precision :: sendv(4), recvv(4), sum
  character(len=32) :: arg

  call MPI_Init(ierr)
  iters = 20
  late = 0
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) iters
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) late
  end if
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  dims = 0
  periodic = .true.
  open = .false.
  call MPI_Dims_create(nprocs, 2, dims, ierr)
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periodic, .false., torus, ierr)
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, open, .false., grid, ierr)
  ! messages a call sends: 4 on the torus, the processes among the open
  ! grid's neighbours
  nmsg = 0
  do d = 0, 1
    call MPI_Cart_shift(grid, d, 1, src, dst, ierr)
    if (src /= MPI_PROC_NULL) nmsg = nmsg + 1
    if (dst /= MPI_PROC_NULL) nmsg = nmsg + 1
  end do
  counts = 1
  do k = 1, 4
    displs(k) = k - 1
  end do
  sum = 0
  do it = 1, iters
    sendv = rank + it
    if (rank == 0) call spin(200 + late)
    if (rank /= 0) call spin(200)
    call MPI_Neighbor_alltoall(sendv, 1, MPI_DOUBLE_PRECISION, recvv, 1, MPI_DOUBLE_PRECISION, torus, ierr)
    sum = sum + recvv(1)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_Ineighbor_allgather(sendv, 1, MPI_DOUBLE_PRECISION, recvv, 1, MPI_DOUBLE_PRECISION, grid, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call MPI_Neighbor_alltoallv(sendv, counts, displs, MPI_DOUBLE_PRECISION, recvv, counts, displs, &
                                MPI_DOUBLE_PRECISION, grid, ierr)
  end do
  nmsg = iters * (4 + 2 * nmsg)
  call MPI_Reduce(nmsg, total, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,i0,a,i0)', 'iterations=', iters, ' messages=', total, ' collectives=', iters + 1
  call MPI_Comm_free(torus, ierr)
  call MPI_Comm_free(grid, ierr)
  call MPI_Finalize(ierr)

contains

  ! busy work for us microseconds of the wall clock
  subroutine spin(us)
    integer, intent(in) :: us
    integer(kind=8) :: t0, t, rate
    call system_clock(t0, rate)
    do
      call system_clock(t)
      if ((t - t0) * 1000000_8 / rate >= us) exit
    end do
  end subroutine spin
end program neighbor_cart_f
