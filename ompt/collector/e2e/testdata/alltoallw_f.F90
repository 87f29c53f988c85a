! The typed collectives from Fortran (use mpi; with -DUSE_F08 the mpi_f08
! module and its handle types), whose datatype arrays the bindings
! convert: per iteration an MPI_Alltoallw and an MPI_Ialltoallw (completed
! by MPI_Wait after some computation) on MPI_COMM_WORLD, an
! MPI_Neighbor_alltoallw on a periodic 2-D MPI_Cart_create grid and an
! MPI_Ineighbor_alltoallw (completed by MPI_Wait) on a non-periodic one
! (MPI_PROC_NULL past its edges). Each peer's block is one double, sent as
! MPI_DOUBLE_PRECISION or as a contiguous type of one double by turns, so
! every element of the arrays matters; the displacements are in bytes.
! A value not where the call put it is an error.
!
! usage: alltoallw_f ITERS; rank 0 prints
!   iterations=I messages=M collectives=C errors=E
program alltoallw_f
#ifdef USE_F08
  use mpi_f08
  implicit none
  type(MPI_Comm) :: torus, grid
  type(MPI_Request) :: req
  type(MPI_Datatype) :: one, stypes(16), rtypes(16), ntypes(4)
#else
  use mpi
  implicit none
  integer :: torus, grid, req
  integer :: one, stypes(16), rtypes(16), ntypes(4)
#endif
  integer :: iters, nprocs, rank, ierr, it, i, d, src, dst, nmsg, errs, sums(2), totals(2)
  integer :: dims(2), counts(16), displs(16), ncounts(4), nbr(4)
  integer(kind=MPI_ADDRESS_KIND) :: ndispls(4)
  logical :: periodic(2), open(2)
  ! the nonblocking calls read and write them until their MPI_Wait
  double precision, asynchronous :: sendv(16), recvv(16), nsend(4), nrecv(4)
  character(len=32) :: arg

  call MPI_Init(ierr)
  iters = 20
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) iters
  end if
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  if (nprocs > 16) stop 'at most 16 ranks'
  call MPI_Type_contiguous(1, MPI_DOUBLE_PRECISION, one, ierr)
  call MPI_Type_commit(one, ierr)
  ! peer i's block: one double at byte 8 i, its type by the pair's parity
  ! (both ends of a message name the same one)
  do i = 1, nprocs
    counts(i) = 1
    displs(i) = 8 * (i - 1)
    stypes(i) = MPI_DOUBLE_PRECISION
    if (mod(rank + i - 1, 2) == 1) stypes(i) = one
    rtypes(i) = stypes(i)
  end do

  dims = 0
  periodic = .true.
  open = .false.
  call MPI_Dims_create(nprocs, 2, dims, ierr)
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periodic, .false., torus, ierr)
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, open, .false., grid, ierr)
  ! the neighbours in MPI's order (dimension 0 source, destination, …),
  ! and the open grid's count of processes among them
  nmsg = 0
  do d = 0, 1
    call MPI_Cart_shift(grid, d, 1, src, dst, ierr)
    nbr(2 * d + 1) = src
    nbr(2 * d + 2) = dst
    if (src /= MPI_PROC_NULL) nmsg = nmsg + 1
    if (dst /= MPI_PROC_NULL) nmsg = nmsg + 1
  end do
  do i = 1, 4
    ncounts(i) = 1
    ndispls(i) = 8 * (i - 1)
    ntypes(i) = MPI_DOUBLE_PRECISION
    if (mod(i, 2) == 0) ntypes(i) = one
  end do

  errs = 0
  do it = 1, iters
    do i = 1, nprocs
      sendv(i) = rank * 100 + (i - 1) + it * 10000
    end do
    recvv = -1
    call MPI_Alltoallw(sendv, counts, displs, stypes, recvv, counts, displs, rtypes, MPI_COMM_WORLD, ierr)
    call check_all()
    recvv = -1
    call MPI_Ialltoallw(sendv, counts, displs, stypes, recvv, counts, displs, rtypes, MPI_COMM_WORLD, req, ierr)
    call spin(200)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check_all()

    ! every neighbour's block is the sender's rank and the iteration
    nsend = rank + it * 100
    nrecv = -1
    call MPI_Neighbor_alltoallw(nsend, ncounts, ndispls, ntypes, nrecv, ncounts, ndispls, ntypes, torus, ierr)
    call MPI_Cart_shift(torus, 0, 1, src, dst, ierr)
    if (nrecv(1) /= src + it * 100) errs = errs + 1
    nrecv = -1
    call MPI_Ineighbor_alltoallw(nsend, ncounts, ndispls, ntypes, nrecv, ncounts, ndispls, ntypes, grid, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    do i = 1, 4
      if (nbr(i) /= MPI_PROC_NULL .and. nrecv(i) /= nbr(i) + it * 100) errs = errs + 1
      if (nbr(i) == MPI_PROC_NULL .and. nrecv(i) /= -1) errs = errs + 1
    end do
  end do
  call MPI_Type_free(one, ierr)

  sums(1) = iters * (4 + nmsg) ! the torus's 4 messages, the open grid's nmsg
  sums(2) = errs
  call MPI_Reduce(sums, totals, 2, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  ! the collectives: an MPI_Alltoallw and an MPI_Ialltoallw per iteration, the MPI_Reduce
  if (rank == 0) print '(a,i0,a,i0,a,i0,a,i0)', 'iterations=', iters, ' messages=', totals(1), &
                       ' collectives=', 2 * iters + 1, ' errors=', totals(2)
  call MPI_Comm_free(torus, ierr)
  call MPI_Comm_free(grid, ierr)
  call MPI_Finalize(ierr)

contains

  ! peer j's block of rank r: r * 100 + my rank, in the iteration
  subroutine check_all()
    integer :: j
    do j = 1, nprocs
      if (recvv(j) /= (j - 1) * 100 + rank + it * 10000) errs = errs + 1
    end do
  end subroutine check_all

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
end program alltoallw_f
