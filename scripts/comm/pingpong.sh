#!/usr/bin/env bash
# Compares the point-to-point latency of ptrace's Go MPI binding (comm/mpi)
# with plain C MPI_Send/MPI_Recv: builds scripts/comm/pingpong.c and
# scripts/comm/pingpong, runs each with mpirun -np 2 and prints the one-way
# latency of both and their ratio for each message size. A third column,
# "cgo", is the Go program calling MPI_Send/MPI_Recv directly through cgo on
# a reused buffer: the floor for any Go binding, separating the cost of
# crossing into C from that of comm/mpi itself.
#
# Each program reports the median of 5 timed loops; the script runs the pair
# RUNS times (default 3), alternating, and keeps each size's lowest median, as
# small shared machines add noise that only ever makes things slower.
#
# Usage: scripts/comm/pingpong.sh [size...]   (default 8 1024 65536 1048576)
# MPIRUN_FLAGS overrides the mpirun flags (default: --allow-run-as-root
# --oversubscribe, so that it also runs as root and on small machines).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mpicc -O2 -o "$work/pingpong-c" "$root/scripts/comm/pingpong.c"
# comm/mpi is built through the MPI's compiler wrapper (make ptrace-mpi)
(cd "$root" && CC="${MPICC:-mpicc}" go build -tags mpi -o "$work/pingpong-go" ./scripts/comm/pingpong)

read -r -a flags <<<"${MPIRUN_FLAGS:---allow-run-as-root --oversubscribe}"
for _ in $(seq "${RUNS:-3}"); do
	mpirun "${flags[@]}" -np 2 "$work/pingpong-c" "$@" >>"$work/c.txt"
	mpirun "${flags[@]}" -np 2 "$work/pingpong-go" -raw "$@" >>"$work/cgo.txt"
	mpirun "${flags[@]}" -np 2 "$work/pingpong-go" "$@" >>"$work/go.txt"
done

best() { awk '!($1 in m) || $2 < m[$1] { m[$1] = $2 } END { for (s in m) print s, m[s] }' "$1" | sort -k1,1; }
echo "one-way latency in microseconds, best of ${RUNS:-3} runs of the median of 5 (mpirun -np 2)"
join <(best "$work/c.txt") <(best "$work/cgo.txt") | join - <(best "$work/go.txt") | sort -n | awk '
	BEGIN { printf "%10s %10s %10s %10s %8s %8s\n", "bytes", "C", "cgo", "Go", "Go/C", "Go/cgo" }
	{ printf "%10d %10.3f %10.3f %10.3f %8.2f %8.2f\n", $1, $2, $3, $4, $4 / $2, $4 / $3 }'
