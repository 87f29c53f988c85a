package otf2_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/otf2"
	"github.com/ptrace-dev/ptrace/report"
)

// TestUnnestedRegions: code-region Enter and Leave records that do not
// nest (unnestedArchive, encode_test.go; Score-P's runtime I/O wrapping
// records another thread's calls on a location) keep the regions around
// them open: rank 0's MPI_Send is still inside solve, as in the same
// archive without them, the Leave of a region not open is skipped and the
// one of a region with another entered after it leaves that one open,
// both counted in one warning naming the file and offset. Wait states,
// delay costs and the breakdown equal the plain archive's.
func TestUnnestedRegions(t *testing.T) {
	plain := otf2.OldArchive(t, t.TempDir())
	unnested := otf2.UnnestedArchive(t, t.TempDir())
	for _, k := range []int{1, 2} {
		var a, b report.Report
		if err := json.Unmarshal(analyze(t, plain, k), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(analyze(t, unnested, k), &b); err != nil {
			t.Fatal(err)
		}
		for _, c := range b.WaitStates.CallSites {
			if c.Func == "MPI_Send" && c.Region != "solve" {
				t.Errorf("%d ranks: MPI_Send in region %q, want solve", k, c.Region)
			}
		}
		w := b.Trace.Warnings
		if w == nil || w.Count != 1 || len(w.First) != 1 ||
			!strings.Contains(w.First[0], `traces/0.evt: offset `) ||
			!strings.Contains(w.First[0], `Leave of region "read", which is not open on this location, skipped`) ||
			!strings.Contains(w.First[0], "(2 Leaves of code regions out of nesting in all)") {
			t.Errorf("%d ranks: warnings %+v, want one counting both Leaves out of nesting", k, w)
		}
		var x, y map[string]any
		if json.Unmarshal(analyze(t, plain, k), &x) != nil || json.Unmarshal(analyze(t, unnested, k), &y) != nil {
			t.Fatal("reports do not decode")
		}
		// the delay costs and the critical path name the I/O regions
		// where they are the code before a call; the rest is alike
		for _, m := range []map[string]any{x, y} {
			delete(m["wait_states"].(map[string]any), "delays")
			delete(m, "critical_path")
		}
		for _, s := range []string{"breakdown", "pop", "wait_states"} {
			for _, d := range jsonDiff(s, x[s], y[s]) {
				t.Errorf("%d ranks: %s", k, d)
			}
		}
		delays := func(r report.Report) map[string]int64 {
			m := map[string]int64{}
			for _, d := range r.WaitStates.Delays {
				m[d.Pattern+" at "+d.Site] += d.NS
			}
			return m
		}
		if da, db := delays(a), delays(b); len(da) != len(db) {
			t.Errorf("%d ranks: delays %v, want %v", k, db, da)
		} else {
			for s, ns := range da {
				if db[s] != ns {
					t.Errorf("%d ranks: delays %v, want %v", k, db, da)
				}
			}
		}
		if a.CriticalPath.LengthNS != b.CriticalPath.LengthNS {
			t.Errorf("%d ranks: critical path %d ns, want %d", k, b.CriticalPath.LengthNS, a.CriticalPath.LengthNS)
		}
	}
}
