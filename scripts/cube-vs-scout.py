#!/usr/bin/env python3
"""cube-vs-scout.py [--no-time-correct] [--ptrace BIN] ARCHIVE
   cube-vs-scout.py --files PTRACE.cubex SCOUT.cubex
ptrace's CUBE file next to Scalasca's scout.cubex, per rank, read by CubeLib's cube_dump
alone.

ARCHIVE is a Score-P trace (a directory with traces.otf2). Its traces are copied to a
temporary directory, where scout.mpi (Scalasca 2.6; one process per traced rank; scout.hyb with a thread per location
for a hybrid archive) writes
scout.cubex and `ptrace analyze --cube` writes ptrace.cubex (with --no-time-correct:
scout.mpi --no-time-correct and ptrace analyze --no-clocksync). For every metric whose
unique name both files have (the MPI wait states, mpi, critical_path, the OpenMP critical
and lock contention and the pthread mutex contention: ptrace's only for one process) it prints each
rank's value in both files (with --files, of two files made before): cube_dump -m METRIC -z incl -c roots (the whole call tree,
the metric with its sub-metrics, e.g. Scalasca's Late Sender with its wrong-order parts),
summed over the rank's threads.

Needs Scalasca's scout.mpi and CubeLib's cube_dump: SP=/root/scorep-scalasca by default
(../shared/tools/scorep-scalasca/build.sh builds both), mpirun.
"""
import os
import shutil
import subprocess
import sys
import tempfile

SP = os.environ.get('SP', '/root/scorep-scalasca')
SCOUT = os.path.join(SP, 'inst-scalasca/bin/scout.mpi')
CUBE_DUMP = os.path.join(SP, 'inst/bin/cube_dump')
METRICS = ['mpi_latesender', 'mpi_latereceiver', 'mpi_wait_nxn', 'mpi_barrier_wait',
           'mpi_latebroadcast', 'mpi_earlyreduce', 'mpi_rma_wait_at_fence', 'mpi_rma_wait_at_create',
           'mpi_rma_wait_at_free', 'mpi', 'critical_path',
           'omp_lock_contention_critical', 'omp_lock_contention_api', 'pthread_lock_contention_mutex_lock']
# ptrace's report has these per call path over all processes: its file
# holds them only for a single-process report (docs/cube.md, "Resolution").
PER_PROCESS_IF_SINGLE = {'omp_lock_contention_critical', 'omp_lock_contention_api', 'pthread_lock_contention_mutex_lock'}


def sh(args, cwd=None):
    env = dict(os.environ, OMPI_MCA_mpi_yield_when_idle='1')
    r = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit('%s: exit %d\n%s%s' % (' '.join(args), r.returncode, r.stdout[-3000:], r.stderr[-3000:]))
    return r.stdout


def ranks_of_locations(cube):
    """location id -> process rank, from cube_dump -w systemtree."""
    out, rank = {}, None
    for line in sh([CUBE_DUMP, '-w', 'systemtree', cube]).splitlines():
        if 'type=process' in line:
            rank = int(line.split('rank=')[1].split()[0].rstrip(')'))
        elif 'type=thread' in line:
            out[int(line.split('(id=')[1].split(',')[0])] = rank
    return out


def metrics(cube):
    out = sh([CUBE_DUMP, '-w', 'metrics', cube])
    return {line.split('( id=')[1].split(',')[1].strip() for line in out.splitlines() if '( id=' in line}


def per_rank(cube, metric, loc_rank):
    """metric over the whole call tree, summed per rank."""
    out = sh([CUBE_DUMP, '-m', metric, '-z', 'incl', '-c', 'roots', '-s', 'csv2', cube])
    vals = {}
    for line in out.splitlines()[1:]:
        f = line.split(',')
        if len(f) != 3:
            continue
        r = loc_rank[int(f[1])]
        vals[r] = vals.get(r, 0.0) + float(f[2])
    return vals


def table(mine, scout, title):
    shared = [m for m in METRICS if m in metrics(scout) and m in metrics(mine)]
    ls, lm = ranks_of_locations(scout), ranks_of_locations(mine)
    print(title)
    print('%-34s %4s %12s %12s %9s' % ('metric', 'rank', 'ptrace [ms]', 'scout [ms]', 'diff'))
    for m in shared:
        a, b = per_rank(mine, m, lm), per_rank(scout, m, ls)
        for r in sorted(set(a) | set(b)):
            x, y = a.get(r, 0.0) * 1e3, b.get(r, 0.0) * 1e3
            if m in PER_PROCESS_IF_SINGLE and len(set(lm.values())) > 1:
                print('%-34s %4d %12s %12.3f %9s' % (m, r, '-', y, ''))
                continue
            rel = '' if max(x, y) < 1e-3 else '%+8.1f%%' % (100 * (x - y) / y if y else float('inf'))
            print('%-34s %4d %12.3f %12.3f %9s' % (m, r, x, y, rel))


def main():
    args = sys.argv[1:]
    tc, ptrace = True, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'ptrace')
    while args and args[0].startswith('--'):
        a = args.pop(0)
        if a == '--no-time-correct':
            tc = False
        elif a == '--ptrace':
            ptrace = args.pop(0)
        elif a == '--files' and len(args) == 2:
            table(args[0], args[1], '%s vs %s' % (args[0], args[1]))
            return
        else:
            sys.exit(__doc__)
    if len(args) != 1:
        sys.exit(__doc__)
    archive = args[0]
    tmp = tempfile.mkdtemp(prefix='cube-vs-scout.')
    try:
        for f in ('traces.otf2', 'traces.def'):
            shutil.copy(os.path.join(archive, f), tmp)
        shutil.copytree(os.path.join(archive, 'traces'), os.path.join(tmp, 'traces'))
        # Score-P names a location's file by its id, thread << 32 | rank:
        # scout runs one process per rank, with a thread per location of a
        # hybrid run (scout.hyb).
        locs = [int(f[:-4]) for f in os.listdir(os.path.join(tmp, 'traces')) if f.endswith('.evt')]
        per_rank = {}
        for loc in locs:
            per_rank[loc & 0xffffffff] = per_rank.get(loc & 0xffffffff, 0) + 1
        np, threads = len(per_rank), max(per_rank.values())
        scout = SCOUT if threads == 1 else SCOUT.replace('scout.mpi', 'scout.hyb')
        os.environ['OMP_NUM_THREADS'] = str(threads)
        sh(['mpirun', '--oversubscribe', '--allow-run-as-root', '-x', 'OMP_NUM_THREADS', '-np', str(np), scout,
            '--time-correct' if tc else '--no-time-correct', 'traces.otf2'], cwd=tmp)
        scout = os.path.join(tmp, 'scout.cubex')
        mine = os.path.join(tmp, 'ptrace.cubex')
        sh([ptrace, 'analyze', '-q', '--cube', mine] + ([] if tc else ['--no-clocksync']) + [os.path.join(tmp, 'traces.otf2')])
        table(mine, scout, '%s: %d ranks, %s' % (archive, np, 'scout --time-correct vs ptrace analyze' if tc
                                                  else 'scout --no-time-correct vs ptrace analyze --no-clocksync'))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
