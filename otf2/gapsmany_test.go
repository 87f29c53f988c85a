package otf2_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/driver"
	"github.com/ptrace-dev/ptrace/otf2"
	"github.com/ptrace-dev/ptrace/report"
)

// TestManyGapsWindowWarning: rank 0 switches recording off 2 000 times
// for 5 ns (GapsArchive): the window is the longest stretch every process
// recorded, the last, and the warning that says so names the 4 longest
// other stretches, not all 2 000 (a warning of 43 KB before); the same
// at 1 and 2 analysis ranks.
func TestManyGapsWindowWarning(t *testing.T) {
	anchor := otf2.GapsArchive(t, t.TempDir(), 2000)
	one := analyzeWith(t, driver.Options{Dir: anchor}, 1)
	if two := analyzeWith(t, driver.Options{Dir: anchor}, 2); !bytes.Equal(one, two) {
		t.Errorf("the reports at 1 and 2 analysis ranks differ")
	}
	var rep report.Report
	if err := json.Unmarshal(one, &rep); err != nil {
		t.Fatal(err)
	}
	if w := rep.Trace.Window; w == nil || w.StartNS != 21995 || w.EndNS != 23000 || w.Bounds != "recorded" {
		t.Errorf("window %+v, want 21995 … 23000, recorded", w)
	}
	w := rep.Trace.Warnings.First[0]
	if !strings.HasPrefix(w, "recording was switched off") || strings.Count(w, "--window") != 4 ||
		!strings.HasSuffix(w, "the other stretches: --window 1µs:2µs, --window 2µs:2µs, --window 2µs:2µs, --window 2µs:2µs, and 1996 more, none longer") {
		t.Errorf("first warning (%d bytes): %.600s", len(w), w)
	}
}
