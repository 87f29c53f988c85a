import gzip, re, sys, collections
# waits.py otf2-print.txt.gz: Late Post and Early Wait per rank (location = rank here) from
# `otf2-print -A`'s text alone (the archive's own timestamps, its own ticks per second):
#   each MPI_Win_post/_complete is paired, per partner of its RmaGroupSync's group, with that
#   partner's next MPI_Win_start / epoch end (MPI_Win_wait, or MPI_Win_test whose RmaGroupSync
#   has a level other than NONE) naming it; the latest partner's Enter is the call's "last".
#   scalasca-def (src/scout/generator/MPI_RMA.pattern, 2.6): Late Post = last post's Enter - the
#     start's Enter when it lies inside the start (blocking start); Early Wait = last complete's
#     Enter - the wait's Enter when later (MPI_Win_wait only: scout has no MPI_Win_test case).
#   ptrace-def (as a Late Sender): max(0, min(last, the call's Leave) - its Enter), in MPI_Win_wait
#     and in the MPI_Win_test that ended the epoch.
f = gzip.open(sys.argv[1], 'rt')
res, groups, calls, cur = None, {}, collections.defaultdict(list), {}
for line in f:
    p = line.split()
    if not p:
        continue
    if p[0] == 'CLOCK_PROPERTIES':
        res = int(re.search(r'Ticks per Seconds: (\d+)', line).group(1))
    elif p[0] == 'GROUP' and 'Type: COMM_GROUP, Paradigm: "MPI"' in line:
        groups[int(p[1])] = [int(m) for m in re.findall(r'(\d+) \("', line)]
    elif len(p) < 3 or not p[1].isdigit():
        continue
    elif p[0] == 'ENTER':
        name = re.search(r'Region: "([^"]*)"', line).group(1)
        cur[int(p[1])] = {'fn': name, 'enter': int(p[2])} if name.startswith('MPI_Win_') else None
    elif p[0] == 'RMA_GROUP_SYNC' and cur.get(int(p[1])):
        c = cur[int(p[1])]
        c['group'] = groups[int(re.search(r'Group: "[^"]*" <(\d+)>', line).group(1))]
        c['none'] = 'Synchronicity: NONE' in line
    elif p[0] == 'LEAVE' and cur.get(int(p[1])):
        c = cur.pop(int(p[1]))
        c['exit'] = int(p[2])
        if 'group' in c:
            calls[int(p[1])].append(c)
def pairs(send, recv):
    q = collections.defaultdict(list)  # (sender, receiver) -> the sender's Enters, in order
    for r, cs in sorted(calls.items()):
        for c in cs:
            if c['fn'] == send:
                for o in c['group']:
                    q[(r, o)].append(c['enter'])
    out = collections.defaultdict(list)
    for r, cs in sorted(calls.items()):
        for c in cs:
            if c['fn'] in recv and not (c['fn'] == 'MPI_Win_test' and c['none']):
                last = max(q[(s, r)].pop(0) for s in c['group'])
                out[r].append((c, last))
    return out
pt = lambda c, last: max(0, min(last, c['exit']) - c['enter'])
lp = pairs('MPI_Win_post', ('MPI_Win_start',))
ew = pairs('MPI_Win_complete', ('MPI_Win_wait', 'MPI_Win_test'))
for r in sorted(calls):
    sc_lp = sum(last - c['enter'] for c, last in lp[r] if c['enter'] < last < c['exit'])
    sc_ew = sum(last - c['enter'] for c, last in ew[r] if c['fn'] == 'MPI_Win_wait' and last > c['enter'])
    pt_lp = sum(pt(c, last) for c, last in lp[r])
    pt_ew = sum(pt(c, last) for c, last in ew[r])
    pt_ewt = sum(pt(c, last) for c, last in ew[r] if c['fn'] == 'MPI_Win_test')
    ns = lambda t: t * 1e9 / res
    print('%d late_post scalasca-def %.0f ns ptrace-def %.0f ns | early_wait scalasca-def %.0f ns ptrace-def %.0f ns (%.0f ns of it in MPI_Win_test)' % (
        r, ns(sc_lp), ns(pt_lp), ns(sc_ew), ns(pt_ew), ns(pt_ewt)))
