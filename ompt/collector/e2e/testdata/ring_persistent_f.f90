! A ring of ranks exchanging with both neighbours through persistent
! requests from Fortran (use mpi), as stencil codes in Fortran often do:
! MPI_Send_init / MPI_Recv_init once, then per iteration MPI_Startall +
! MPI_Waitall, one more persistent pair run with MPI_Start + MPI_Wait, and
! an MPI_Sendrecv_replace; MPI_Request_free at the end.
!
! usage: ring_persistent_f ITERS; rank 0 prints
!   messages=M collectives=K sum=S
program ring_persistent_f
  use mpi
  implicit none
  integer :: iters, nprocs, world, ierr, it, left, right, token, k
  integer :: reqs(4), extra(2), counts(2), totals(2)
  double precision :: sendl, sendr, recvl, recvr, one, got, total
  character(len=32) :: arg

  call MPI_Init(ierr)
  iters = 50
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) iters
  end if
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, world, ierr)
  left = mod(world + nprocs - 1, nprocs)
  right = mod(world + 1, nprocs)
  call MPI_Send_init(sendl, 1, MPI_DOUBLE_PRECISION, left, 0, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Send_init(sendr, 1, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Recv_init(recvr, 1, MPI_DOUBLE_PRECISION, right, 0, MPI_COMM_WORLD, reqs(3), ierr)
  call MPI_Recv_init(recvl, 1, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, reqs(4), ierr)
  call MPI_Ssend_init(one, 1, MPI_DOUBLE_PRECISION, right, 2, MPI_COMM_WORLD, extra(1), ierr)
  call MPI_Recv_init(got, 1, MPI_DOUBLE_PRECISION, left, 2, MPI_COMM_WORLD, extra(2), ierr)
  counts = 0
  total = 0
  token = world
  do it = 1, iters
    sendl = world + it
    sendr = world - it
    call MPI_Startall(4, reqs, ierr)
    call MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE, ierr)
    one = recvl + recvr
    do k = 1, 2
      call MPI_Start(extra(k), ierr)
    end do
    call MPI_Wait(extra(2), MPI_STATUS_IGNORE, ierr)
    call MPI_Wait(extra(1), MPI_STATUS_IGNORE, ierr)
    call MPI_Sendrecv_replace(token, 1, MPI_INTEGER, right, 3, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    total = total + got
    counts(1) = counts(1) + 4
  end do
  do k = 1, 4
    call MPI_Request_free(reqs(k), ierr)
  end do
  do k = 1, 2
    call MPI_Request_free(extra(k), ierr)
  end do
  call MPI_Reduce(counts, totals, 2, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (world == 0) then
    write (*, '(a,i0,a,i0,a,f0.1)') 'messages=', totals(1), ' collectives=', 1, ' sum=', total
  end if
  call MPI_Finalize(ierr)
end program ring_persistent_f
