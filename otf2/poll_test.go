package otf2_test

import (
	"testing"

	"github.com/ptrace-dev/ptrace/otf2"
)

// TestScorepPolledReceive: a receive rank 1 polls with MPI_Test while
// rank 0 computes (otf2.PolledRecvArchive's timeline). The converter
// writes one mpi_polled from the MpiRequestTest records; the polling
// calls' time before the send's enter is Late Sender (700 ns, one
// instance), and the critical path takes the message from rank 0 instead
// of rank 1's polling chain.
func TestScorepPolledReceive(t *testing.T) {
	anchor := otf2.PolledRecvArchive(t, t.TempDir())
	rep, _ := analyzeOn1And2(t, anchor)
	var ls, lsCalls, test int64
	for _, s := range rep.WaitStates.CallSites {
		ls += s.LateSenderNS
		if s.Func == "MPI_Test" {
			test += s.MPINS
			lsCalls += s.Calls
		}
	}
	if ls != 700 || test != 1000 {
		t.Errorf("late sender %d ns in %d ns of MPI_Test, want 700 in 1000", ls, test)
	}
	if w := rep.WaitStates.LateSenderNS; w != 700 {
		t.Errorf("late sender total %d, want 700", w)
	}
	cp := rep.CriticalPath
	if cp == nil {
		t.Fatal("no critical path")
	}
	var onRank0 int64
	for _, p := range cp.ByProcess {
		if p.Name == "rank 0" || p.Name == "0" {
			onRank0 = p.NS
		}
	}
	if cp.RankCrossings < 1 || onRank0 < 4000 {
		t.Errorf("critical path %d rank crossings, %d ns on rank 0 (%+v), want the path through rank 0's 4000 ns before its send", cp.RankCrossings, onRank0, cp.ByProcess)
	}
}
