! Fortran's sentinels (MPI_IN_PLACE, MPI_BOTTOM, MPI_STATUS_IGNORE) through
! ptrace's Fortran bindings, which must hand MPI the C sentinels: an
! MPI_Allreduce, an MPI_Alltoallw and an MPI_Ialltoallw in place, an
! MPI_Bcast of MPI_BOTTOM with a datatype of absolute addresses, its
! MPI_Wait's status ignored. Each checks its values.
!
! usage: sentinels_f; rank 0 prints
!   bad=B
program sentinels_f
  use mpi
  implicit none
  integer :: rank, nprocs, ierr, i, bad, total, req, abstype
  integer :: x(2), blen(1)
  integer(kind=MPI_ADDRESS_KIND) :: addr(1)
  integer, allocatable :: types(:), counts(:), displs(:), buf(:)

  call MPI_Init(ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  bad = 0
  ! in place
  x = rank + 1
  call MPI_Allreduce(MPI_IN_PLACE, x, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS .or. any(x /= nprocs * (nprocs + 1) / 2)) bad = bad + 1
  allocate(types(nprocs), counts(nprocs), displs(nprocs), buf(nprocs))
  counts = 1
  types = MPI_INTEGER
  do i = 1, nprocs
    displs(i) = (i - 1) * 4
    buf(i) = rank * 100 + (i - 1)
  end do
  call MPI_Alltoallw(MPI_IN_PLACE, counts, displs, types, buf, counts, displs, types, MPI_COMM_WORLD, ierr)
  do i = 1, nprocs
    if (buf(i) /= (i - 1) * 100 + rank) bad = bad + 1
    buf(i) = rank * 100 + (i - 1)
  end do
  call MPI_Ialltoallw(MPI_IN_PLACE, counts, displs, types, buf, counts, displs, types, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  do i = 1, nprocs
    if (buf(i) /= (i - 1) * 100 + rank) bad = bad + 1
  end do
  ! MPI_BOTTOM and an absolute address
  x = -1
  if (rank == 0) x = 42
  call MPI_Get_address(x, addr(1), ierr)
  blen = 2
  call MPI_Type_create_hindexed(1, blen, addr, MPI_INTEGER, abstype, ierr)
  call MPI_Type_commit(abstype, ierr)
  call MPI_Bcast(MPI_BOTTOM, 1, abstype, 0, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS .or. any(x /= 42)) bad = bad + 1
  call MPI_Type_free(abstype, ierr)
  call MPI_Reduce(bad, total, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0)', 'bad=', total
  call MPI_Finalize(ierr)
end program sentinels_f
