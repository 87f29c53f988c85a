! One-sided synchronisation that waits, from Fortran, as rma_fence.c does
! from C (use mpi; with -DUSE_F08 the mpi_f08 module and its handle
! types): four ranks put into their right neighbour's window on
! MPI_COMM_WORLD, made with MPI_Win_allocate (baseptr a TYPE(C_PTR): use
! mpi's MPI_Win_allocate_cptr), each epoch closed by MPI_Win_fence. Rank
! LATE (1) sleeps LATE_US microseconds more before each fence of that
! window, so the other three wait for it there (Wait at Fence); it also
! enters MPI_Win_allocate CREATE_US late and that window's MPI_Win_free
! FREE_US late (Wait at Create, Wait at Free). Beside it, on time: a
! shared-memory window (MPI_Win_allocate_shared on the node's
! communicator; with use mpi its baseptr an INTEGER(KIND=MPI_ADDRESS_KIND))
! each rank writes through its pointer and reads its left neighbour's part
! of with MPI_Get; a dynamic window (MPI_Win_create_dynamic), made and
! freed; and MPI_Win_create on a communicator of the even ranks (the odd
! ones make none: rma_fence.c says why), one put each between two fences.
! Every rank sleeps 2 ms an iteration besides. A value not where the puts
! and gets put it is an error.
!
! usage: rma_fence_f ITERS LATE_US CREATE_US FREE_US; rank 0 prints
!   iterations=I fences=F errors=E
program rma_fence_f
  use, intrinsic :: iso_c_binding, only : c_ptr, c_int, c_f_pointer
#ifdef USE_F08
  use mpi_f08
  implicit none
  type(MPI_Comm) :: node, half
  type(MPI_Win) :: world_win, shm_win, dyn_win, half_win
  type(c_ptr) :: shm_ptr
#else
  use mpi
  implicit none
  integer :: node, half
  integer :: world_win, shm_win, dyn_win, half_win
  integer(kind=MPI_ADDRESS_KIND) :: shm_addr
  type(c_ptr) :: shm_ptr
#endif
  integer, parameter :: late_rank = 1
  type(c_ptr) :: world_ptr
  double precision, pointer :: ring(:), mine
  ! got and pair change in a fence, not in a call they are passed to:
  ! VOLATILE tells the compiler (gfortran -O1 kept pair's value from before
  ! the fence, TARGET did not stop it). With mpi_f08, TARGET: gfortran
  ! passes a VOLATILE actual to MPICH's assumed-rank dummies as a copy, so
  ! the window was not pair; and arrays: a scalar window read stale there.
  double precision :: value
#ifdef USE_F08
  double precision, target :: got(1), pair(1)
#else
  double precision, volatile :: got(1), pair(1)
#endif
  integer(kind=MPI_ADDRESS_KIND) :: wsize, disp
  integer :: iters, late, create, free_us, nprocs, rank, ierr, it, right, left
  integer :: hrank, hsize, partner, counts(2), totals(2)
  character(len=32) :: arg
  interface
    integer(c_int) function usleep(us) bind(C, name='usleep')
      import :: c_int
      integer(c_int), value :: us
    end function usleep
  end interface

  call MPI_Init(ierr)
  iters = 10
  late = 0
  create = 0
  free_us = 0
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) iters
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) late
  end if
  if (command_argument_count() >= 3) then
    call get_command_argument(3, arg)
    read (arg, *) create
  end if
  if (command_argument_count() >= 4) then
    call get_command_argument(4, arg)
    read (arg, *) free_us
  end if
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  counts = 0 ! fences, errors

  call MPI_Comm_split(MPI_COMM_WORLD, merge(0, MPI_UNDEFINED, mod(rank, 2) == 0), rank, half, ierr)
  call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, node, ierr)

  ! the world window, rank 1 late into its creation
  if (rank == late_rank) call sleep_us(create)
  ! two slots, used by turns: a put of the next epoch never lands where
  ! the check of this one reads
  wsize = 16
  call MPI_Win_allocate(wsize, 8, MPI_INFO_NULL, MPI_COMM_WORLD, world_ptr, world_win, ierr)
  call c_f_pointer(world_ptr, ring, [2])
  ring = -1
  wsize = 8

  ! the shared-memory window: written through baseptr, read by the left
  ! neighbour's MPI_Get
