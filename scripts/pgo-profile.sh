#!/usr/bin/env bash
# pgo-profile.sh — remake cmd/ptrace/default.pgo, the CPU profile that
# `go build ./cmd/ptrace` optimises with (profile-guided optimisation:
# hot calls inlined, the simulation's per-event passes devirtualised;
# docs/PERFORMANCE.md, "Seventeenth round").
#
#   scripts/pgo-profile.sh [EVENTS] [RUNS]      defaults: 10000000 2
#   BENCH_DIR=/tmp/bench scripts/pgo-profile.sh  (reuses its traces)
#
# The profile is of `ptrace analyze --ranks 2 --json` on the stencil, halo
# and nearest traces of bench-analyze.sh and of a pure MPI program of 64
# processes (the wait states' delay costs), and of `--ranks 1` on two
# task-heavy ones (the lean stencil: about 4 events a task, as recorded
# task programs; a tree of tasks that wait for their children, as BOTS's;
# RUNS runs each, merged), made by a build of the current tree without a
# profile. Remake it when the
# engine's hot code moves (a stale profile costs speed, never results),
# and commit it with the change.
set -euo pipefail
cd "$(dirname "$0")/.."
events=${1:-10000000} runs=${2:-2}
work=${BENCH_DIR:-$(mktemp -d /tmp/ptrace-pgo.XXXXXX)}
mkdir -p "$work"
bin=$work/ptrace-nopgo
CGO_ENABLED=0 go build -pgo=off -o "$bin" ./cmd/ptrace
profs=()
for w in stencil halo nearest lean mpi tree; do
	ranks=2
	if [ "$w" = lean ]; then
		ranks=1
		[ -d "$work/$w" ] || "$bin" gen stencil --lean --ranks 1 --threads 4 --events "$events" -o "$work/$w" >/dev/null
	elif [ "$w" = tree ]; then
		ranks=1
		[ -d "$work/$w" ] || "$bin" gen tree --ranks 1 --threads 4 --events "$events" --seed 7 -o "$work/$w" >/dev/null
	elif [ "$w" = mpi ]; then
		# A pure MPI program: the wait states' delay costs, which the
		# hybrid traces barely run.
		[ -d "$work/$w" ] || "$bin" gen mpi --ranks 64 --events "$events" --seed 7 -o "$work/$w" >/dev/null
	else
		[ -d "$work/$w" ] || "$bin" gen "$w" --ranks 16 --threads 4 --events "$events" --seed 7 -o "$work/$w" >/dev/null
	fi
	for ((i = 0; i < runs; i++)); do
		"$bin" analyze -q --ranks "$ranks" --cpuprofile "$work/$w-$i.prof" --json "$work/r.json" "$work/$w"
		profs+=("$work/$w-$i.prof")
	done
done
go tool pprof -proto "${profs[@]}" >cmd/ptrace/default.pgo 2>/dev/null
echo "cmd/ptrace/default.pgo: $(wc -c <cmd/ptrace/default.pgo) bytes from ${#profs[@]} profiles"
[ -n "${BENCH_DIR:-}" ] || rm -rf "$work"
