package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// --memory-limit is the node's: each of the node's busy analysis
// processes gets an equal share, a lone process gets it all, and an idle
// one (an MPI rank past the trace's processes) none, whatever the
// launcher's variables say (they count the idle ones).
func TestMemoryLimitSharedByTheNode(t *testing.T) {
	t.Setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "6")
	node, err := memoryLimit("8GiB")
	if err != nil || node != 8<<30 {
		t.Fatalf("8GiB: %d (%v)", node, err)
	}
	for _, c := range []struct {
		nodeBusy int
		busy     bool
		want     int64
	}{{1, true, 8 << 30}, {4, true, 2 << 30}, {3, true, (8 << 30) / 3}, {2, false, 0}, {0, false, 0}} {
		if got := processLimit(node, c.nodeBusy, c.busy); got != c.want {
			t.Errorf("8GiB, %d busy processes on the node, this one busy: %v: %d, want %d", c.nodeBusy, c.busy, got, c.want)
		}
	}
	if got := processLimit(0, 2, true); got != 0 {
		t.Errorf("no limit: %d", got)
	}
	if _, err := memoryLimit("eight"); err == nil {
		t.Error("--memory-limit eight: no error")
	}
	// The cores: the node's divided by its busy processes, then by the
	// process's busy ranks; one at least.
	n := min(runtime.GOMAXPROCS(0), runtime.NumCPU())
	for _, c := range []struct{ ranks, nodeBusy, want int }{
		{1, 1, n}, {2, 1, max(1, n/2)}, {1, 2 * n, 1}, {1, 0, n},
	} {
		if got := coresPerRank(c.ranks, c.nodeBusy); got != c.want {
			t.Errorf("%d ranks, %d busy processes on the node: %d cores, want %d", c.ranks, c.nodeBusy, got, c.want)
		}
	}
}

// Ranks past the trace's processes own none: the memory limit and the
// cores are shared by the busy ones only (--ranks 8 on 2 processes gives
// each busy rank half, not an eighth).
func TestBusyRanks(t *testing.T) {
	dir := genTrace(t, "mpi", "--ranks", "2")
	for _, c := range []struct{ ranks, inProcess, want int }{
		{8, 8, 2}, {3, 3, 2}, {2, 2, 2}, {1, 1, 1},
		{0, 2, 2}, // the default, capped by the processes already
		{8, 1, 1}, // under MPI: one rank a process
	} {
		if got := busyRanks(c.ranks, c.inProcess, dir); got != c.want {
			t.Errorf("--ranks %d, %d in the process: %d busy, want %d", c.ranks, c.inProcess, got, c.want)
		}
	}
	if got := busyRanks(8, 8, filepath.Join(t.TempDir(), "none")); got != 8 {
		t.Errorf("no trace: %d busy, want 8 (the analysis reports the error)", got)
	}
}

// Heap profiling is off unless asked for: the runtime's default samples an
// allocation every 512 KiB into a hash table whose touched pages stay
// resident (docs/PERFORMANCE.md, forty-fifth round). A rate GODEBUG sets
// is the user's, and stays.
func TestNoHeapProfile(t *testing.T) {
	defer func(r int) { runtime.MemProfileRate = r }(runtime.MemProfileRate)
	for _, c := range []struct {
		godebug string
		want    int
	}{
		{"", 0},
		{"gctrace=1", 0},
		{"memprofilerate=1", 512 << 10},
		{"gctrace=1,memprofilerate=4096", 512 << 10},
	} {
		t.Setenv("GODEBUG", c.godebug)
		runtime.MemProfileRate = 512 << 10
		noHeapProfile()
		if runtime.MemProfileRate != c.want {
			t.Errorf("GODEBUG=%q: MemProfileRate %d, want %d", c.godebug, runtime.MemProfileRate, c.want)
		}
	}
}

// --memprofile still profiles the analysis, although main turned the
// sampling off: its profiles hold the simulation's allocations.
func TestMemProfileSamples(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t")
	if r := run(t, ptraceBin(), "gen", "stencil", "--ranks", "1", "--events", "20000", "-o", trace); r.code != 0 {
		t.Fatalf("gen: %s", r.stderr)
	}
	prefix := filepath.Join(dir, "mp")
	if r := run(t, ptraceBin(), "analyze", "-q", "--ranks", "1", "--memprofile", prefix, trace); r.code != 0 {
		t.Fatalf("analyze: %s", r.stderr)
	}
	out, err := exec.Command("go", "tool", "pprof", "-sample_index=alloc_space", "-top", ptraceBin(), prefix+".simulate.pprof").CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "sim.") {
		t.Errorf("the simulation's profile names no allocation of package sim:\n%s", out)
	}
}
