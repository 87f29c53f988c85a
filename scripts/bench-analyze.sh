#!/usr/bin/env bash
# bench-analyze.sh — the analysis engine's end-to-end figures (issue #12):
# generates stencil, halo and nearest traces of about EVENTS events, runs
# `ptrace analyze --json` on each under /usr/bin/time, RUNS times, and prints
# per trace: events, bytes, wall (median and spread), events/s, max RSS and
# RSS / trace bytes.
#
#   scripts/bench-analyze.sh [EVENTS] [RANKS] [RUNS]     defaults: 10000000 2 3
#   PTRACE=path/to/ptrace EXTRA="--memory-limit 1GiB" scripts/bench-analyze.sh
#
#   WORKLOADS=all scripts/bench-analyze.sh 10000000 1 3   # every shape (bench-traces.sh)
#
# Measure with nothing else running: the machine's other load shows up as
# spread (and 2× between sessions is normal on shared VMs).
set -euo pipefail
events=${1:-10000000}
ranks=${2:-2}
runs=${3:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
work=${BENCH_DIR:-$(mktemp -d /tmp/ptrace-bench.XXXXXX)}
ptrace=${PTRACE:-$work/ptrace}
if [ -z "${PTRACE:-}" ]; then
	(cd "$here" && go build -o "$ptrace" ./cmd/ptrace)
fi
[ -x /usr/bin/time ] || { echo "bench-analyze: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }

printf '%-11s %11s %11s %10s %10s %11s %10s %9s  %s\n' trace events bytes wall_s spread_s Mevents/s maxRSS_MB RSS/bytes 'peak heap in'
# shellcheck source=bench-traces.sh
. "$here/scripts/bench-traces.sh"
for w in $(workloads); do
	dir=$work/$w
	[ -d "$dir" ] || gen_workload "$ptrace" "$w" "$dir" "$events"
	bytes=$(du -sbL --exclude='*.json' "$dir" | cut -f1)
	walls=() rss=0 ev=0
	for ((i = 0; i < runs; i++)); do
		# shellcheck disable=SC2086
		/usr/bin/time -f '%e %M' -o "$work/time" "$ptrace" analyze -q --ranks "$ranks" ${EXTRA:-} --stats --json "$work/r.json" "$dir" 2>"$work/stats"
		read -r sec kb <"$work/time"
		walls+=("$sec")
		rss=$((kb > rss ? kb : rss))
	done
	ev=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["trace"]["events"])' "$work/r.json")
	python3 - "$w" "$ev" "$bytes" "$rss" "$work/stats" "${walls[@]}" <<'PY'
import re, statistics, sys
w, ev, b, rss = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
walls = sorted(float(x) for x in sys.argv[6:])
med = statistics.median(walls)
# The phase whose peak heap (the first rank's column of --stats) is highest.
unit = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}
peak = (0, "?")
for line in open(sys.argv[5]):
    m = re.match(r"^(\S+(?: \S+)?)\s+\S+s\s+\d+\s+([\d.]+) (B|KiB|MiB|GiB)", line)
    if m:
        peak = max(peak, (float(m[2]) * unit[m[3]], m[1]))
print(f"{w:<11} {ev:>11} {b:>11} {med:>10.2f} {walls[-1]-walls[0]:>10.2f} {ev/med/1e6:>11.2f} {rss/1024:>10.0f} {rss*1024/b:>9.2f}  {peak[1]} ({peak[0]/2**20:.0f} MiB)")
PY
done
[ -n "${BENCH_DIR:-}" ] || rm -rf "$work"
