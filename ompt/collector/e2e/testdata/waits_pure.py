"""waits_pure.c in Python with mpi4py: the same designed waits on 2 ranks,
the same lines printed (window and call stamps, CLOCK_MONOTONIC: the
collector's clock), so that TestMPI4Py checks it as TestPureMPIValues checks
the C program. Buffers are the standard library's (no numpy).

usage: python3 waits_pure.py [ITERS [D_MS [B_MS]]]   (default 4 20 10)
"""
import os
import sys
import time
from array import array

from mpi4py import MPI

now = time.monotonic_ns


def compute(ms):
    end = now() + int(ms * 1e6)
    while now() < end:
        pass


calls = []


def timed(fn, call, *args):
    t0 = now()
    call(*args)
    calls.append((fn, t0, now()))


def main():
    iters = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    d = float(sys.argv[2]) if len(sys.argv) > 2 else 20
    b = float(sys.argv[3]) if len(sys.argv) > 3 else 10
    init_exit = now()  # MPI_Init_thread ran at the import
    comm = MPI.COMM_WORLD
    me = comm.Get_rank()
    if comm.Get_size() != 2:
        sys.stderr.write("waits_pure.py: run on 2 ranks\n")
        comm.Abort(2)
    big = bytearray(4 << 20)  # above every eager limit
    x, y = array("d", [1.0]), array("d", [0.0])
    for _ in range(iters):
        # late sender
        if me == 1:
            compute(d)
            timed("MPI_Send", comm.Send, [x, MPI.DOUBLE], 0, 1)
        else:
            timed("MPI_Recv", comm.Recv, [y, MPI.DOUBLE], 1, 1)
        # late receiver: a rendezvous send
        if me == 0:
            timed("MPI_Send", comm.Send, [big, MPI.BYTE], 1, 2)
        else:
            compute(d)
            timed("MPI_Recv", comm.Recv, [big, MPI.BYTE], 0, 2)
        # late receiver: a synchronous send
        if me == 0:
            timed("MPI_Ssend", comm.Ssend, [x, MPI.DOUBLE], 1, 3)
        else:
            compute(d)
            timed("MPI_Recv", comm.Recv, [y, MPI.DOUBLE], 0, 3)
        # wait at N×N: rank 0 computes longer
        compute(d + b if me == 0 else b)
        timed("MPI_Allreduce", comm.Allreduce, [x, MPI.DOUBLE], [y, MPI.DOUBLE], MPI.SUM)
        # wait at barrier: rank 1 computes longer
        compute(d + b if me == 1 else b)
        timed("MPI_Barrier", comm.Barrier)
    finalize_enter = now()
    MPI.Finalize()
    # One write of whole lines (about 2 KB): mpirun merges the ranks'
    # output, and print() writes a line's text and its newline apart on a
    # terminal, where Open MPI's ranks write, so another rank's line could
    # land between them.
    lines = [f"window rank={me} init_exit={init_exit} finalize_enter={finalize_enter}"]
    lines += [f"call rank={me} fn={fn} enter={t0} exit={t1}" for fn, t0, t1 in calls]
    os.write(1, ("\n".join(lines) + "\n").encode())


main()
