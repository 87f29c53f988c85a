#!/usr/bin/python3
"""Write an OTF2 archive, with python3-otf2 (the reference library), from a
ptrace trace dumped as text by the otf2 package's tests.

Records follow what Score-P writes for MPI + OpenMP programs: Enter/Leave of
MPI regions around MpiSend/MpiIsend/MpiRecv/MpiIrecv/collective records,
ThreadFork/ThreadTeamBegin/ThreadTeamEnd/ThreadJoin for parallel regions,
Enter/Leave of OpenMP regions with their roles for barriers and taskwaits,
ThreadTaskCreate/Switch/Complete for tasks, ClockOffset local definitions
for the clock measurements. Task dependences have no OTF2 record.

usage: write_otf2.py DUMP OUTDIR TIMER_HZ
"""
import sys
import otf2
from otf2.enums import (Paradigm, RegionRole, GroupType, CollectiveOp,
                        LocationType, LocationGroupType, MeasurementMode, Type)
import _otf2

# ptrace kinds (trace/kind.go)
(THREAD_BEGIN, THREAD_END, PARALLEL_BEGIN, PARALLEL_END, IMPL_BEGIN, IMPL_END,
 TASK_CREATE, TASK_DEPS, TASK_DEP, TASK_SCHEDULE, SYNC_BEGIN, SYNC_END,
 SYNC_WAIT_BEGIN, SYNC_WAIT_END, DETACH, CANCEL, MPI_ENTER, MPI_EXIT, MPI_SEND,
 MPI_RECV, MPI_RECV_POST, MPI_REQ_DONE, COLL_BEGIN, COLL_END, RDEP_OUT,
 RDEP_IN, REGION_ENTER, REGION_EXIT, TASK_ATTR, FLUSH_BEGIN, FLUSH_END,
 WORK_BEGIN, WORK_END) = range(1, 34)

COLL = {1: CollectiveOp.BARRIER, 2: CollectiveOp.BCAST, 3: CollectiveOp.REDUCE,
        4: CollectiveOp.ALLREDUCE, 5: CollectiveOp.GATHER, 6: CollectiveOp.GATHERV,
        7: CollectiveOp.SCATTER, 8: CollectiveOp.SCATTERV, 9: CollectiveOp.ALLGATHER,
        10: CollectiveOp.ALLGATHERV, 11: CollectiveOp.ALLTOALL, 12: CollectiveOp.ALLTOALLV,
        13: CollectiveOp.REDUCE_SCATTER, 14: CollectiveOp.SCAN, 15: CollectiveOp.EXSCAN,
        16: CollectiveOp.REDUCE_SCATTER_BLOCK, 17: CollectiveOp.ALLTOALLW}
SYNC = {1: ("!$omp barrier", RegionRole.BARRIER), 2: ("!$omp implicit barrier", RegionRole.IMPLICIT_BARRIER),
        3: ("!$omp barrier", RegionRole.BARRIER), 5: ("!$omp taskwait", RegionRole.TASK_WAIT),
        6: ("!$omp taskgroup", RegionRole.TASK_WAIT), 8: ("!$omp implicit barrier", RegionRole.IMPLICIT_BARRIER),
        9: ("!$omp implicit barrier", RegionRole.IMPLICIT_BARRIER)}
UNDEF32 = 0xffffffff


def parse(path):
    procs = []
    cur = None
    for line in open(path):
        f = line.split()
        if not f:
            continue
        if f[0] == "proc":
            cur = {"rank": int(f[1]), "threads": int(f[2]), "host": f[3], "comms": [], "clock": [],
                   "locs": {}, "strings": {}, "events": {}}
            procs.append(cur)
        elif f[0] == "comm":
            cur["comms"].append((int(f[1]), int(f[2]), f[3], [int(x) for x in f[4:]]))
        elif f[0] == "clock":
            cur["clock"].append((f[1], int(f[2]), int(f[3]), int(f[4])))
        elif f[0] == "loc":
            cur["locs"][int(f[1])] = (f[2], int(f[3]), f[4])
        elif f[0] == "str":
            cur["strings"][int(f[1])] = f[2] if len(f) > 2 else ""
        elif f[0] == "ev":
            t = int(f[1])
            cur["events"].setdefault(t, []).append([int(x) for x in f[2:]])
    return procs


