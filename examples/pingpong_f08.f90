! mpi_f08 ping-pong: rank 0 sends n messages to rank 1 with mpi_send and
! receives each back with mpi_recv (blocking, TYPE(MPI_Comm) handles), then
! both ranks meet in mpi_barrier. 2·n messages.
!
!   usage: mpirun -np 2 pingpong_f08 [n=10]
program pingpong_f08
   use mpi_f08
   implicit none
   integer :: rank, nranks, n, i, argc
   character(len=32) :: arg
   double precision :: buf(64)
   type(MPI_Status) :: st

   call MPI_Init()
   call MPI_Comm_rank(MPI_COMM_WORLD, rank)
   call MPI_Comm_size(MPI_COMM_WORLD, nranks)
   n = 10
   argc = command_argument_count()
   if (argc >= 1) then
      call get_command_argument(1, arg)
      read (arg, *) n
   end if
   if (nranks /= 2 .or. n < 1) then
      if (rank == 0) print '(a)', 'usage: mpirun -np 2 pingpong_f08 [n >= 1]'
      call MPI_Abort(MPI_COMM_WORLD, 2)
   end if
   buf = dble(rank)
   do i = 1, n
      if (rank == 0) then
         call MPI_Send(buf, 64, MPI_DOUBLE_PRECISION, 1, i, MPI_COMM_WORLD)
         call MPI_Recv(buf, 64, MPI_DOUBLE_PRECISION, 1, i, MPI_COMM_WORLD, st)
      else
         call MPI_Recv(buf, 64, MPI_DOUBLE_PRECISION, 0, i, MPI_COMM_WORLD, st)
         call MPI_Send(buf, 64, MPI_DOUBLE_PRECISION, 0, st%MPI_TAG, MPI_COMM_WORLD)
      end if
   end do
   call MPI_Barrier(MPI_COMM_WORLD)
   if (rank == 0) print '(a,i0)', 'pingpong_f08: messages=', 2*n
   call MPI_Finalize()
end program pingpong_f08
