"""Python objects over MPI with mpi4py, as Python programs exchange them:
pickled messages (comm.send / comm.recv, which mpi4py receives with
MPI_Mprobe + MPI_Mrecv), nonblocking and combined ones, object collectives
on MPI_COMM_WORLD, a Cartesian ring and a split communicator. Run on 3
ranks. TestMPI4Py checks that ptrace matches every message and collective
recorded, without a warning.

usage: python3 mpi4py_objects.py [ITERS]   (default 3)
"""
import sys

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
right, left = (rank + 1) % size, (rank - 1) % size
iters = int(sys.argv[1]) if len(sys.argv) > 1 else 3
total = 0
for it in range(iters):
    payload = {"it": it, "from": rank, "data": list(range(100 * (rank + 1)))}
    # blocking: even ranks send first; a receive from any source
    if rank % 2 == 0:
        comm.send(payload, dest=right, tag=it)
        got = comm.recv(source=MPI.ANY_SOURCE, tag=it)
    else:
        got = comm.recv(source=left, tag=it)
        comm.send(payload, dest=right, tag=it)
    total += got["from"]
    # nonblocking
    req = comm.isend(payload, dest=left, tag=100 + it)
    total += comm.irecv(source=right, tag=100 + it).wait()["from"]
    req.wait()
    # combined, and a probe before the receive
    total += comm.sendrecv(payload, dest=right, sendtag=200 + it, source=left, recvtag=200 + it)["from"]
    comm.send(it, dest=left, tag=300)
    status = MPI.Status()
    comm.probe(source=right, tag=300, status=status)
    total += comm.recv(source=status.Get_source(), tag=300)
    # object collectives
    total += comm.bcast(payload if rank == 1 else None, root=1)["from"]
    parts = comm.gather(rank, root=0)
    total += comm.scatter([p * 2 for p in parts] if rank == 0 else None, root=0)
    total += sum(comm.allgather(rank))
    total += sum(comm.alltoall([rank] * size))
    total += comm.allreduce(rank, op=MPI.SUM)
    # a periodic Cartesian ring and a split communicator
    cart = comm.Create_cart([size], periods=[True])
    src, dst = cart.Shift(0, 1)
    total += cart.sendrecv(rank, dest=dst, source=src)
    cart.Free()
    sub = comm.Split(rank % 2, rank)
    total += sub.allreduce(rank)
    sub.Free()
comm.Barrier()
sys.stdout.write(f"rank {rank} total {total}\n")  # one write: ranks' lines are merged
