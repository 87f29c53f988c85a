#!/usr/bin/env bash
# bench-ranks.sh — memory of each analysis rank under mpirun (issue #12):
# with `mpirun -np N ptrace-mpi analyze`, a rank owns about 1/N of the
# traced processes, and when that is one or two of them, one process's
# simulation state is most of its peak. Generates the stop hook's stencil
# (4 processes, 1 M events) or uses DIR, runs it RUNS times under mpirun,
# and prints per run each rank's peak heap (`--stats`) and max RSS, with
# the heap over the bytes a rank owns on average.
#
#   scripts/bench-ranks.sh [NP] [RUNS] [DIR]        defaults: 4 3 (generated)
#   PTRACE_MPI=path/to/ptrace-mpi scripts/bench-ranks.sh 4 3 /tmp/trace
#
# RSS includes Open MPI's and the Go runtime's own ~35 MB; the heap is the
# analysis's. Measure with nothing else running.
set -euo pipefail
np=${1:-4}
runs=${2:-3}
dir=${3:-}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/ptrace-ranks.XXXXXX)
trap 'rm -rf "$work"' EXIT
command -v mpirun >/dev/null || { echo "bench-ranks: mpirun is missing (apt-get install openmpi-bin libopenmpi-dev)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-ranks: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
bin=${PTRACE_MPI:-$work/ptrace-mpi}
if [ -z "${PTRACE_MPI:-}" ]; then
	# built through the MPI's compiler wrapper, as make ptrace-mpi
	(cd "$here" && CC="${MPICC:-mpicc}" go build -tags mpi -o "$bin" ./cmd/ptrace)
fi
if [ -z "$dir" ]; then
	dir=$work/trace
	(cd "$here" && go build -o "$work/ptrace" ./cmd/ptrace)
	"$work/ptrace" gen stencil --ranks 4 --threads 4 --events 1000000 --seed 1 -o "$dir" >/dev/null
fi
bytes=$(du -sb --exclude='*.json' "$dir" | cut -f1)
echo "trace $dir: $bytes bytes, $np ranks (about $((bytes / np)) bytes a rank)"
printf '%-4s %-32s %-32s %s\n' run 'peak heap per rank (MiB)' 'max RSS per rank (MiB)' 'max heap / bytes a rank'
for ((i = 1; i <= runs; i++)); do
	rm -f "$work"/rss.*
	# Each rank's /usr/bin/time writes its own file (their stderr lines
	# would interleave).
	# shellcheck disable=SC2016
	mpirun --oversubscribe --allow-run-as-root -np "$np" \
		sh -c 'exec /usr/bin/time -f "%M" -o "$0.${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}" "$@"' "$work/rss" \
		"$bin" analyze --stats -q --json "$work/r.json" "$dir" >"$work/out" 2>&1 || {
		cat "$work/out" >&2
		exit 1
	}
	python3 - "$i" "$np" "$bytes" "$work/out" "$work"/rss.* <<'PY'
import re, sys
run, np, total, path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
text = open(path).read()
heap = [float(h) for h in re.findall(r'^rank \d+ peak heap ([\d.]+) MiB', text, re.M)]
rss = [int(open(f).read().split()[-1]) / 1024 for f in sys.argv[5:]]
ratio = max(heap) * 1048576 / (total / np) if heap else float('nan')
print(f"{run:<4} {' '.join(f'{h:.1f}' for h in heap):<32} {' '.join(f'{r:.1f}' for r in sorted(rss)):<32} {ratio:.1f}x")
PY
done
