! Reductions in OpenMP loops as Fortran hydrodynamics mini-apps write them
! (CloverLeaf's calc_dt and field_summary, TeaLeaf's tile kernels), built
! with gfortran -fopenmp, which runs on GCC's libgomp entry points
! (ptrace record runs it on LLVM's libomp):
!   - a minimum over a worksharing loop in a parallel region,
!   - a sum in a combined parallel do,
!   - a kernel with its own parallel do reduction called per tile from a
!     loop of an enclosing parallel region (a nested region, inactive:
!     a team of one thread), TeaLeaf's layout.
! At -O2 GCC ends the outlined region of a reduction with a tail call of its
! barrier, so libomp reports that barrier with a return address in its own
! GOMP_parallel (the workers' in its own code too): the report must name the
! program's lines, as for a clang build, never the runtime.
! Usage: reduce_f [steps]; prints the number of outer parallel regions.
module kernels
  implicit none
contains
  subroutine tile_sum(a, lo, hi, s)
    real(8), intent(in) :: a(:)
    integer, intent(in) :: lo, hi
    real(8), intent(out) :: s
    integer :: i
    s = 0
!$omp parallel do reduction(+:s)
    do i = lo, hi
      s = s + sqrt(a(i))
    end do
!$omp end parallel do
  end subroutine tile_sum
end module kernels

program reduce_f
  use kernels
  implicit none
  integer, parameter :: n = 400000, tiles = 4
  integer :: steps, step, i, t
  real(8), allocatable :: a(:), part(:)
  real(8) :: dtmin, total, tiled
  character(len=16) :: arg

  steps = 20
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) steps
  end if
  allocate (a(n), part(tiles))
  do i = 1, n
    a(i) = 1.0d0 + mod(i, 97)
  end do

  tiled = 0
  do step = 1, steps
    dtmin = huge(1.0d0)
!$omp parallel
!$omp do reduction(min:dtmin)
    do i = 1, n
      dtmin = min(dtmin, 0.5d0 / (a(i) + step))
    end do
!$omp end do
!$omp end parallel

    total = 0
!$omp parallel do reduction(+:total)
    do i = 1, n
      total = total + a(i) * dtmin
    end do
!$omp end parallel do

!$omp parallel
!$omp do
    do t = 1, tiles
      call tile_sum(a, (t - 1) * (n / tiles) + 1, t * (n / tiles), part(t))
    end do
!$omp end do
!$omp end parallel
    tiled = tiled + sum(part)
  end do
  print '(a,i0,a,es12.5,a,es12.5)', 'regions=', 3 * steps, ' total=', total, ' tiled=', tiled
end program reduce_f
