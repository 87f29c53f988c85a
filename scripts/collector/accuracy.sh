#!/usr/bin/env bash
# Accuracy harness (POT §4.2, Fig. 4): traces the load-imbalance example with
# 2 threads for task grains g (default 16, 4 and 1 µs) and keeps the traces,
# then compares what "ptrace analyze" measures with
#   - POT's ideal values: work = I·g·n(n+1)/2, idleness = I·g·n(n−1)/2
#     (n threads, I iterations), and
#   - the program's own timing of the same run: the example adds up, per
#     thread, the time its tasks and its implicit task ran (clock reads in
#     its own code) and prints it ("imbalance-own:"); its non-work is
#     n·span − work, compared with the trace's idleness + overhead.
# Each traced run is paired with an untraced run of the same command (order
# alternating from pair to pair), and the slowdown is the median over the
# pairs of traced/untraced wall time (the whole process, trace writing at
# exit included), printed with its min–max spread.
# The analysis window is the benchmark's parallel region (the example first
# runs a warm-up region in which libomp creates its threads).
# I is chosen so that each run lasts about 0.2 s (I·n·g), at least 100 and at
# most 10 000 iterations (POT uses 10 000). Each grain is traced REPEAT times
# (default 5) and the table shows medians, so one run the OS disturbed (a
# descheduled thread) does not make the figure. The machine this was written
# on is shared: read the spread, not only the median.
#
#   [REPEAT=5] [GRAINS="16 4 1"] [LIBS="name=lib.so ..."] [PRIO=-20] [ANALYZE_FLAGS=...] \
#       scripts/collector/accuracy.sh [OUT=build/accuracy]
#   TABLE_ONLY=1 ANALYZE_FLAGS=--no-instrumentation-correction scripts/collector/accuracy.sh OUT
#       (re-analyses the traces already in OUT)
#
# LIBS compares collector builds under the same load (default: this tree's
# libptrace-omp.so, named "ptrace"): for every grain and repeat each library
# traces one run (with its own untraced partner), the libraries' order
# rotating, so a change in the machine's load hits them alike. The shared
# VM this was written on ran at load averages of 10–30 on 2 cores: compare
# libraries within one harness run, not across runs.
#
# OUT/NAME/g-<g>us-r<k>/       the traces of library NAME
# OUT/NAME/g-<g>us-r<k>.json   ptrace analyze --json output (if the analysis ran)
# OUT/NAME/index.tsv           per run: g_us, iterations, threads, trace directory,
#                              own work and non-work (ns), traced and untraced wall (s),
#                              own median iteration's work (ns)
# A third table compares the median iteration's work (all threads) of the
# trace and of the program: an iteration no thread was descheduled in, so
# it shows what the collector adds even on a loaded machine.
# STAMPS=1 also has each traced run write the program's clock reads
# (OUT/NAME/g-<g>us-r<k>.stamps, IMBALANCE_STAMPS) and prints, for the first
# run of each grain, the gaps between them and the trace's events
# (scripts/collector/accuracy/stamps.go): where the remaining divergence
# lies. The stamps cost the program a few stores outside its own clock
# reads, so leave STAMPS off for the tables above.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/build/accuracy}
N=2
REPEAT=${REPEAT:-5}
GRAINS=${GRAINS:-16 4 1}
export OMP_NUM_THREADS=$N
LIBS=${LIBS:-ptrace=$ROOT/build/collector/libptrace-omp.so}
read -r -a libs <<<"$LIBS"

make -s -C "$ROOT" collector examples ptrace >/dev/null
PTRACE=$ROOT/ptrace
BIN=$ROOT/build/examples/imbalance
now() { date +%s%N; }
# PRIO=-20 runs the benchmark (not the analysis) at that nice level (needs
# root): on a loaded machine the threads are then rarely descheduled, and
# the runs take the same CPU time, only sooner.
prio() { if [ -n "${PRIO:-}" ]; then nice -n "$PRIO" "$@"; else "$@"; fi; }

