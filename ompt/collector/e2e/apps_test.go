package e2e

import (
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

// Patterns of public MPI + OpenMP programs (session 42: miniAMR,
// Quicksilver, PENNANT, SNAP, miniMD), each in a small program of ours.

// A hybrid code that calls MPI before its first OpenMP construct: libomp
// reports its initial task only there, which takes over the program's
// chain of code. The critical path is at least as long as any rank's own
// chain of serial code in the window (its master's time outside MPI and
// outside parallel regions from its MPI_Init exit to its MPI_Finalize
// enter, here the set-up and the steps' serial part of the slowest rank:
// one path of the graph); before, the first
// MPI call of the initial task that sends (the Allreduce) was linked to
// nothing before it, cutting every rank's chain there, and the path held
// only the set-up or only the steps (62.9 % of miniAMR's window).
func TestSetupBeforeOpenMP(t *testing.T) {
	h := setup(t)
	bin := h.buildMPI(t, testdata("setup_late.c"), "-fopenmp")
	designed(t, func() []string {
		dir, out := h.mustRecord(t, nil, mpirunN(4, bin)...)
		if printed(t, out, "steps=") != 20 {
			t.Fatalf("the program did not run its 20 steps:\n%s", out)
		}
		procs := valid(t, dir)
		r := h.report(t, dir)
		noReportWarnings(t, r)
		allMatched(t, r, 0, 20)
		if r.CriticalPath == nil {
			t.Fatal("no critical path")
		}
		w := r.Trace.Window
		var chain int64
		for _, p := range procs {
			c := serialInWindow(p, w.StartNS, w.EndNS)
			chain = max(chain, c)
		}
		// each event's recording cost comes out of the code (instrumentation
		// correction): a few µs here
		if got := r.CriticalPath.LengthNS; got < chain-chain/100 {
			t.Errorf("critical path %d ns, shorter than a rank's own chain of code in the window, %d ns (the set-up and the steps)", got, chain)
		}
		return nil
	})
}

// serialInWindow is thread 0's time in [from, to) outside MPI calls and
// outside parallel regions (its serial code, a chain of the graph) from
// its MPI_Init exit on (its clock is the report's: one host).
func serialInWindow(p *trace.Process, from, to int64) int64 {
	var code, since int64 = 0, -1
	depth := 0 // MPI calls and parallel regions the thread is inside
	for sc := p.Scan(0, nil); sc.Next(); {
		switch e := sc.Event(); e.Kind {
		case trace.MPIEnter, trace.ParallelBegin:
			if depth == 0 && since >= 0 {
				code += max(0, min(e.Time, to)-max(since, from))
			}
			depth++
		case trace.MPIExit, trace.ParallelEnd:
			if depth--; depth == 0 {
				since = e.Time
			}
		}
	}
	return code
}
