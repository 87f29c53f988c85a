package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
)

// The wait states of a real run (testdata/waits_mpi.c under mpirun -np 2):
// rank 0's MPI_Recv waits for rank 1's slow_compute (Late Sender) and rank
// 1's MPI_Allreduce for rank 0's imbalanced_compute (Wait at N×N), each
// at least about ITERS·(SLOW_MS−FAST_MS) = 144 ms; the report charges them to those
// call sites and names the process waited for.
func TestWaitStatesMPI(t *testing.T) {
	h := setup(t)
	bin := filepath.Join(t.TempDir(), "waits_mpi")
	c := exec.Command("mpicc", "-O1", "-g", "-std=c11", "-Wall", "-Wextra", "-Werror", "-fopenmp", "-o", bin, "ompt/collector/e2e/testdata/waits_mpi.c")
	c.Dir = h.root
	c.Env = append(os.Environ(), "OMPI_CC=clang")
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("mpicc: %v\n%s", err, out)
	}
	// Idle OpenMP workers sleep at once instead of spinning for 200 ms
	// beside the ranks' busy loops.
	t.Setenv("KMP_BLOCKTIME", "0")
	dir, code, out := h.record(t, nil, mpirun(bin)...)
	if code != 0 {
		t.Fatalf("exit status %d\n%s", code, out)
	}
	procs := valid(t, dir)
	if len(procs) != 2 {
		t.Fatalf("%d processes, want 2", len(procs))
	}
	r := h.report(t, dir)
	noReportWarnings(t, r)
	ws := r.WaitStates
	if ws == nil {
		t.Fatal("no wait_states section")
	}
	// A rank descheduled around MPI calls shifts its next busy loop (an
	// allreduce that returns late on one rank makes its next send later
	// too), so a loaded machine changes the waits; the figures are checked
	// against the definitions applied by hand to the recorded calls, and
	// against half the planned imbalance as a floor.
	const want = 8 * 18e6 // ITERS · (SLOW_MS − FAST_MS), ns
	ls, nxn := handWaits(t, procs)
	t.Logf("late sender %d ns (by hand %d), wait at N×N %d ns (by hand %d), planned %.0f", sumLS(ws), ls, sumNxN(ws), nxn, want)
	close := func(v, hand int64) bool { return v > want/2 && abs(v-hand) < 1_000_000 }
	near := func(v int64) bool { return v > want/2 }
	sites := map[string]*report.WaitSite{}
	for i := range ws.CallSites {
		sites[ws.CallSites[i].Func] = &ws.CallSites[i]
	}
	if s := sites["MPI_Recv"]; s == nil || !close(s.LateSenderNS, ls) || s.WaitingCalls < 7 {
		t.Errorf("MPI_Recv: %+v, want late sender near %.0f ns in 8 calls", s, want)
	}
	if s := sites["MPI_Allreduce"]; s == nil || !close(s.WaitNxNNS, nxn) {
		t.Errorf("MPI_Allreduce: %+v, want wait at N×N near %.0f ns", s, want)
	}
	for _, p := range ws.PerProcess {
		if waiting := p.LateSenderNS + p.WaitNxNNS; p.LateSenderNS+p.WaitNxNNS+p.OtherNS > p.MPINS || waiting > p.MPINS {
			t.Errorf("rank %d: patterns exceed the MPI time: %+v", p.Rank, p.WaitTimes)
		}
	}
	if p := ws.PerProcess; len(p) != 2 || !near(p[0].LateSenderNS) || p[1].LateSenderNS != 0 || p[1].WaitNxNNS < 4*p[0].WaitNxNNS {
		t.Errorf("per process %+v, want rank 0 late sender and rank 1 wait at N×N", p)
	}
	// The process waited for: rank 1 (slow_compute) at the receive, rank 0
	// (imbalanced_compute) at the allreduce.
	found := map[string]int{}
	for _, c := range ws.Causes {
		if near(c.NS) {
			found[c.Pattern] = c.Rank + 1
		}
	}
	if found["late_sender"] != 2 || found["wait_nxn"] != 1 {
		t.Errorf("causes %+v, want rank 1 for the late sender and rank 0 for the allreduce", ws.Causes)
	}
	// The root causes: the excess computation of rank 1's slow_compute
	// (before its send) and of rank 0's imbalanced_compute (before its
	// allreduce), each about 18 ms per iteration, each charged at least
	// half of it. A rank descheduled inside an MPI call on a loaded
	// machine adds delays of its own, which may outrank them (rank 1's
	// MPI_Allreduce at 529 ms once, slow_compute 175 ms), so the planned
	// ones are looked for among all those above the floor.
	culprit := map[int]map[string]bool{0: {}, 1: {}}
	for _, d := range ws.Delays {
		if near(d.NS) && culprit[d.Rank] != nil {
			culprit[d.Rank][strings.SplitN(d.Code, " (", 2)[0]] = true
		}
	}
	if !culprit[1]["slow_compute"] || !culprit[0]["imbalanced_compute"] {
		t.Errorf("delays %+v, want rank 1's slow_compute and rank 0's imbalanced_compute", ws.Delays)
	}
}

func sumLS(ws *report.WaitStates) int64  { return ws.LateSenderNS }
func sumNxN(ws *report.WaitStates) int64 { return ws.WaitNxNNS }

// handWaits applies Scalasca's definitions to the recorded calls of the
// two ranks' first threads: the receive waits from its enter until the
// send's enter, each allreduce member until the other's enter, at most
// for the call's duration. The clocks of one host agree to microseconds.
func handWaits(t *testing.T, procs []*trace.Process) (lateSender, nxn int64) {
	t.Helper()
	type call struct{ enter, exit int64 }
	calls := make([]map[string][]call, 2)
	for r, p := range procs {
		calls[r] = map[string][]call{}
		var open int64
		for _, e := range rowsOf(p)[0] {
			switch e.Kind {
			case trace.MPIEnter:
				open = e.Time
			case trace.MPIExit:
				fn := p.String(e.Args[0])
				calls[r][fn] = append(calls[r][fn], call{open, e.Time})
			}
		}
	}
	wait := func(w call, until int64) int64 { return max(0, min(until-w.enter, w.exit-w.enter)) }
	recvs, sends := calls[0]["MPI_Recv"], calls[1]["MPI_Send"]
	if len(recvs) != 8 || len(sends) != 8 {
		t.Fatalf("%d receives on rank 0 and %d sends on rank 1, want 8", len(recvs), len(sends))
	}
	for k := range recvs {
		lateSender += wait(recvs[k], sends[k].enter)
	}
	a, b := calls[0]["MPI_Allreduce"], calls[1]["MPI_Allreduce"]
	if len(a) != 8 || len(b) != 8 {
		t.Fatalf("%d and %d allreduces, want 8", len(a), len(b))
	}
	for k := range a {
		nxn += wait(a[k], b[k].enter) + wait(b[k], a[k].enter)
	}
	return lateSender, nxn
}
