#!/usr/bin/env bash
# bench-cores.sh — one analysis rank on one core against the same rank on
# more (issue 44: "one process uses the cores it is given"): `ptrace analyze
# --ranks 1 --json` on each trace directory given, under `taskset -c 0`
# and `taskset -c 0-(CORES-1)` alternated run by run (GOMAXPROCS follows the
# affinity, and the rank's share of the cores with it), then per trace the
# median wall on each (with its range), the speedup of the medians, and
# the median max RSS on each.
#
#   scripts/bench-cores.sh PTRACE RUNS CORES DIR...
#   scripts/bench-cores.sh ./ptrace 7 2 /tmp/lean /tmp/tfib
#
# Nothing else should run meanwhile: the point is the second core.
set -euo pipefail
[ $# -ge 4 ] || { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
bin=$1 runs=$2 cores=$3
shift 3
command -v taskset >/dev/null || { echo "bench-cores: taskset is missing (apt-get install util-linux)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-cores: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
work=$(mktemp -d /tmp/ptrace-cores.XXXXXX)
trap 'rm -rf "$work"' EXIT
log=$work/log
for ((i = 0; i < runs; i++)); do
	for d in "$@"; do
		for set in 0 "0-$((cores - 1))"; do
			/usr/bin/time -f '%e %M' -o "$work/time" taskset -c "$set" "$bin" analyze -q --ranks 1 --json "$work/r.json" "$d"
			read -r sec kb <"$work/time"
			echo "$d $set $sec $kb" >>"$log"
		done
	done
done
python3 - "$log" "$cores" <<'PY'
import collections, statistics, sys
rows = collections.defaultdict(list)
order = []
for line in open(sys.argv[1]):
    d, s, sec, kb = line.split()
    if d not in order:
        order.append(d)
    rows[(d, s == "0")].append((float(sec), int(kb) / 1024))
print(f"{'trace':<28} {'1 core s':>8} {'range':>11} {sys.argv[2] + ' cores s':>9} {'range':>11} {'speedup':>7} {'RSS MiB 1/n':>12}")
for d in order:
    one, many = rows[(d, True)], rows[(d, False)]
    a, b = statistics.median(x[0] for x in one), statistics.median(x[0] for x in many)
    print(f"{d:<28} {a:>8.2f} {min(x[0] for x in one):>5.2f}–{max(x[0] for x in one):<5.2f} {b:>9.2f} "
          f"{min(x[0] for x in many):>5.2f}–{max(x[0] for x in many):<5.2f} {a / b:>7.2f} "
          f"{statistics.median(x[1] for x in one):>5.0f}/{statistics.median(x[1] for x in many):<5.0f}")
PY