def main():
    dump, out, hz = sys.argv[1], sys.argv[2], int(sys.argv[3])
    procs = parse(dump)
    nranks = len(procs)
    # Local times may be negative (clock skew): shift by whole seconds so
    # ticks are unsigned and the conversion back to ns is exact.
    lo = min([e[1] for p in procs for evs in p["events"].values() for e in evs] + [0])
    shift_s = (-lo + 10**9 - 1) // 10**9
    base = shift_s * hz

    def ticks(ns):
        return ((ns + shift_s * 10**9) * hz * 2 + 10**9) // (2 * 10**9)

    def span(ns):  # signed duration
        s = 1 if ns >= 0 else -1
        return s * ((abs(ns) * hz * 2 + 10**9) // (2 * 10**9))

    with otf2.writer.open(out, timer_resolution=hz) as tr:
        d = tr.definitions
        root = d.system_tree_node("machine")
        locs = []  # [rank][thread] -> Location
        nodes = {}
        for p in procs:
            if p["host"] not in nodes:
                nodes[p["host"]] = d.system_tree_node(p["host"], parent=root)
            node = nodes[p["host"]]
            g = d.location_group("rank %d" % p["rank"], system_tree_parent=node,
                                 location_group_type=LocationGroupType.PROCESS)
            locs.append([d.location("rank %d thread %d" % (p["rank"], t), group=g,
                                    type=LocationType.CPU_THREAD)
                         for t in range(p["threads"])])
        d.group("MPI locations", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI,
                members=[l[0] for l in locs])
        comms = {}  # ptrace comm id -> (Comm, members)
        for p in procs:
            for idx, cid, name, members in p["comms"]:
                if cid in comms:
                    continue
                grp = d.group("group of " + name, group_type=GroupType.COMM_GROUP,
                              paradigm=Paradigm.MPI, members=members)
                comms[cid] = (d.comm(name, group=grp), members)
        d.group("OpenMP locations", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.OPENMP,
                members=[l for ls in locs for l in ls])
        regions = {}
        # An attribute on MPI enters, as Score-P attaches e.g. call-site or
        # I/O handles: readers must skip the attribute lists.
        attr = d.attribute("ptrace_event_index", "index of the ptrace event", Type.UINT64)

        def region(name, paradigm, role, file=None, line=0):
            key = (name, paradigm, role, file, line)
            if key not in regions:
                regions[key] = d.region(name, paradigm=paradigm, region_role=role,
                                        source_file=file,
                                        begin_line_number=line, end_line_number=line)
            return regions[key]

        for p, plocs in zip(procs, locs):
            r = p["rank"]
            teams = {}

            def team(n):
                if n not in teams:
                    grp = d.group("team of rank %d (%d)" % (r, n), group_type=GroupType.COMM_GROUP,
                                  paradigm=Paradigm.OPENMP, members=plocs[:n])
                    teams[n] = d.comm("thread team rank %d (%d)" % (r, n), group=grp)
                return teams[n]

            cidx = {idx: cid for idx, cid, _, _ in p["comms"]}

            def crank(ci, peer):
                if peer < 0:
                    return UNDEF32
                return comms[cidx[ci]][1].index(peer)

            def comm(ci):
                return comms[cidx[ci]][0]

            def locreg(name, role, loc):
                file, line, fn = p["locs"].get(loc, ("", 0, ""))
                return region(name, Paradigm.OPENMP, role, file or None, line)

            key = {}    # ptrace task id -> (team, creator, generation)
            gen = {}    # thread -> generation counter
            teamsize = {}
            tnum = {}
            for t in range(p["threads"]):
                w = tr.event_writer_from_location(plocs[t])
                coll = None
                for e in p["events"].get(t, []):
                    k, ns, a = e[0], e[1], e[2:] + [0] * 5
                    tm = ticks(ns)
                    if k == PARALLEL_BEGIN:
                        w.thread_fork(tm, Paradigm.OPENMP, a[2])
                    elif k == PARALLEL_END:
                        w.thread_join(tm, Paradigm.OPENMP)
                    elif k == IMPL_BEGIN:
                        if a[0] == 0:
                            continue  # the initial task: no OTF2 record
                        teamsize[t], tnum[t] = a[2], a[3]
                        w.thread_team_begin(tm, team(a[2]))
                    elif k == IMPL_END:
                        if a[0] == 0:
                            continue
                        w.thread_team_end(tm, team(a[2]))
                    elif k == TASK_CREATE:
                        gen[t] = gen.get(t, 0) + 1
                        tk = (teamsize.get(t, 1), tnum.get(t, 0), gen[t])
                        key[a[0]] = tk
                        reg = locreg("!$omp create task", RegionRole.TASK_CREATE, a[3])
                        w.enter(tm, reg)
                        w.thread_task_create(tm, team(tk[0]), tk[1], tk[2])
                        w.leave(tm, reg)
                    elif k == TASK_SCHEDULE:
                        prior, status, nxt = a[0], a[1], a[2]
                        if status == 1:  # complete
                            tk = key[prior]
                            w.thread_task_complete(tm, team(tk[0]), tk[1], tk[2])
                        if nxt in key:
                            tk = key[nxt]
                            w.thread_task_switch(tm, team(tk[0]), tk[1], tk[2])
                        elif status == 1:  # back to the implicit task
                            w.thread_task_switch(tm, team(teamsize.get(t, 1)), tnum.get(t, 0), 0)
                    elif k == SYNC_BEGIN:
                        name, role = SYNC[a[0]]
                        w.enter(tm, locreg(name, role, a[3]))
                    elif k == SYNC_END:
                        name, role = SYNC[a[0]]
                        w.leave(tm, locreg(name, role, a[3]))
                    elif k in (MPI_ENTER, MPI_EXIT):
                        name = p["strings"][a[0]]
                        role = RegionRole.COLL_ALL2ALL if name.startswith("MPI_All") or name == "MPI_Barrier" \
                            else RegionRole.POINT2POINT if name in ("MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv", "MPI_Wait", "MPI_Waitall", "MPI_Sendrecv") \
                            else RegionRole.FUNCTION
                        reg = region(name, Paradigm.MPI, role)
                        if k == MPI_ENTER:
                            w.enter(tm, reg, attributes={attr: len(name)})
                        else:
                            w.leave(tm, reg)
                    elif k == MPI_SEND:
                        if a[4] == 0:
                            w.mpi_send(tm, crank(a[2], a[0]), comm(a[2]), a[1], a[3])
                        else:
                            w.mpi_isend(tm, crank(a[2], a[0]), comm(a[2]), a[1], a[3], a[4])
                    elif k == MPI_RECV:
                        if a[4] == 0:
                            w.mpi_recv(tm, crank(a[2], a[0]), comm(a[2]), a[1], a[3])
                        else:
                            w.mpi_irecv(tm, crank(a[2], a[0]), comm(a[2]), a[1], a[3], a[4])
                    elif k == MPI_RECV_POST:
                        w.mpi_irecv_request(tm, a[3])
                    elif k == MPI_REQ_DONE:
                        w.mpi_isend_complete(tm, a[0])
                    elif k == COLL_BEGIN:
                        coll = a
                        w.mpi_collective_begin(tm)
                    elif k == COLL_END:
                        w.mpi_collective_end(tm, COLL[a[0]], comm(a[1]), crank(a[1], a[2]), coll[3], coll[4])
                    elif k in (REGION_ENTER, REGION_EXIT):
                        reg = region(p["strings"][a[0]], Paradigm.USER, RegionRole.FUNCTION)
                        (w.enter if k == REGION_ENTER else w.leave)(tm, reg)
                    elif k in (THREAD_BEGIN, THREAD_END):
                        mode = MeasurementMode.ON if k == THREAD_BEGIN else MeasurementMode.OFF
                        w.measurement_on_off(tm, mode)
                    # task dependences, sync waits (inside Enter/Leave),
                    # flushes and task attributes have no OTF2 record here
            # Score-P writes the process's clock offsets into the local
            # definitions of every location (OTF2's reader corrects each
            # location by its own).
            for loc in plocs:
                wl = tr.event_writer_from_location(loc)
                for when, local, off, err in p["clock"]:
                    _otf2.DefWriter_WriteClockOffset(wl._def_handle, ticks(local), span(off),
                                                     err * hz / 1e9)
        # The ClockProperties' global offset: the shifted origin, so that
        # ticks convert back to the original ns exactly.
        if tr._first_timestamp is not None:
            assert tr._first_timestamp >= base
            tr._first_timestamp = base


if __name__ == "__main__":
    main()
