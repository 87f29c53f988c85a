package e2e

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
)

// epochCall is one MPI call of general active target synchronisation
// (MPI_Win_post, _start, _complete, _wait, _test): its function, enter
// and exit.
type epochCall struct {
	fn          string
	enter, exit int64
}

// epochCalls returns each process's calls of MPI_Win_post, _start,
// _complete, _wait and _test in call order, by the collector's own
// timestamps.
func epochCalls(t *testing.T, procs []*trace.Process) [][]epochCall {
	t.Helper()
	out := make([][]epochCall, len(procs))
	for i, p := range procs {
		var open *epochCall
		for sc := p.Scan(0, nil); sc.Next(); {
			e := sc.Event()
			switch e.Kind {
			case trace.MPIEnter:
				switch fn := p.Tables.String(e.Args[0]); fn {
				case "MPI_Win_post", "MPI_Win_start", "MPI_Win_complete", "MPI_Win_wait", "MPI_Win_test":
					out[i] = append(out[i], epochCall{fn: fn, enter: e.Time})
					open = &out[i][len(out[i])-1]
				default:
					open = nil
				}
			case trace.MPIExit:
				if open != nil {
					open.exit = e.Time
					open = nil
				}
			}
		}
	}
	return out
}

// epochWaits applies Scalasca's definitions to the calls of rma_pscw.c's
// processes (targets 0 and 1 expose to origins 2 and 3 in every epoch):
// an origin's k-th MPI_Win_start waits from its enter until the latest
// enter of the targets' k-th MPI_Win_post (Late Post), a target's call
// ending its k-th exposure epoch (its MPI_Win_wait, or the last
// MPI_Win_test before its next post) from its enter until the latest
// enter of the origins' k-th MPI_Win_complete (Early Wait), each within
// the call.
func epochWaits(t *testing.T, calls [][]epochCall) []report.WaitTimes {
	t.Helper()
	nth := func(rank int, fn string) []epochCall {
		var cs []epochCall
		for _, c := range calls[rank] {
			if c.fn == fn {
				cs = append(cs, c)
			}
		}
		return cs
	}
	// The call ending each of a target's exposure epochs.
	ends := func(rank int) []epochCall {
		var cs []epochCall
		for i, c := range calls[rank] {
			if (c.fn == "MPI_Win_wait" || c.fn == "MPI_Win_test") && (i+1 == len(calls[rank]) || calls[rank][i+1].fn == "MPI_Win_post") {
				cs = append(cs, c)
			}
		}
		return cs
	}
	within := func(until int64, c epochCall) int64 { return max(0, min(until, c.exit)-c.enter) }
	posts := [][]epochCall{nth(0, "MPI_Win_post"), nth(1, "MPI_Win_post")}
	completes := [][]epochCall{nth(2, "MPI_Win_complete"), nth(3, "MPI_Win_complete")}
	want := make([]report.WaitTimes, 4)
	for o := 2; o <= 3; o++ {
		for k, s := range nth(o, "MPI_Win_start") {
			if k >= len(posts[0]) || k >= len(posts[1]) {
				t.Fatalf("rank %d: start %d without the targets' posts", o, k)
			}
			want[o].LatePostNS += within(max(posts[0][k].enter, posts[1][k].enter), s)
		}
	}
	for tg := 0; tg <= 1; tg++ {
		for k, e := range ends(tg) {
			if k >= len(completes[0]) || k >= len(completes[1]) {
				t.Fatalf("rank %d: epoch %d without the origins' completes", tg, k)
			}
			want[tg].EarlyWaitNS += within(max(completes[0][k].enter, completes[1][k].enter), e)
		}
	}
	return want
}

// General active target synchronisation (rma_pscw.c): targets 0 and 1
// expose a window to origins 2 and 3 in every iteration; target 1 posts
// POST_US late, so the origins wait in MPI_Win_start (Scalasca's Late
// Post: Open MPI returns from it once every target posted); origin 3
// completes COMPLETE_US late, so the targets wait in MPI_Win_wait (Early
// Wait); every fourth epoch the targets end by polling MPI_Win_test. The
// collector records the synchronisation as messages (post → start,
// complete → wait or the MPI_Win_test that returns true): every one
// matches, no warning. The ground truth is Scalasca's definitions applied
// to the collector's timestamps of the calls (one host, one clock); the
// design checks lower bounds (iterations × POST_US for each origin's Late
// Post, the MPI_Win_wait epochs × COMPLETE_US for each target's Early
// Wait), that rank 1 causes most Late Post and rank 3 most Early Wait,
// and that the critical path runs mostly through ranks 1 and 3. Before,
// all of it was MPI time ("transfer/other").
func TestRMAEpochWaits(t *testing.T) {
	h := setup(t)
	bin := h.buildMPI(t, testdata("rma_pscw.c"))
	t.Setenv("OMPI_MCA_mpi_yield_when_idle", "1")
	designed(t, func() []string {
		const iters, post, complete = 8, 20000, 30000
		dir, out := h.mustRecord(t, nil, mpirunN(4, bin, strconv.Itoa(iters), strconv.Itoa(post), strconv.Itoa(complete))...)
		return pscwRun(t, h, dir, out, iters, post, complete)
	})
}

