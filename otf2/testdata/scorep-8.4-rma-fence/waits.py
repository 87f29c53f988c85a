import gzip, re, sys, collections
# waits.py otf2-print.txt.gz TICKS_PER_SECOND: the waits at a window's fence, creation and
# free per location, from otf2-print's text alone, by two definitions:
#   scalasca-def: Scalasca 2.6's (src/scout/generator/MPI_RMA.pattern): the latest member's
#     RmaCollectiveBegin - the location's own, when every member's RmaCollectiveEnd comes
#     after the latest begin (all spans overlap), else 0;
#   ptrace-def: ptrace's (as at a barrier): the latest member's Enter of the call - the
#     location's own Enter, at most to its RmaCollectiveEnd.
f = gzip.open(sys.argv[1], 'rt')
res = float(sys.argv[2]) if len(sys.argv) > 2 else 1e9
enter, begin = {}, {}
calls = collections.defaultdict(list)  # (win) -> list per rank
seq = collections.defaultdict(int)
inst = collections.defaultdict(dict)
for line in f:
    p = line.split()
    if len(p) < 3 or not p[1].isdigit():
        continue
    ev, loc, t = p[0], int(p[1]), int(p[2])
    if ev == 'ENTER':
        enter[loc] = t
    elif ev == 'RMA_COLLECTIVE_BEGIN':
        begin[loc] = t
    elif ev == 'RMA_COLLECTIVE_END':
        op = line.split('Operation: ')[1].split(',')[0]
        win = re.search(r'Window: .*?<(\d+)>', line).group(1)
        k = seq[(loc, win)]; seq[(loc, win)] += 1
        inst[(win, k)][loc] = (op, enter[loc], begin[loc], t)
kind = lambda op: 'fence' if op == 'BARRIER' else 'create' if op.startswith('CREATE') else 'free'
sc = collections.defaultdict(float); pt = collections.defaultdict(float)
for key, m in inst.items():
    lb = max(v[2] for v in m.values()); le = min(v[3] for v in m.values())
    lE = max(v[1] for v in m.values())
    for loc, (op, e, b, end) in m.items():
        if le > lb and b < lb:
            sc[(loc, kind(op))] += (lb - b) / res
        pt[(loc, kind(op))] += max(0, min(lE, end) - e) / res
for loc in sorted({l for l, _ in sc} | {l for l, _ in pt}):
    print(loc, ' '.join('%s scalasca-def %.6f ms ptrace-def %.6f ms' % (k, sc[(loc, k)] * 1e3, pt[(loc, k)] * 1e3) for k in ('fence', 'create', 'free')))
