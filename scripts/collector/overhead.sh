#!/usr/bin/env bash
# Collector overhead, the way POT measures it (seed pot-dependent-task-time-
# breakdown §4.1, Table 2): each example runs uninstrumented, with a no-op
# OMPT tool (same callbacks, empty bodies) and with the ptrace collector;
# RUNS runs each. Two times per run:
#   compute  the program's own timer around its parallel part (elapsed=...)
#   wall     the whole process, start-up and trace writing at exit included
# and, for the collector, events and bytes per event (on disk; in memory).
#
# The three configurations of one benchmark run back to back (order rotated
# from run to run), and the slowdown is the median over the runs of these
# paired ratios: on a shared machine whose load changes the times from run
# to run by several times, a ratio of independent medians means little, a
# ratio of runs made under the same load does. The best-of-RUNS ratio (least
# disturbed runs) is printed too.
#
#   scripts/collector/overhead.sh [RUNS=10] [OUT=build/collector-overhead]
#   SUMMARY_ONLY=1 scripts/collector/overhead.sh RUNS OUT   (table from OUT/raw.tsv)
#
# Prints a markdown table; raw per-run times go to OUT/raw.tsv.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RUNS=${1:-10}
OUT=${2:-$ROOT/build/collector-overhead}
LIB=$ROOT/build/collector
EX=$ROOT/build/examples
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN=(mpirun --oversubscribe --allow-run-as-root -np 2)

make -s -C "$ROOT" collector examples >/dev/null
mkdir -p "$OUT"
RAW=$OUT/raw.tsv

# name | MPI (0/1) | command. MPI runs use 2 ranks of 1 OpenMP thread: the
# machine has 2 cores, and oversubscribed ranks (libomp and Open MPI both
# busy-wait) measure the scheduler rather than the collector.
BENCHES=(
	"imbalance g=1us|0|$EX/imbalance 1 40000"
	"imbalance g=4us|0|$EX/imbalance 4 20000"
	"imbalance g=16us|0|$EX/imbalance 16 8000"
	"imbalance g=64us|0|$EX/imbalance 64 2000"
	"fib n=27 (no cutoff)|0|$EX/fib 27"
	"cholesky 16x16 tiles of 96|0|$EX/cholesky 16 96"
	"halo_mpi 2 ranks x 1 thread|1|$EX/halo_mpi 2097152 100 8"
)

now() { date +%s%N; }

# run NAME MPI CONFIG CMD...: one run, appends "name config compute wall" to RAW
run() {
	local name=$1 mpi=$2 cfg=$3
	shift 3
	local env=() dir="$OUT/trace"
	case $cfg in
	plain) ;;
	noop) env=(OMP_TOOL_LIBRARIES="$LIB/libptrace-noop.so") ;;
	ptrace)
		rm -rf "$dir"
		if [ "$mpi" = 1 ]; then
			env=(PTRACE_DIR="$dir" LD_PRELOAD="$LIB/libptrace.so" OMP_TOOL_LIBRARIES="$LIB/libptrace.so")
		else
			env=(PTRACE_DIR="$dir" OMP_TOOL_LIBRARIES="$LIB/libptrace-omp.so")
		fi
		;;
	esac
	local cmd=("$@")
	[ "$mpi" = 1 ] && cmd=("${MPIRUN[@]}" -x OMP_NUM_THREADS=1 "$@") && env+=(OMP_NUM_THREADS=1)
	local t0 t1 out
	t0=$(now)
	out=$(env "${env[@]}" "${cmd[@]}")
	t1=$(now)
	local compute
	compute=$(sed -n 's/.*elapsed=\([0-9.]*\)s.*/\1/p' <<<"$out" | head -1)
	printf '%s\t%s\t%s\t%s\n' "$name" "$cfg" "$compute" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.6f", (b-a)/1e9}')" >>"$RAW"
}

median() { sort -g | awk '{a[NR]=$1} END{if (NR%2) print a[(NR+1)/2]; else printf "%.6f\n", (a[NR/2]+a[NR/2+1])/2}'; }

# paired NAME CONFIG FIELD: per run, CONFIG's time over the uninstrumented one
paired() {
	awk -F'\t' -v n="$1" -v c="$2" -v f="$3" '
		$1 == n { v[$2] = $f; if ($2 == "plain") p = $f
			if (("plain" in v) && ("noop" in v) && ("ptrace" in v)) { print v[c] / p; delete v } }' "$RAW" | median
}
best() { awk -F'\t' -v n="$1" -v c="$2" '$1 == n && $2 == c {print $3}' "$RAW" | sort -g | head -1; }

configs=(plain noop ptrace)
if [ -z "${SUMMARY_ONLY:-}" ]; then
: >"$RAW"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((r = 0; r < RUNS; r++)); do
	for b in "${BENCHES[@]}"; do
		IFS='|' read -r name mpi cmd <<<"$b"
		# rotate the order of the configurations from run to run
		for ((c = 0; c < 3; c++)); do
			cfg=${configs[$(((c + r) % 3))]}
			# shellcheck disable=SC2086
			run "$name" "$mpi" "$cfg" $cmd
		done
	done
	echo "run $((r + 1))/$RUNS done" >&2
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
fi
# keep the size runs out of the timing data
RAW_TIMES=$RAW
RAW=$OUT/size-runs.tsv

echo "| benchmark | uninstrumented (s, median / best) | no-op slowdown (median / best) | ptrace slowdown (median / best) | ptrace wall slowdown (median) | events | bytes/event on disk | bytes/event in memory |"
echo "|---|---|---|---|---|---|---|---|"
for b in "${BENCHES[@]}"; do
	IFS='|' read -r name mpi cmd <<<"$b"
	RAW=$RAW_TIMES
	pm=$(awk -F'\t' -v n="$name" '$1==n && $2=="plain" {print $3}' "$RAW" | median)
	pb=$(best "$name" plain) nb=$(best "$name" noop) tb=$(best "$name" ptrace)
	nm=$(paired "$name" noop 3) tm=$(paired "$name" ptrace 3) tw=$(paired "$name" ptrace 4)
	RAW=$OUT/size-runs.tsv
	# one more traced run for the sizes
	# shellcheck disable=SC2086
	run "$name" "$mpi" ptrace $cmd
	stats=$(cd "$ROOT" && go run ./scripts/collector/evstats "$OUT/trace")
	stats=${stats%%$'\n'*}
	ev=$(sed -n 's/.*events=\([0-9]*\).*/\1/p' <<<"$stats")
	disk=$(sed -n 's/.*disk_bytes_per_event=\([0-9.]*\).*/\1/p' <<<"$stats")
	mem=$(sed -n 's/.*memory_bytes_per_event=\([0-9.]*\).*/\1/p' <<<"$stats")
	awk -v n="$name" -v pm="$pm" -v pb="$pb" -v nm="$nm" -v nb="$nb" -v tm="$tm" -v tb="$tb" -v tw="$tw" -v ev="$ev" -v d="$disk" -v mm="$mem" \
		'BEGIN{printf "| %s | %.3f / %.3f | %.2f / %.2f | %.2f / %.2f | %.2f | %d | %.2f | %.1f |\n", n, pm, pb, nm, nb/pb, tm, tb/pb, tw, ev, d, mm}'
done