// pscwRun checks one recorded run of rma_pscw.c (ITERS POST_US
// COMPLETE_US): it fails t where the report disagrees with the trace's
// timestamps and returns how the run differs from the design.
func pscwRun(t *testing.T, h *harness, dir, out string, iters, post, complete int64) (bad []string) {
	t.Helper()
	procs := valid(t, dir)
	if it := printed(t, out, "iterations="); it != iters {
		t.Fatalf("the program ran %d iterations, want %d", it, iters)
	}
	if e := printed(t, out, "epochs="); e != 2*iters {
		t.Fatalf("the origins closed %d access epochs, want %d", e, 2*iters)
	}
	tests := printed(t, out, "tests=")
	r := h.report(t, dir)
	noReportWarnings(t, r)
	// Each epoch: a post message from each target to each origin and a
	// complete message back; the window's creation and free, two
	// MPI_Reduce.
	allMatched(t, r, 2*2*2*iters, 4)

	calls := epochCalls(t, procs)
	count := map[string]int64{}
	for _, cs := range calls {
		for _, c := range cs {
			count[c.fn]++
		}
	}
	waits := iters - iters/4 // the epochs a target ends with MPI_Win_wait
	if count["MPI_Win_post"] != 2*iters || count["MPI_Win_start"] != 2*iters || count["MPI_Win_complete"] != 2*iters ||
		count["MPI_Win_wait"] != 2*waits || count["MPI_Win_test"] != tests {
		t.Fatalf("calls %v, want %d posts, starts and completes, %d waits, %d tests", count, 2*iters, 2*waits, tests)
	}
	want := epochWaits(t, calls)
	ws := r.WaitStates
	if ws == nil || len(ws.PerProcess) != 4 {
		t.Fatalf("wait states %+v, want 4 processes", ws)
	}
	for rank := range 4 {
		got, w := &ws.PerProcess[rank].WaitTimes, &want[rank]
		t.Logf("rank %d: late post %d (timestamps %d), early wait %d (%d), late sender %d", rank,
			got.LatePostNS, w.LatePostNS, got.EarlyWaitNS, w.EarlyWaitNS, got.LateSenderNS)
		for _, c := range []struct {
			name      string
			got, want int64
		}{{"late post", got.LatePostNS, w.LatePostNS}, {"early wait", got.EarlyWaitNS, w.EarlyWaitNS}} {
			if tol := max(500_000, c.want*3/200); abs(c.got-c.want) > tol {
				t.Errorf("rank %d: %s %d ns, the collector's timestamps give %d ns (tolerance %d)", rank, c.name, c.got, c.want, tol)
			}
		}
		// None of it is a Late Sender: the program sends no message.
		if got.LateSenderNS != 0 {
			t.Errorf("rank %d: late sender %d ns, want none", rank, got.LateSenderNS)
		}
	}

	// The design: a lower bound (a descheduled rank adds waiting, or
	// absorbs lateness; the ground truth above is exact).
	for _, o := range []int{2, 3} {
		if g := ws.PerProcess[o].LatePostNS; g < iters*post*1000/2 {
			bad = append(bad, fmt.Sprintf("rank %d: late post %d ns, designed at least %d", o, g, iters*post*1000))
		}
	}
	for _, tg := range []int{0, 1} {
		if g := ws.PerProcess[tg].EarlyWaitNS; g < waits*complete*1000/2 {
			bad = append(bad, fmt.Sprintf("rank %d: early wait %d ns, designed at least %d", tg, g, waits*complete*1000))
		}
	}
	byRank := map[string]map[int]int64{}
	for _, c := range ws.Causes {
		if byRank[c.Pattern] == nil {
			byRank[c.Pattern] = map[int]int64{}
		}
		byRank[c.Pattern][c.Rank] += c.NS
	}
	for _, pc := range []struct {
		pat   string
		cause int
	}{{"late_post", 1}, {"early_wait", 3}} {
		for rank, ns := range byRank[pc.pat] {
			if rank != pc.cause && ns >= byRank[pc.pat][pc.cause] {
				bad = append(bad, fmt.Sprintf("rank %d causes %d ns of %s, rank %d %d ns", rank, ns, pc.pat, pc.cause, byRank[pc.pat][pc.cause]))
			}
		}
		if byRank[pc.pat][pc.cause] <= 0 {
			bad = append(bad, fmt.Sprintf("rank %d causes no %s", pc.cause, pc.pat))
		}
	}
	var late float64
	if cp := r.CriticalPath; cp != nil {
		for _, p := range cp.ByProcess {
			if p.Name == "rank 1" || p.Name == "rank 3" {
				late += p.Share
			}
		}
	}
	if late < 0.5 {
		bad = append(bad, fmt.Sprintf("ranks 1 and 3 hold %.2f of the critical path, want most", late))
	}
	return bad
}

// The Fortran bindings of MPI_Win_post, _start, _complete, _wait and
// _test (rma_pscw_f.F90, use mpi and mpi_f08) convert the group, window
// and flag and call the C wrappers, so the epochs are recorded as from C
// and checked as TestRMAEpochWaits checks rma_pscw.c's. Before, from
// Fortran these calls were MPI time only.
func TestRMAEpochWaitsFortran(t *testing.T) {
	h := setup(t)
	t.Setenv("OMPI_MCA_mpi_yield_when_idle", "1")
	for _, tc := range []struct {
		name  string
		flags []string
	}{{"use-mpi", nil}, {"mpi_f08", []string{"-DUSE_F08"}}} {
		t.Run(tc.name, func(t *testing.T) {
			bin := h.buildMPI(t, testdata("rma_pscw_f.F90"), tc.flags...)
			designed(t, func() []string {
				const iters, post, complete = 8, 20000, 30000
				dir, out := h.mustRecord(t, nil, mpirunN(4, bin, strconv.Itoa(iters), strconv.Itoa(post), strconv.Itoa(complete))...)
				return pscwRun(t, h, dir, out, iters, post, complete)
			})
		})
	}
}
