#!/usr/bin/env bash
# Builds and runs bench_record.c (the collector alone: stamp, every task-path callback, encoding), 3 times.
#   scripts/collector/bench_record.sh [N=1000000]  (callbacks: N/10 calls each)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
make -s -C "$ROOT" collector >/dev/null
BIN=$ROOT/build/collector/bench_record
${CC:-clang} -O2 -std=c11 -Wall -Wextra -Werror -I"$ROOT/build/collector/include" -o "$BIN" \
	"$ROOT/scripts/collector/bench_record.c" -ldl -lpthread
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for i in 1 2 3; do
	echo "run $i"
	PTRACE_DIR=$TMP/run$i PTRACE_BUFFER_MB=512 "$BIN" "${1:-1000000}"
done
