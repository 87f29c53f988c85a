package main

import (
	"path/filepath"
	"runtime"
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
