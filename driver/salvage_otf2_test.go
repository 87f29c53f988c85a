package driver_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/driver"
)

// A Score-P archive whose event file is cut, then another missing: each
// error names the file (and offset) and says that --salvage keeps what
// precedes the damage; with it, the report is made from the records before
// the cut, the other process without events, and marked partial, the same
// at one analysis rank and two.
func TestSalvageOTF2(t *testing.T) {
	src := filepath.Join("..", "otf2", "testdata", "scorep-8.4-mpi-waits")
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	evt := filepath.Join(dir, "traces", "1.evt")
	st, err := os.Stat(evt)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(evt, st.Size()/2); err != nil {
		t.Fatal(err)
	}
	_, err = runWith(1, driver.Options{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), evt) || !strings.Contains(err.Error(), "--salvage keeps what precedes the damage") {
		t.Fatalf("without --salvage: %v, want the file and the hint", err)
	}
	os.Remove(filepath.Join(dir, "traces", "0.evt"))
	if _, err := runWith(1, driver.Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), "0.evt") || !strings.Contains(err.Error(), "--salvage") {
		t.Fatalf("a missing event file, without --salvage: %v, want the file and the hint", err)
	}
	var first []byte
	for _, k := range []int{1, 2} {
		rep, err := runWith(k, driver.Options{Dir: dir, Salvage: true})
		if err != nil {
			t.Fatalf("%d ranks, --salvage: %v", k, err)
		}
		if !rep.Trace.Partial || rep.Trace.Warnings == nil || len(rep.Trace.Warnings.First) < 2 ||
			!strings.Contains(rep.Trace.Warnings.First[0], "0.evt: no such file") || !strings.Contains(rep.Trace.Warnings.First[1], evt) {
			t.Errorf("%d ranks: partial %v, warnings %v; want partial, the missing file and the cut one first", k, rep.Trace.Partial, rep.Trace.Warnings)
		}
		js := reportJSON(t, rep)
		if first == nil {
			first = js
		} else if string(js) != string(first) {
			t.Errorf("%d ranks: the report differs from one rank's", k)
		}
	}
}
