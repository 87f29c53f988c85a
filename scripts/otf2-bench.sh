#!/usr/bin/env bash
# Decode speed of ptrace's OTF2 reader against the reference readers on the
# same archive: otf2-print (the OTF2 C library) and python3-otf2.
#
#   scripts/otf2-bench.sh [EVENTS]      (default 1000000)
#
# Writes a halo trace with `ptrace gen`, converts it to OTF2 with
# python3-otf2 (otf2/testdata/write_otf2.py), then times each reader reading
# every event. On a shared machine compare CPU seconds, not wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
EVENTS=${1:-1000000}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
go build -o "$T/ptrace" ./cmd/ptrace
"$T/ptrace" gen halo --ranks 4 --threads 4 --events "$EVENTS" -o "$T/native" >/dev/null
PTRACE_OTF2_FROM="$T/native" PTRACE_OTF2_TO="$T/otf2" go test ./otf2 -run TestWriteArchive -count=1 >/dev/null
A="$T/otf2/traces.otf2"
echo "archive: $(du -sh "$T/otf2/traces" | cut -f1) of event files, $(ls "$T/otf2/traces"/*.evt | wc -l) locations"

echo "== ptrace otf2 decoder (go test -bench, event files in memory)"
PTRACE_OTF2_BENCH="$A" go test ./otf2 -run '^$' -bench BenchmarkDecodeEvents -benchtime 20x | grep Benchmark

# The reference tools' start-up (library loading, definitions) costs about a
# second of CPU here: time them on the committed 124-event archive too and
# subtract, so the rates below are per event.
SMALL=otf2/testdata/halo/traces.otf2
echo "== start-up baselines on $SMALL"
/usr/bin/time -f "otf2-print --silent: %e s wall, %U s user + %S s sys" otf2-print --silent "$SMALL" >/dev/null
/usr/bin/time -f "otf2-print: %e s wall, %U s user + %S s sys" otf2-print "$SMALL" >/dev/null
/usr/bin/time -f "python3-otf2: %e s wall, %U s user + %S s sys" /usr/bin/python3 -c '
import otf2, sys
with otf2.reader.open(sys.argv[1]) as tr:
    for _loc, _ev in tr.events:
        pass' "$SMALL"

echo "== otf2-print --silent (reads and checks every event, prints nothing)"
/usr/bin/time -f "%e s wall, %U s user + %S s sys" otf2-print --silent "$A" 2>&1 | grep -v "^$\|OTF2-PRINT" || true

echo "== otf2-print > /dev/null (every event printed)"
/usr/bin/time -f "%e s wall, %U s user + %S s sys" otf2-print "$A" >/dev/null

echo "== python3-otf2 reader (iterates every event)"
/usr/bin/time -f "%e s wall, %U s user + %S s sys" /usr/bin/python3 -c '
import otf2, sys
n = 0
with otf2.reader.open(sys.argv[1]) as tr:
    for _loc, _ev in tr.events:
        n += 1
print(n, "events")' "$A"

echo "== ptrace analyze: OTF2 archive vs the native trace"
/usr/bin/time -f "otf2:   %e s wall, %U s user + %S s sys" "$T/ptrace" analyze -q --json /dev/null "$A"
/usr/bin/time -f "native: %e s wall, %U s user + %S s sys" "$T/ptrace" analyze -q --json /dev/null "$T/native"
