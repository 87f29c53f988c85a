#!/usr/bin/env bash
# Builds bench_pthread.c and runs it without and with the collector (as
# ptrace record runs a program on libomp: preloaded and named as OMPT tool),
# 3 times each, interleaved.
#   scripts/collector/bench_pthread.sh [N=400]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
make -s -C "$ROOT" collector >/dev/null
BIN=$ROOT/build/collector/bench_pthread
LIB=$ROOT/build/collector/libptrace-omp.so
${CC:-clang} -O2 -std=c11 -Wall -Wextra -Werror -fopenmp -o "$BIN" "$ROOT/scripts/collector/bench_pthread.c"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for i in 1 2 3; do
	echo "run $i, without the collector"
	OMP_NUM_THREADS=2 "$BIN" "${1:-400}"
	echo "run $i, with the collector"
	PTRACE_DIR=$TMP/run$i LD_PRELOAD=$LIB OMP_TOOL_LIBRARIES=$LIB OMP_NUM_THREADS=2 "$BIN" "${1:-400}"
done
