! A communicator from each common MPI constructor, from Fortran (use mpi),
! each used for point-to-point messages and collectives, on 4 ranks. The
! same output as comms.c: per rank and communicator the members as an
! MPI_Allgather on it gives them, and at the end the number of messages
! and of collective operations of the whole run.
module comms_util
  use mpi
  implicit none
  integer :: me, np
  integer :: messages = 0, collectives = 0
contains
  function list(v, n) result(s)
    integer, intent(in) :: n, v(n)
    character(len=256) :: s
    character(len=16) :: w
    integer :: i
    s = ''
    do i = 1, n
      write (w, '(i0)') v(i)
      if (i == 1) then
        s = trim(w)
      else
        s = trim(s)//','//trim(w)
      end if
    end do
  end function list

  integer function rank_in(c)
    integer, intent(in) :: c
    integer :: ierr
    call MPI_Comm_rank(c, rank_in, ierr)
  end function rank_in

  subroutine members(c, label)
    integer, intent(in) :: c
    character(len=*), intent(in) :: label
    integer :: n, ierr
    integer, allocatable :: all(:)
    call MPI_Comm_size(c, n, ierr)
    allocate (all(n))
    call MPI_Allgather(me, 1, MPI_INTEGER, all, 1, MPI_INTEGER, c, ierr)
    if (rank_in(c) == 0 .and. n >= 2) collectives = collectives + 1
    write (*, '(a,a,a,i0,a,a)') 'comm ', label, ' rank=', me, ' members=', trim(list(all, n))
    flush (6)
    deallocate (all)
  end subroutine members

  subroutine ring(c, tag)
    integer, intent(in) :: c, tag
    integer :: r, n, ierr
    double precision :: x, y
    r = rank_in(c)
    call MPI_Comm_size(c, n, ierr)
    x = me
    call MPI_Sendrecv(x, 1, MPI_DOUBLE_PRECISION, mod(r + 1, n), tag, y, 1, MPI_DOUBLE_PRECISION, &
                      mod(r + n - 1, n), tag, c, MPI_STATUS_IGNORE, ierr)
    messages = messages + 1
  end subroutine ring

  subroutine allreduce(c)
    integer, intent(in) :: c
    integer :: n, ierr
    double precision :: x, s
    x = me
    call MPI_Allreduce(x, s, 1, MPI_DOUBLE_PRECISION, MPI_SUM, c, ierr)
    call MPI_Comm_size(c, n, ierr)
    if (rank_in(c) == 0 .and. n >= 2) collectives = collectives + 1
  end subroutine allreduce
end module comms_util

