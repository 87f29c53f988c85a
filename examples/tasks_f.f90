! Blocked sum with OpenMP tasks in Fortran (gfortran -fopenmp, or flang):
! for each of nb blocks one task fills it (depend(out) on the block) and
! one adds it to the total (depend(in) on the block, depend(inout) on the
! total), so the tasks form nb fill→add pairs and a chain of adds:
! 2·nb explicit tasks, 2·nb−1 dependence edges.
!
!   usage: tasks_f [nb=16]
program tasks_f
   use omp_lib
   implicit none
   integer, parameter :: bs = 20000
   integer :: nb, i, j, argc
   character(len=32) :: arg
   double precision, allocatable :: a(:, :)
   double precision :: total, expect

   nb = 16
   argc = command_argument_count()
   if (argc >= 1) then
      call get_command_argument(1, arg)
      read (arg, *) nb
   end if
   if (nb < 1 .or. nb > 100000) then
      print '(a)', 'usage: tasks_f [1 <= nb <= 100000]'
      stop 2
   end if
   allocate (a(bs, nb))
   total = 0d0
   !$omp parallel
   !$omp single
   do i = 1, nb
      !$omp task depend(out: a(1, i)) firstprivate(i) private(j) shared(a)
      do j = 1, bs
         a(j, i) = dble(i) + dble(j)*1d-6
      end do
      !$omp end task
      !$omp task depend(in: a(1, i)) depend(inout: total) firstprivate(i) shared(a, total)
      total = total + sum(a(:, i))
      !$omp end task
   end do
   !$omp taskwait
   !$omp end single
   !$omp end parallel
   expect = 0d0
   do i = 1, nb
      do j = 1, bs
         expect = expect + (dble(i) + dble(j)*1d-6)
      end do
   end do
   print '(a,i0,a,i0,a,l1)', 'tasks_f: nb=', nb, ' tasks=', 2*nb, ' ok=', abs(total - expect) <= 1d-9*abs(expect)
   if (abs(total - expect) > 1d-9*abs(expect)) stop 1
end program tasks_f
