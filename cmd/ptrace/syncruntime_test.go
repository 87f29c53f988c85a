package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/report"
)

// The imbalance workload with the runtime's code inside its taskwaits and
// barriers (gen --sync-runtime R): the analysis books 4·R per thread and
// iteration as overhead (breakdown.sync_runtime_ns), work and idleness keep
// POT's ideal values (expected.json); --sync-runtime-as-work books the same
// time as work, as POT does.
func TestGenSyncRuntime(t *testing.T) {
	dir := genTrace(t, "imbalance", "--ranks", "2", "--threads", "3", "--grain", "10us", "--iterations", "20", "--sync-runtime", "300ns")
	r := run(t, ptraceBin(), "analyze", "--json", "-", dir)
	if r.code != 0 {
		t.Fatalf("analyze exit %d: %s", r.code, r.stderr)
	}
	checkExpected(t, r.stdout, filepath.Join(dir, "expected.json"), "")
	// per rank: work I·g·n(n+1)/2 = 20·10µs·6, runtime I·n·4R = 20·3·1.2µs
	const work, rt, idle = 2 * 1_200_000, 2 * 72_000, 2 * 20 * 10_000 * 3
	var rep report.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if b := rep.Breakdown; b.WorkNS != work || b.SyncRuntimeNS != rt || b.OverheadNS != rt || b.IdlenessNS != idle || b.SyncRuntimeAsWork {
		t.Errorf("work %d, sync runtime %d, overhead %d, idleness %d, as work %v; want %d, %d, %d, %d, false",
			b.WorkNS, b.SyncRuntimeNS, b.OverheadNS, b.IdlenessNS, b.SyncRuntimeAsWork, work, rt, rt, idle)
	}
	r = run(t, ptraceBin(), "analyze", dir)
	if want := "overhead includes 144 µs of runtime code inside barriers, taskwaits and taskgroups"; r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Errorf("analyze exit %d, the text report lacks %q:\n%s", r.code, want, r.stdout)
	}
	r = run(t, ptraceBin(), "analyze", "--sync-runtime-as-work", "--json", "-", dir)
	if r.code != 0 {
		t.Fatalf("analyze --sync-runtime-as-work exit %d: %s", r.code, r.stderr)
	}
	rep = report.Report{}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if b := rep.Breakdown; b.WorkNS != work+rt || b.SyncRuntimeNS != 0 || b.OverheadNS != 0 || b.IdlenessNS != idle || !b.SyncRuntimeAsWork {
		t.Errorf("--sync-runtime-as-work: work %d, sync runtime %d, overhead %d, idleness %d, as work %v; want %d, 0, 0, %d, true",
			b.WorkNS, b.SyncRuntimeNS, b.OverheadNS, b.IdlenessNS, b.SyncRuntimeAsWork, work+rt, idle)
	}
}