#ifdef USE_F08
  call MPI_Win_allocate_shared(wsize, 8, MPI_INFO_NULL, node, shm_ptr, shm_win, ierr)
#else
  call MPI_Win_allocate_shared(wsize, 8, MPI_INFO_NULL, node, shm_addr, shm_win, ierr)
  shm_ptr = transfer(shm_addr, shm_ptr)
#endif
  call c_f_pointer(shm_ptr, mine)
  mine = 100 + rank
  call fence(shm_win)
  disp = 0
  got(1) = -1
  call MPI_Get(got, 1, MPI_DOUBLE_PRECISION, left, disp, 1, MPI_DOUBLE_PRECISION, shm_win, ierr)
  call fence(shm_win)
  if (got(1) /= 100 + left) counts(2) = counts(2) + 1

  call MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, dyn_win, ierr)

  pair(1) = -1
  half_win = MPI_WIN_NULL
  if (half /= MPI_COMM_NULL) then
    call MPI_Comm_rank(half, hrank, ierr)
    call MPI_Comm_size(half, hsize, ierr)
    partner = mod(hrank + 1, hsize)
    call MPI_Win_create(pair, wsize, 8, MPI_INFO_NULL, half, half_win, ierr)
    call fence(half_win)
    value = 1000 + hrank
    call MPI_Put(value, 1, MPI_DOUBLE_PRECISION, partner, disp, 1, MPI_DOUBLE_PRECISION, half_win, ierr)
    call fence(half_win)
    if (pair(1) /= 1000 + mod(hrank + hsize - 1, hsize)) counts(2) = counts(2) + 1
  end if

  call fence(world_win)
  do it = 1, iters
    call sleep_us(2000 + merge(late, 0, rank == late_rank))
    value = rank * 1000 + it
    disp = mod(it, 2)
    call MPI_Put(value, 1, MPI_DOUBLE_PRECISION, right, disp, 1, MPI_DOUBLE_PRECISION, world_win, ierr)
    call fence(world_win)
    if (ring(disp + 1) /= left * 1000 + it) counts(2) = counts(2) + 1
  end do

  if (half_win /= MPI_WIN_NULL) call MPI_Win_free(half_win, ierr)
  if (half_win /= MPI_WIN_NULL) counts(2) = counts(2) + 1
  call MPI_Win_free(dyn_win, ierr)
  call MPI_Win_free(shm_win, ierr)
  if (rank == late_rank) call sleep_us(free_us)
  call MPI_Win_free(world_win, ierr)
  if (world_win /= MPI_WIN_NULL) counts(2) = counts(2) + 1
  if (half /= MPI_COMM_NULL) call MPI_Comm_free(half, ierr)
  call MPI_Comm_free(node, ierr)

  call MPI_Reduce(counts, totals, 2, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,i0,a,i0)', 'iterations=', iters, ' fences=', totals(1), ' errors=', totals(2)
  call MPI_Finalize(ierr)

contains

  subroutine fence(w)
#ifdef USE_F08
    type(MPI_Win), intent(in) :: w
#else
    integer, intent(in) :: w
#endif
    integer :: e
    call MPI_Win_fence(0, w, e)
    counts(1) = counts(1) + 1
  end subroutine fence

  ! sleeps: four ranks on a loaded machine keep the lateness (rma_fence.c)
  subroutine sleep_us(us)
    integer, intent(in) :: us
    integer(c_int) :: rc
    if (us > 0) rc = usleep(int(us, c_int))
  end subroutine sleep_us
end program rma_fence_f
