#!/usr/bin/env bash
# Accuracy harness (POT §4.2, Fig. 4): traces the load-imbalance example with
# 2 threads for task grains g = 1 µs … 1 ms and keeps the traces, then
# compares what "ptrace analyze" measures with POT's ideal values
#   work = I·g·n(n+1)/2,  idleness = I·g·n(n−1)/2   (n threads, I iterations).
# The analysis window starts at the benchmark's parallel region (the example
# first runs a warm-up region in which libomp creates its threads).
# I is chosen so that each run lasts about 0.2 s (I·n·g), at least 100 and at
# most 10 000 iterations (POT uses 10 000). Each grain is traced REPEAT times
# (default 5) and the table shows the median of each measured value, so one
# run the OS disturbed (a descheduled thread) does not make the figure.
#
#   [REPEAT=5] scripts/collector/accuracy.sh [OUT=build/accuracy]
#
# OUT/g-<g>us-r<k>/       the traces
# OUT/g-<g>us-r<k>.json   ptrace analyze --json output (if the analysis ran)
# OUT/index.tsv           g_us, iterations, threads, trace directory
# The table (docs/ACCURACY.md layout) is printed at the end.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/build/accuracy}
N=2
REPEAT=${REPEAT:-5}
export OMP_NUM_THREADS=$N

make -s -C "$ROOT" collector examples ptrace >/dev/null
PTRACE=$ROOT/ptrace
mkdir -p "$OUT"
printf 'g_us\titerations\tthreads\ttrace\n' >"$OUT/index.tsv"
for g in 1 2 4 8 16 32 64 128 256 512 1024; do
	it=$((100000 / g))
	((it > 10000)) && it=10000
	((it < 100)) && it=100
	for ((k = 1; k <= REPEAT; k++)); do
		dir=$OUT/g-${g}us-r$k
		"$PTRACE" record --force -o "$dir" -- "$ROOT/build/examples/imbalance" "$g" "$it" >/dev/null 2>&1
		"$PTRACE" validate "$dir" >/dev/null
		# Measure the benchmark's region only, not the warm-up region before
		# it where libomp creates its threads: from the second parallel_begin,
		# in ns after the trace's first event.
		t0=$("$PTRACE" dump "$dir" | awk 'NR == 1 || $1 < first { first = $1 }
			$3 == "parallel_begin" && ++n == 2 { at = $1 } END { print at - first }')
		if ! "$PTRACE" analyze -q --window "$t0:" --json "$dir.json" "$dir" 2>"$dir.analyze.err"; then
			rm -f "$dir.json"
		fi
		printf '%s\t%s\t%s\t%s\n' "$g" "$it" "$N" "$dir" >>"$OUT/index.tsv"
	done
	echo "g=${g}us: $REPEAT runs of $it iterations traced in $OUT/g-${g}us-r*" >&2
done
cd "$ROOT" && go run ./scripts/collector/accuracy "$OUT"
