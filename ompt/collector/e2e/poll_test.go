package e2e

import (
	"strconv"
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

// A receiver that polls its MPI_Irecv with MPI_Test (testdata/poll.c, 2
// ranks): rank 1 waits for rank 0's late sends inside its polling calls,
// each call from the one that first tested the request without completing
// it (the collector's mpi_polled) counting its own time before the send's
// enter (waitstate/poll.go) — the time between the calls (the second
// half's between_polls) is not waiting. The Late Sender at the MPI_Test
// site is that definition applied by hand to the recorded calls, caused by
// rank 0. The critical path gives the polling calls no weight before the
// send, so it spends in MPI_Test at most their time after it. Before,
// the waits were transfer/other and the critical path ran along rank 1's
// polling chain (0 rank crossings).
func TestPollingReceiver(t *testing.T) {
	h := setup(t)
	const iters, lateUS = 20, 2000
	bin := h.buildMPI(t, testdata("poll.c"))
	dir, out := h.mustRecord(t, nil, mpirunN(2, bin, strconv.Itoa(iters), strconv.Itoa(lateUS))...)
	procs := valid(t, dir)
	r := h.report(t, dir)
	noReportWarnings(t, r)
	allMatched(t, r, printed(t, out, "messages="), printed(t, out, "collectives="))
	if it := printed(t, out, "iterations="); it != iters {
		t.Fatalf("the program ran %d iterations, want %d", it, iters)
	}
	// The sends' enters (rank 0) and rank 1's MPI_Test calls, per
	// request in order.
	var sends []int64
	type test struct{ enter, exit int64 }
	var polls [][]test // per completed request: its polling calls, the completing one last
	var open []test
	polling := false
	for _, p := range procs {
		var enter int64
		var fn string
		done := false
		for _, e := range rowsOf(p)[0] {
			switch e.Kind {
			case trace.MPIEnter:
				enter, fn = e.Time, p.String(e.Args[0])
			case trace.MPISend:
				if p.Header.Rank == 0 && e.Args[1] == 3 {
					sends = append(sends, enter)
				}
			case trace.MPIPolled:
				polling = true
			case trace.MPIRecv:
				done = p.Header.Rank == 1 && fn == "MPI_Test"
			case trace.MPIExit:
				if p.Header.Rank != 1 || fn != "MPI_Test" {
					continue
				}
				if polling || done {
					open = append(open, test{enter, e.Time})
				}
				if done {
					polls = append(polls, open)
					open, polling, done = nil, false, false
				}
			}
		}
	}
	if len(sends) != iters || len(polls) != iters {
		t.Fatalf("%d sends and %d receives completed by MPI_Test, want %d each", len(sends), len(polls), iters)
	}
	var byHand, pathBound int64
	for k, calls := range polls {
		for _, c := range calls {
			byHand += max(0, min(c.exit, sends[k])-c.enter)
			pathBound += max(0, c.exit-max(c.enter, sends[k]))
		}
	}
	var ls int64
	var sites int
	for _, s := range r.WaitStates.CallSites {
		if s.Func == "MPI_Test" {
			ls += s.LateSenderNS
			sites++
		}
	}
	var caused int64
	for _, c := range r.WaitStates.Causes {
		if c.Pattern == "late_sender" && c.Rank == 0 {
			caused += c.NS
		}
	}
	// The design's floor: the first half's loops only test, for about
	// three quarters of LATE_US each; a test's own time is at least an
	// eighth of its loop's.
	floor := int64(iters/2) * lateUS * 3 / 4 * 1000 / 8
	t.Logf("MPI_Test: late sender %d ns (by hand %d, floor %d), caused by rank 0 %d ns", ls, byHand, floor, caused)
	if sites != 1 || abs(ls-byHand) > 100_000 || ls < floor {
		t.Errorf("MPI_Test late sender %d ns at %d sites, want %d by hand at one, over %d", ls, sites, byHand, floor)
	}
	if abs(caused-ls) > 100_000 {
		t.Errorf("rank 0 causes %d ns of late sender, want the %d ns of MPI_Test", caused, ls)
	}
	inTest, byRank := onPath(t, r, "MPI_Test")
	t.Logf("critical path: %d ns in MPI_Test (at most %d by hand), by process %v, %d rank crossings", inTest, pathBound, byRank, r.CriticalPath.RankCrossings)
	if inTest > pathBound+100_000 {
		t.Errorf("the critical path spends %d ns in MPI_Test, at most %d by the definitions", inTest, pathBound)
	}
}
