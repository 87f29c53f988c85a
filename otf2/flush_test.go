package otf2_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/otf2"
	"github.com/ptrace-dev/ptrace/report"
)

// TestBufferFlushes: Score-P's BUFFER_FLUSH records are the tracer's time
// (flushArchive, encode_test.go): the one inside rank 0's work (200 ns) is
// taken out of its work into instrumentation, the two inside MPI calls
// (1000 ns, cut at the record after it, and 50 ns) stay in MPI, and the
// report counts all three (no setting named: the archive is not
// Score-P's). Nothing else changes against the same archive
// without them, at one analysis rank or two.
func TestBufferFlushes(t *testing.T) {
	plain := otf2.OldArchive(t, t.TempDir())
	flushed := otf2.FlushArchive(t, t.TempDir())
	for _, k := range []int{1, 2} {
		var a, b report.Report
		if err := json.Unmarshal(analyze(t, plain, k), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(analyze(t, flushed, k), &b); err != nil {
			t.Fatal(err)
		}
		f := b.Breakdown.BufferFlushes
		want := report.BufferFlushes{Count: 3, NS: 1250, WorkNS: 200, MPINS: 1050, Processes: 2, MaxRank: 0, MaxNS: 1200}
		if a.Breakdown.BufferFlushes != nil || f == nil || *f != want {
			t.Fatalf("%d ranks: buffer flushes %+v, want none without them and %+v with them", k, f, want)
		}
		if w := b.Trace.Warnings; w != nil {
			t.Errorf("%d ranks: warnings %v", k, w.First)
		}
		for _, n := range b.Trace.Notes {
			if strings.Contains(n, "BUFFER_FLUSH") {
				t.Errorf("%d ranks: note %q: the flushes are used", k, n)
			}
		}
		pa, pb := a.Breakdown.PerProcess, b.Breakdown.PerProcess
		if pb[0].WorkNS != pa[0].WorkNS-200 || pb[0].InstrumentationNS != pa[0].InstrumentationNS+200 ||
			pb[0].MPINS != pa[0].MPINS || pb[1].WorkNS != pa[1].WorkNS || pb[1].MPINS != pa[1].MPINS {
			t.Errorf("%d ranks: per process with flushes %+v\nwithout %+v\nwant 200 ns of rank 0's work as instrumentation, the rest alike", k, pb, pa)
		}
		if pb[0].BufferFlushes != 2 || pb[0].BufferFlushNS != 1200 || pb[1].BufferFlushes != 1 || pb[1].BufferFlushNS != 50 {
			t.Errorf("%d ranks: per process flushes %d/%d ns and %d/%d ns, want 2/1200 and 1/50", k,
				pb[0].BufferFlushes, pb[0].BufferFlushNS, pb[1].BufferFlushes, pb[1].BufferFlushNS)
		}
		var x, y map[string]any
		if json.Unmarshal(analyze(t, plain, k), &x) != nil || json.Unmarshal(analyze(t, flushed, k), &y) != nil {
			t.Fatal("reports do not decode")
		}
		for _, s := range []string{"pop", "wait_states", "critical_path"} {
			for _, d := range jsonDiff(s, x[s], y[s]) {
				t.Errorf("%d ranks: %s", k, d)
			}
		}
	}
}
