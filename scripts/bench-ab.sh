#!/usr/bin/env bash
# bench-ab.sh — two ptrace builds compared on the analysis engine's traces
# (issue #12), alternated run by run so that the machine's drift (2× within
# a session on shared VMs) falls on both alike: `ptrace analyze --json` on
# the stencil, halo and nearest traces of bench-analyze.sh, RUNS pairs each,
# then per trace and build the median wall (with its range), events/s, and
# the median max RSS (with its range) and RSS / trace bytes.
#
#   scripts/bench-ab.sh OLD NEW [RUNS] [EVENTS] [RANKS]   defaults: 5 10000000 2
#   BENCH_DIR=/tmp/bench EXTRA=--stream scripts/bench-ab.sh /tmp/ptrace-old ./ptrace
#   WORKLOADS=all scripts/bench-ab.sh OLD NEW 3 10000000 1   # every shape (bench-traces.sh)
#
# OLD and NEW are ptrace binaries (e.g. `git worktree add /tmp/old REV` and
# `go build -o /tmp/ptrace-old ./cmd/ptrace` there). The traces are made
# with NEW's `gen` in BENCH_DIR (a temporary directory, removed after,
# when unset) unless they are there already.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
old=$1 new=$2 runs=${3:-5} events=${4:-10000000} ranks=${5:-2}
for b in "$old" "$new"; do
	[ -x "$b" ] || { echo "bench-ab: $b is not an executable" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "bench-ab: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
work=${BENCH_DIR:-$(mktemp -d /tmp/ptrace-ab.XXXXXX)}
mkdir -p "$work"
log=$work/ab.log
: >"$log"
# shellcheck source=bench-traces.sh
. "$(dirname "$0")/bench-traces.sh"
shapes=$(workloads)
for w in $shapes; do
	[ -d "$work/$w" ] || gen_workload "$new" "$w" "$work/$w" "$events"
done
for ((i = 0; i < runs; i++)); do
	for w in $shapes; do
		for b in "$old" "$new"; do
			# shellcheck disable=SC2086
			/usr/bin/time -f '%e %M' -o "$work/time" "$b" analyze -q --ranks "$ranks" ${EXTRA:-} --json "$work/r.json" "$work/$w"
			read -r sec kb <"$work/time"
			ev=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["trace"]["events"])' "$work/r.json")
			bytes=$(du -sbL --exclude='*.json' "$work/$w" | cut -f1)
			label=new
			[ "$b" = "$new" ] || label=old
			echo "$w $label $sec $kb $ev $bytes" >>"$log"
		done
	done
done
python3 - "$log" "$old" "$new" $shapes <<'PY'
import collections, statistics, sys
rows = collections.defaultdict(list)
meta = {}
for line in open(sys.argv[1]):
    w, b, sec, kb, ev, by = line.split()
    rows[(w, b)].append((float(sec), int(kb) * 1024))
    meta[w] = (int(ev), int(by))
print(f"old: {sys.argv[2]}\nnew: {sys.argv[3]}")
print(f"{'trace':<11} {'build':<5} {'wall_s':>6} {'range_s':>11} {'Mevents/s':>9} {'RSS_MiB':>7} {'range_MiB':>11} {'RSS/bytes':>11}")
for w in sys.argv[4:]:
    ev, by = meta[w]
    for b in ("old", "new"):
        s = [x[0] for x in rows[(w, b)]]
        m = [x[1] for x in rows[(w, b)]]
        print(f"{w:<11} {b:<5} {statistics.median(s):>6.2f} {min(s):>5.2f}–{max(s):<5.2f} {ev / statistics.median(s) / 1e6:>9.2f} "
              f"{statistics.median(m) / 2**20:>7.0f} {min(m) / 2**20:>5.0f}–{max(m) / 2**20:<5.0f} {min(m) / by:>5.2f}–{max(m) / by:<5.2f}")
PY
[ -n "${BENCH_DIR:-}" ] || rm -rf "$work"
