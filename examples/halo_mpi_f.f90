! Fortran MPI + OpenMP halo exchange (use mpi), as Fortran codes are written:
! a periodic 1-D domain split over the ranks; each step posts mpi_irecv from
! both neighbours, mpi_isend to both (tag 1 rightwards, tag 2 leftwards),
! mpi_waitall, updates its cells in an OpenMP parallel do, then mpi_allreduce
! of the residual. Rank r does (r+1)× the work per cell, so MPI load balance
! is below 1. Every rank sends 2 messages per step: 2·steps·ranks messages.
!
!   usage: mpirun -np N halo_mpi_f [steps=20] [cells=20000]
program halo_mpi_f
   use mpi
   use omp_lib
   implicit none
   integer :: rank, nranks, ierr, provided, steps, n, s, i, k, left, right, reps, argc
   integer :: reqs(4)
   character(len=32) :: arg
   double precision, allocatable :: u(:), v(:)
   double precision :: local, total, x

   call mpi_init_thread(MPI_THREAD_FUNNELED, provided, ierr)
   call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
   call mpi_comm_size(MPI_COMM_WORLD, nranks, ierr)
   steps = 20
   n = 20000
   argc = command_argument_count()
   if (argc >= 1) then
      call get_command_argument(1, arg)
      read (arg, *) steps
   end if
   if (argc >= 2) then
      call get_command_argument(2, arg)
      read (arg, *) n
   end if
   if (steps < 1 .or. n < 2) then
      if (rank == 0) print '(a)', 'usage: halo_mpi_f [steps >= 1] [cells >= 2]'
      call mpi_abort(MPI_COMM_WORLD, 2, ierr)
   end if
   allocate (u(0:n + 1), v(0:n + 1))
   do i = 0, n + 1
      u(i) = dble(rank*n + i)
   end do
   left = modulo(rank - 1, nranks)
   right = modulo(rank + 1, nranks)
   reps = 4*(rank + 1)
   total = 0d0
   do s = 1, steps
      call mpi_irecv(u(0), 1, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, reqs(1), ierr)
      call mpi_irecv(u(n + 1), 1, MPI_DOUBLE_PRECISION, right, 2, MPI_COMM_WORLD, reqs(2), ierr)
      call mpi_isend(u(n), 1, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD, reqs(3), ierr)
      call mpi_isend(u(1), 1, MPI_DOUBLE_PRECISION, left, 2, MPI_COMM_WORLD, reqs(4), ierr)
      call mpi_waitall(4, reqs, MPI_STATUSES_IGNORE, ierr)
      !$omp parallel do private(k, x) schedule(static)
      do i = 1, n
         x = 0.25d0*u(i - 1) + 0.5d0*u(i) + 0.25d0*u(i + 1)
         do k = 1, reps
            x = x*0.9999999d0 + 1d-9
         end do
         v(i) = x
      end do
      !$omp end parallel do
      local = sum(abs(v(1:n) - u(1:n)))
      u(1:n) = v(1:n)
      call mpi_allreduce(local, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
   end do
   if (rank == 0) print '(a,i0,a,i0,a,i0,a,es10.3)', 'halo_mpi_f: ranks=', nranks, ' steps=', steps, &
      ' messages=', 2*steps*nranks, ' residual=', total
   call mpi_finalize(ierr)
end program halo_mpi_f