program comms_f
  use mpi
  use comms_util
  implicit none
  integer :: ierr, cart, row, halves, dup, created, grouped, idup, req, inter, merged, graph, adj
  integer :: world, evens, odds, src, dst, d, r, ln, rn, nb(2), left, right
  integer :: dims(2), index(4), edges(8), ev(2), od(2), sums(2), tot(2), ins(1), outs(1), inw(1), outw(1)
  integer, allocatable :: loc(:), rem(:)
  logical :: periods(2), remain(2), low
  double precision :: x, y

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  if (np /= 4) then
    print *, 'comms_f: run on 4 ranks'
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if

  ! Cartesian 2x2, periodic, reordering allowed; its rows
  dims = [2, 2]
  periods = [.true., .true.]
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .true., cart, ierr)
  call members(cart, 'MPI_Cart_create')
  do d = 0, 1
    call MPI_Cart_shift(cart, d, 1, src, dst, ierr)
    x = me
    call MPI_Sendrecv(x, 1, MPI_DOUBLE_PRECISION, dst, 10 + d, y, 1, MPI_DOUBLE_PRECISION, src, 10 + d, &
                      cart, MPI_STATUS_IGNORE, ierr)
    messages = messages + 1
  end do
  call allreduce(cart)
  remain = [.false., .true.]
  call MPI_Cart_sub(cart, remain, row, ierr)
  call members(row, 'MPI_Cart_sub')
  call ring(row, 20)

  ! a ring as a graph, and as a distributed graph
  do r = 0, 3
    index(r + 1) = 2*(r + 1)
    edges(2*r + 1) = mod(r + 3, 4)
    edges(2*r + 2) = mod(r + 1, 4)
  end do
  call MPI_Graph_create(MPI_COMM_WORLD, 4, index, edges, .true., graph, ierr)
  call members(graph, 'MPI_Graph_create')
  call MPI_Graph_neighbors(graph, rank_in(graph), 2, nb, ierr)
  x = me
  call MPI_Sendrecv(x, 1, MPI_DOUBLE_PRECISION, nb(2), 30, y, 1, MPI_DOUBLE_PRECISION, nb(1), 30, &
                    graph, MPI_STATUS_IGNORE, ierr)
  messages = messages + 1
  left = mod(me + 3, 4)
  right = mod(me + 1, 4)
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, [left], MPI_UNWEIGHTED, 1, [right], MPI_UNWEIGHTED, &
                                      MPI_INFO_NULL, .true., adj, ierr)
  call members(adj, 'MPI_Dist_graph_create_adjacent')
  call MPI_Dist_graph_neighbors(adj, 1, ins, inw, 1, outs, outw, ierr)
  call MPI_Sendrecv(x, 1, MPI_DOUBLE_PRECISION, outs(1), 40, y, 1, MPI_DOUBLE_PRECISION, ins(1), 40, &
                    adj, MPI_STATUS_IGNORE, ierr)
  messages = messages + 1
  call allreduce(adj)

  ! groups: the even ranks reversed (Comm_create), the odd ones reversed
  ! (Comm_create_group, called by them only)
  call MPI_Comm_group(MPI_COMM_WORLD, world, ierr)
  ev = [2, 0]
  od = [3, 1]
  call MPI_Group_incl(world, 2, ev, evens, ierr)
  call MPI_Group_incl(world, 2, od, odds, ierr)
  call MPI_Comm_create(MPI_COMM_WORLD, evens, created, ierr)
  if (created /= MPI_COMM_NULL) then
    call members(created, 'MPI_Comm_create')
    call ring(created, 50)
    call MPI_Comm_free(created, ierr)
  end if
  if (mod(me, 2) == 1) then
    call MPI_Comm_create_group(MPI_COMM_WORLD, odds, 7, grouped, ierr)
    call members(grouped, 'MPI_Comm_create_group')
    call allreduce(grouped)
    call MPI_Comm_free(grouped, ierr)
  end if

  ! halves (even, odd; reversed), a duplicate, a nonblocking duplicate
  call MPI_Comm_split(MPI_COMM_WORLD, mod(me, 2), -me, halves, ierr)
  call members(halves, 'MPI_Comm_split')
  call ring(halves, 80)
  call MPI_Comm_dup(cart, dup, ierr)
  call members(dup, 'MPI_Comm_dup')
  call allreduce(dup)
  call MPI_Comm_idup(MPI_COMM_WORLD, idup, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call members(idup, 'MPI_Comm_idup')
  call ring(idup, 100)

  ! an intercommunicator between the halves (leaders: world ranks 2 and 3),
  ! then merged
  if (mod(me, 2) == 0) then
    call MPI_Intercomm_create(halves, 0, MPI_COMM_WORLD, 3, 5, inter, ierr)
  else
    call MPI_Intercomm_create(halves, 0, MPI_COMM_WORLD, 2, 5, inter, ierr)
  end if
  call MPI_Comm_size(inter, ln, ierr)
  call MPI_Comm_remote_size(inter, rn, ierr)
  allocate (loc(ln), rem(rn))
  call MPI_Allgather(me, 1, MPI_INTEGER, loc, 1, MPI_INTEGER, halves, ierr)
  if (rank_in(halves) == 0) collectives = collectives + 1
  call MPI_Allgather(me, 1, MPI_INTEGER, rem, 1, MPI_INTEGER, inter, ierr)
  low = mod(me, 2) == 0
  if (low .and. rank_in(inter) == 0) collectives = collectives + 1
  write (*, '(a,i0,a,a,a,a)') 'inter MPI_Intercomm_create rank=', me, ' local=', trim(list(loc, ln)), &
    ' remote=', trim(list(rem, rn))
  flush (6)
  r = rank_in(inter)
  call MPI_Sendrecv(x, 1, MPI_DOUBLE_PRECISION, r, 110, y, 1, MPI_DOUBLE_PRECISION, r, 110, &
                    inter, MPI_STATUS_IGNORE, ierr)
  messages = messages + 1
  call MPI_Barrier(inter, ierr)
  if (low .and. r == 0) collectives = collectives + 1
  call MPI_Intercomm_merge(inter, .not. low, merged, ierr)
  call members(merged, 'MPI_Intercomm_merge')
  call allreduce(merged)

  call MPI_Comm_free(merged, ierr)
  call MPI_Comm_free(inter, ierr)
  call MPI_Comm_free(idup, ierr)
  call MPI_Comm_free(dup, ierr)
  call MPI_Comm_free(halves, ierr)
  call MPI_Comm_free(adj, ierr)
  call MPI_Comm_free(graph, ierr)
  call MPI_Comm_free(row, ierr)
  call MPI_Comm_free(cart, ierr)
  call MPI_Group_free(evens, ierr)
  call MPI_Group_free(odds, ierr)
  call MPI_Group_free(world, ierr)

  sums = [messages, collectives]
  call MPI_Reduce(sums, tot, 2, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (me == 0) write (*, '(a,i0,a,i0)') 'messages=', tot(1), ' collectives=', tot(2) + 1
  call MPI_Finalize(ierr)
end program comms_f