analyze() {
	local dir=$1
	# Measure the benchmark's region only, as the ideal and the program's
	# own timing do: not the warm-up region before it, where libomp creates
	# its threads, nor the program's exit after it. From the second
	# parallel_begin to the second parallel_end, in ns after the trace's
	# first event.
	win=$("$PTRACE" dump "$dir" | awk 'NR == 1 || $1 < first { first = $1 }
		$3 == "parallel_begin" && ++n == 2 { at = $1 } $3 == "parallel_end" && ++m == 2 { to = $1 }
		END { printf "%.0f:%.0f\n", at - first, to - first }')
	# shellcheck disable=SC2086
	if ! "$PTRACE" analyze -q ${ANALYZE_FLAGS:-} --window "$win" --json "$dir.json" "$dir" 2>"$dir.analyze.err"; then
		rm -f "$dir.json"
	fi
}

# one NAME LIB G IT K: a traced run with LIB and its untraced partner
one() {
	local name=$1 lib=$2 g=$3 it=$4 k=$5 out traced plain a
	local dir=$OUT/$name/g-${g}us-r$k
	rm -rf "$dir"
	for order in $((k % 2)) $(((k + 1) % 2)); do
		if [ "$order" = 1 ]; then
			a=$(now)
			if [ -n "${STAMPS:-}" ]; then
				out=$(IMBALANCE_STAMPS=$dir.stamps PTRACE_DIR=$dir OMP_TOOL_LIBRARIES=$lib prio "$BIN" "$g" "$it")
			else
				out=$(PTRACE_DIR=$dir OMP_TOOL_LIBRARIES=$lib prio "$BIN" "$g" "$it")
			fi
			traced=$((($(now) - a) / 1000))
		else
			a=$(now)
			prio "$BIN" "$g" "$it" >/dev/null
			plain=$((($(now) - a) / 1000))
		fi
	done
	"$PTRACE" validate "$dir" >/dev/null
	analyze "$dir"
	own=$(sed -n 's/^imbalance-own:.* work_ns=\([0-9]*\) nonwork_ns=\([0-9]*\).*/\1\t\2/p' <<<"$out")
	iter=$(sed -n 's/^imbalance-own:.* iter_median_ns=\([0-9]*\).*/\1/p' <<<"$out")
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$g" "$it" "$N" "$dir" "$own" \
		"$(awk -v t="$traced" 'BEGIN{printf "%.6f", t/1e6}')" "$(awk -v t="$plain" 'BEGIN{printf "%.6f", t/1e6}')" "$iter" >>"$OUT/$name/index.tsv"
}

if [ -n "${TABLE_ONLY:-}" ]; then
	for spec in "${libs[@]}"; do
		tail -n +2 "$OUT/${spec%%=*}/index.tsv" | cut -f4 | while read -r dir; do analyze "$dir"; done
	done
else
	for spec in "${libs[@]}"; do
		mkdir -p "$OUT/${spec%%=*}"
		printf 'g_us\titerations\tthreads\ttrace\town_work_ns\town_nonwork_ns\ttraced_wall_s\tplain_wall_s\town_iter_median_ns\n' >"$OUT/${spec%%=*}/index.tsv"
	done
	echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
	for g in $GRAINS; do
		it=$((100000 / g))
		((it > 10000)) && it=10000
		((it < 100)) && it=100
		for ((k = 1; k <= REPEAT; k++)); do
			for ((l = 0; l < ${#libs[@]}; l++)); do
				spec=${libs[$(((l + k) % ${#libs[@]}))]}
				one "${spec%%=*}" "${spec#*=}" "$g" "$it" "$k"
			done
		done
		echo "g=${g}us: $REPEAT runs of $it iterations per library, load average $(cut -d' ' -f1 /proc/loadavg)" >&2
	done
	echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
fi
for spec in "${libs[@]}"; do
	echo
	echo "### ${spec%%=*} (${spec#*=})"
	echo
	(cd "$ROOT" && go run ./scripts/collector/accuracy "$OUT/${spec%%=*}")
	if [ -n "${STAMPS:-}" ]; then
		for g in $GRAINS; do
			d=$OUT/${spec%%=*}/g-${g}us-r1
			if [ -f "$d.stamps" ]; then
				echo
				echo "g = $g µs, run 1: the program's clock reads against the trace's events (medians per thread and iteration)"
				echo
				(cd "$ROOT" && go run ./scripts/collector/accuracy -stamps "$d.stamps" "$d")
			fi
		done
	fi
done
