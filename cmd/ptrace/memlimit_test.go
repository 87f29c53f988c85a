package main

import (
	"path/filepath"
	"testing"
)

// --memory-limit is the node's: under mpirun each of the node's analysis
// processes gets its share, as the default's 80 % of the machine is
// shared, and a lone process gets it all.
func TestMemoryLimitSharedByTheNode(t *testing.T) {
	for _, k := range []string{"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"} {
		t.Setenv(k, "")
	}
	for _, c := range []struct {
		local string
		want  int64
	}{{"", 8 << 30}, {"4", 2 << 30}, {"3", (8 << 30) / 3}} {
		t.Setenv("OMPI_COMM_WORLD_LOCAL_SIZE", c.local)
		got, err := memoryLimit("8GiB")
		if err != nil || got != c.want {
			t.Errorf("8GiB with %q processes on the node: %d (%v), want %d", c.local, got, err, c.want)
		}
	}
	if _, err := memoryLimit("eight"); err == nil {
		t.Error("--memory-limit eight: no error")
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
