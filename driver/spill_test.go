package driver_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ptrace-dev/ptrace/driver"
	"github.com/ptrace-dev/ptrace/gen"
)

// TestSpilledAttributes: the fragment nodes' attributes and weights go
// to a spill file in the temporary directory, which holds no file once
// the analysis is done (nor during it: the file is unnamed); with no
// directory to make it in they stay in memory, and the report is the same
// either way, on one rank and on two, and for a process whose fragment
// graph is streamed to the file chunk after chunk as it is made (a tree
// of 65 536 tasks: about 200 000 nodes, megabytes of attributes), and
// for a halo exchange whose wait states park what they do not read.
func TestSpilledAttributes(t *testing.T) {
	dir, _ := generate(t, gen.Config{Workload: "stencil", Ranks: 4, Threads: 3, Jitter: 0.3, LatencyNS: 1500})
	tree, _ := generate(t, gen.Config{Workload: "tree", Ranks: 1, Threads: 4, Radix: 2, Steps: 15, Jitter: 0.5})
	// MPI messages enough that the wait states park the remote edges'
	// rows, the matched nodes' columns and the nodes' values.
	halo, _ := generate(t, gen.Config{Workload: "halo", Ranks: 4, Threads: 2, Iterations: 3000, Jitter: 0.3, LatencyNS: 1500})
	for _, k := range []int{1, 2, 0, -1, -2} {
		switch k {
		case 0:
			dir, k = tree, 1
		case -1, -2:
			dir, k = halo, -k
		}
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp)
		rep, spilled := analyze(t, dir, k)
		if rep.CriticalPath == nil || len(rep.CriticalPath.Segments) == 0 {
			t.Fatalf("%d ranks: no critical path", k)
		}
		if ents, err := os.ReadDir(tmp); err != nil || len(ents) != 0 {
			t.Errorf("%d ranks: the temporary directory holds %d entries after the analysis (%v)", k, len(ents), err)
		}
		t.Setenv("TMPDIR", filepath.Join(tmp, "missing"))
		_, kept := analyze(t, dir, k)
		if !bytes.Equal(spilled, kept) {
			t.Errorf("%d ranks: the report with the attributes spilled differs from the one with them kept", k)
		}
	}
}

// TestStatsScratch: --stats says what each rank wrote to its scratch file
// (a stencil's fragment attributes and weights, and what the critical
// path parks) and nothing where none could be made, with the same report.
func TestStatsScratch(t *testing.T) {
	dir, _ := generate(t, gen.Config{Workload: "stencil", Ranks: 4, Threads: 3, Jitter: 0.3, LatencyNS: 1500})
	t.Setenv("TMPDIR", t.TempDir())
	spilled, st := runOpts(t, driver.Options{Dir: dir}, 2)
	if len(st.Scratch) != 2 {
		t.Fatalf("scratch figures for %d ranks, want 2", len(st.Scratch))
	}
	for r, b := range st.Scratch {
		if b <= 0 {
			t.Errorf("rank %d: %d bytes in its scratch file", r, b)
		}
	}
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	kept, st := runOpts(t, driver.Options{Dir: dir}, 2)
	for r, b := range st.Scratch {
		if b != 0 {
			t.Errorf("rank %d with no scratch file: %d bytes in it", r, b)
		}
	}
	if !bytes.Equal(spilled, kept) {
		t.Error("the report with a scratch file differs from the one without")
	}
}
