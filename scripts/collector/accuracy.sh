#!/usr/bin/env bash
# Accuracy harness (POT §4.2, Fig. 4): traces the load-imbalance example with
# 2 threads for task grains g = 1 µs … 1 ms and keeps the traces, then
# compares what "ptrace analyze" measures with POT's ideal values
#   work = I·g·n(n+1)/2,  idleness = I·g·n(n−1)/2   (n threads, I iterations).
# I is chosen so that each run lasts about 0.2 s (I·n·g), at least 100 and at
# most 10 000 iterations (POT uses 10 000).
#
#   scripts/collector/accuracy.sh [OUT=build/accuracy]
#
# OUT/g-<g>us/       the trace of each grain
# OUT/g-<g>us.json   ptrace analyze --json output (if the analysis ran)
# OUT/index.tsv      g_us, iterations, threads, trace directory
# The table (docs/ACCURACY.md layout) is printed at the end.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/build/accuracy}
N=2
export OMP_NUM_THREADS=$N

make -s -C "$ROOT" collector examples ptrace >/dev/null
PTRACE=$ROOT/ptrace
mkdir -p "$OUT"
printf 'g_us\titerations\tthreads\ttrace\n' >"$OUT/index.tsv"
for g in 1 2 4 8 16 32 64 128 256 512 1024; do
	it=$((100000 / g))
	((it > 10000)) && it=10000
	((it < 100)) && it=100
	dir=$OUT/g-${g}us
	"$PTRACE" record --force -o "$dir" -- "$ROOT/build/examples/imbalance" "$g" "$it" >/dev/null 2>&1
	"$PTRACE" validate "$dir" >/dev/null
	if ! "$PTRACE" analyze -q --json "$dir.json" "$dir" 2>"$dir.analyze.err"; then
		rm -f "$dir.json"
	fi
	printf '%s\t%s\t%s\t%s\n' "$g" "$it" "$N" "$dir" >>"$OUT/index.tsv"
	echo "g=${g}us: $it iterations traced in $dir" >&2
done
cd "$ROOT" && go run ./scripts/collector/accuracy "$OUT"
