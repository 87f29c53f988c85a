! 2-D Jacobi iteration on a Cartesian process grid, pure MPI from Fortran
! (use mpi), as jacobi_cart.c: MPI_Dims_create + MPI_Cart_create (reorder
! allowed), MPI_Cart_shift, an MPI_Sendrecv halo per direction (u(j, i):
! a grid row i is contiguous in Fortran, a column j an MPI_Type_vector) and
! an MPI_Allreduce of the residual every iteration.
!
! usage: jacobi_cart_f N ITERS; prints, as jacobi_cart.c,
!   cart rank=W cart_rank=C coords=I,J
!   messages=M collectives=K residual=R
program jacobi_cart_f
  use mpi
  implicit none
  integer :: n, iters, nprocs, world, rank, ierr, it, i, j, sends
  integer :: dims(2), coords(2), cart, north, south, west, east, column, counts(2), totals(2)
  logical :: periods(2)
  integer :: nx, ny
  double precision, allocatable :: u(:, :), v(:, :)
  double precision :: local, residual
  character(len=32) :: arg

  call MPI_Init(ierr)
  n = 256
  iters = 100
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) iters
  end if
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, world, ierr)
  dims = 0
  periods = .false.
  call MPI_Dims_create(nprocs, 2, dims, ierr)
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .true., cart, ierr)
  call MPI_Comm_rank(cart, rank, ierr)
  call MPI_Cart_coords(cart, rank, 2, coords, ierr)
  write (*, '(a,i0,a,i0,a,i0,a,i0)') 'cart rank=', world, ' cart_rank=', rank, ' coords=', coords(1), ',', coords(2)
  flush (6)
  ! dimension 0: rows i (north-south), dimension 1: columns j (west-east)
  call MPI_Cart_shift(cart, 0, 1, north, south, ierr)
  call MPI_Cart_shift(cart, 1, 1, west, east, ierr)
  nx = n/dims(1)
  ny = n/dims(2)
  allocate (u(0:ny + 1, 0:nx + 1), v(0:ny + 1, 0:nx + 1))
  u = 0
  v = 0
  if (coords(1) == 0) then
    u(:, 0) = 1
    v(:, 0) = 1
  end if
  call MPI_Type_vector(nx, 1, ny + 2, MPI_DOUBLE_PRECISION, column, ierr)
  call MPI_Type_commit(column, ierr)
  sends = 0
  if (north /= MPI_PROC_NULL) sends = sends + 1
  if (south /= MPI_PROC_NULL) sends = sends + 1
  if (west /= MPI_PROC_NULL) sends = sends + 1
  if (east /= MPI_PROC_NULL) sends = sends + 1
  counts = 0
  residual = 0
  do it = 1, iters
    call MPI_Sendrecv(u(1, 1), ny, MPI_DOUBLE_PRECISION, north, 0, u(1, nx + 1), ny, MPI_DOUBLE_PRECISION, &
                      south, 0, cart, MPI_STATUS_IGNORE, ierr)
    call MPI_Sendrecv(u(1, nx), ny, MPI_DOUBLE_PRECISION, south, 1, u(1, 0), ny, MPI_DOUBLE_PRECISION, &
                      north, 1, cart, MPI_STATUS_IGNORE, ierr)
    call MPI_Sendrecv(u(1, 1), 1, column, west, 2, u(ny + 1, 1), 1, column, east, 2, cart, MPI_STATUS_IGNORE, ierr)
    call MPI_Sendrecv(u(ny, 1), 1, column, east, 3, u(0, 1), 1, column, west, 3, cart, MPI_STATUS_IGNORE, ierr)
    counts(1) = counts(1) + sends
    local = 0
    do i = 1, nx
      do j = 1, ny
        v(j, i) = 0.25d0*(u(j, i - 1) + u(j, i + 1) + u(j - 1, i) + u(j + 1, i))
        local = local + (v(j, i) - u(j, i))**2
      end do
    end do
    u(1:ny, 1:nx) = v(1:ny, 1:nx)
    call MPI_Allreduce(local, residual, 1, MPI_DOUBLE_PRECISION, MPI_SUM, cart, ierr)
    if (rank == 0) counts(2) = counts(2) + 1
  end do
  call MPI_Reduce(counts, totals, 2, MPI_INTEGER, MPI_SUM, 0, cart, ierr)
  if (rank == 0) write (*, '(a,i0,a,i0,a,es12.5)') 'messages=', totals(1), ' collectives=', totals(2) + 1, &
    ' residual=', residual
  call MPI_Type_free(column, ierr)
  call MPI_Comm_free(cart, ierr)
  call MPI_Finalize(ierr)
end program jacobi_cart_f
