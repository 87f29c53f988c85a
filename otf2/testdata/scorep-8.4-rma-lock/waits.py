#!/usr/bin/python3
# waits.py: Lock Contention per rank by ptrace's definition (docs/report-schema.md, lock_contention),
# applied by hand to the lock epochs of
#   waits.py traces.otf2     a Score-P archive's own records (python3-otf2; run /usr/bin/python3 from
#                            a directory without an otf2/ folder): each RmaRequestLock (or RmaAcquireLock)
#                            in MPI_Win_lock[_all] begins an epoch, each RmaReleaseLock in
#                            MPI_Win_unlock[_all] ends it; times are the records' ticks since the
#                            global offset, in ns;
#   waits.py --dump DIR N    a ptrace trace of N ranks (the collector's), through `ptrace dump`: rma_lock
#                            and rma_unlock events (lock_type 3, MPI_MODE_NOCHECK, takes no lock: left out).
# The definition: an epoch's one-sided calls (MPI_Win_*, the RMA calls) from its MPI_Win_lock to its
# MPI_Win_unlock; one window target's epochs ordered by their MPI_Win_unlock's exit (a lock_all epoch
# takes part on every target); an exclusive epoch waits for every epoch before it, a shared one for the
# exclusive ones, until the latest enter of their MPI_Win_unlock (a lock_all epoch: the latest over the
# targets); the wait is the time of its calls before that point.
import collections, subprocess, sys

RMA = {'MPI_Put', 'MPI_Get', 'MPI_Accumulate', 'MPI_Get_accumulate', 'MPI_Fetch_and_op', 'MPI_Compare_and_swap',
       'MPI_Rput', 'MPI_Rget', 'MPI_Raccumulate', 'MPI_Rget_accumulate'}
one_sided = lambda fn: fn.startswith('MPI_Win_') or fn in RMA
EXCL, SHARED = 1, 2


class Epoch:
    def __init__(s, origin, win, target, typ):
        s.origin, s.win, s.target, s.typ, s.calls = origin, win, target, typ, []


def read_otf2(anchor):
    import otf2
    out, ranks = [], 0
    with otf2.reader.open(anchor) as tr:
        off, res = tr.definitions.clock_properties.global_offset, tr.timer_resolution
        ns = lambda t: (t - off) * 10**9 // res
        state = collections.defaultdict(lambda: {'stack': [], 'open': {}, 'rec': None})
        for loc, ev in tr.events:
            rank = int(loc.group.name.split()[-1])  # "MPI Rank R"
            ranks = max(ranks, rank + 1)
            st = state[loc]
            kind = type(ev).__name__
            if kind == 'Enter':
                st['stack'].append((ev.region.name, ns(ev.time)))
            elif kind in ('RmaRequestLock', 'RmaAcquireLock', 'RmaReleaseLock') and st['stack']:
                st['rec'] = ev
            elif kind == 'Leave' and st['stack']:
                fn, t0 = st['stack'].pop()
                call, rec, st['rec'] = (t0, ns(ev.time)), st['rec'], None
                if not one_sided(fn):
                    continue
                for e in st['open'].values():
                    e.calls.append(call)
                if rec is None:
                    continue
                # python3-otf2 gives a COMM_GROUP's members (world ranks) as
                # those ranks' locations
                target = -1 if fn.endswith('_all') else int(rec.win.comm.group.members[rec.remote].group.name.split()[-1])
                key = (rec.win._ref, target)
                if fn in ('MPI_Win_lock', 'MPI_Win_lock_all'):
                    e = Epoch(rank, rec.win._ref, target, EXCL if str(rec.lock_type).endswith('EXCLUSIVE') else SHARED)
                    e.calls.append(call)
                    st['open'][key] = e
                elif key in st['open']:
                    out.append(st['open'].pop(key))
    return out, ranks


def read_dump(d, n):
    out = []
    for rank in range(n):
        txt = subprocess.run(['ptrace', 'dump', '--rank', str(rank), '--thread', '0', d], check=True,
                             capture_output=True, text=True).stdout
        open_, fn, t0, rec = {}, None, 0, None
        for line in txt.splitlines():
            p = line.split()
            if len(p) < 3:
                continue
            a = dict(x.split('=', 1) for x in p[3:] if '=' in x)
            if p[2] == 'mpi_enter':
                fn, t0, rec = a['func'], int(p[0]), None
            elif p[2] in ('rma_lock', 'rma_unlock'):
                rec = (p[2], int(a['peer']), a['comm'], int(a.get('lock_type', 0)))
            elif p[2] == 'mpi_exit':
                call = (t0, int(p[0]))
                if not one_sided(fn):
                    continue
                for e in open_.values():
                    e.calls.append(call)
                if rec is None:
                    continue
                kind, peer, comm, typ = rec
                if kind == 'rma_lock' and typ in (EXCL, SHARED):
                    e = Epoch(rank, comm, peer, typ)
                    e.calls.append(call)
                    open_[(comm, peer)] = e
                elif kind == 'rma_unlock' and (comm, peer) in open_:
                    out.append(open_.pop((comm, peer)))
    return out, n


def contention(eps, n):
    eps.sort(key=lambda e: e.calls[-1][1])
    until = [None] * len(eps)
    for tg in range(n):
        for j, e in enumerate(eps):
            if e.target not in (tg, -1):
                continue
            for p in eps[:j]:
                if p.win == e.win and p.target in (tg, -1) and EXCL in (e.typ, p.typ):
                    u = p.calls[-1][0]
                    until[j] = u if until[j] is None else max(until[j], u)
    want = [0] * n
    for e, u in zip(eps, until):
        if u is not None:
            want[e.origin] += sum(max(0, min(c[1], u) - c[0]) for c in e.calls)
    return want


if __name__ == '__main__':
    eps, n = read_dump(sys.argv[2], int(sys.argv[3])) if sys.argv[1] == '--dump' else read_otf2(sys.argv[1])
    kinds = collections.Counter((e.target == -1, e.typ) for e in eps)
    print('%d epochs: %d exclusive, %d shared, %d lock_all' % (
        len(eps), kinds[(False, EXCL)], kinds[(False, SHARED)], kinds[(True, SHARED)]))
    for r, w in enumerate(contention(eps, n)):
        print('%d lock_contention %d ns' % (r, w))
