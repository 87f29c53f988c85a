package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
)

// windowColl is one member's call of a window collective: its operation,
// the window's communicator id, the call's enter and its coll_end.
type windowColl struct {
	op         trace.CollOp
	comm       int64
	enter, end int64
}

// windowColls returns each process's window collectives in call order.
func windowColls(t *testing.T, procs []*trace.Process) [][]windowColl {
	t.Helper()
	out := make([][]windowColl, len(procs))
	for i, p := range procs {
		var enter int64
		for sc := p.Scan(0, nil); sc.Next(); {
			e := sc.Event()
			switch {
			case e.Kind == trace.MPIEnter:
				enter = e.Time
			case e.Kind == trace.CollEnd && trace.CollOp(e.Args[0]).IsWindow():
				cm, ok := p.Tables.CommByIndex(e.Args[1])
				if !ok {
					t.Fatalf("rank %d: coll_end on communicator index %d, not in its table", i, e.Args[1])
				}
				out[i] = append(out[i], windowColl{trace.CollOp(e.Args[0]), cm.ID, enter, e.Time})
			}
		}
	}
	return out
}

// One-sided synchronisation that is collective (rma_fence.c): rank 1 is
// late into every MPI_Win_fence of the world window (LATE_US), into
// MPI_Win_allocate and into that window's MPI_Win_free; the even ranks
// fence a second window, on a communicator of their own, between. The
// waits are Scalasca's Wait at Fence, Create and Free: from a member's
// enter until the last member of the window's group entered, at most to
// its coll_end. The ground truth is that definition applied to the
// collector's own timestamps of the calls (one host, one clock: the clock
// correction moves a rank by microseconds), matched per window by the
// order of its collectives; the design (iterations × LATE_US for rank 3,
// which fences the world window only) checks that the lateness is there.
// Rank 1 causes most of the waiting, no warning, the critical path runs
// through rank 1, and the report is the same analysed by 1 and by 2 ranks.
func TestRMACollectiveWaits(t *testing.T) {
	h := setup(t)
	bin := h.buildMPI(t, testdata("rma_fence.c"))
	t.Setenv("OMPI_MCA_mpi_yield_when_idle", "1")
	// The ground truth is checked in every run; a run the machine's load
	// disturbed (a rank descheduled for the lateness's order) is recorded
	// again, at most three times, for the design's values.
	designed(t, func() []string { return rmaRun(t, h, bin) })
}

// rmaRun records and checks one run of rma_fence.c: it fails t where the
// report disagrees with the trace's timestamps and returns how the run
// differs from the design.
func rmaRun(t *testing.T, h *harness, bin string) (bad []string) {
	t.Helper()
	const ranks, iters, late, create, free = 4, 10, 20000, 30000, 40000
	dir, out := h.mustRecord(t, nil, mpirunN(ranks, bin, strconv.Itoa(iters), strconv.Itoa(late), strconv.Itoa(create), strconv.Itoa(free))...)
	procs := valid(t, dir)
	if it := printed(t, out, "iterations="); it != iters {
		t.Fatalf("the program ran %d iterations, want %d", it, iters)
	}
	// World window: ranks × (iters + 1) fences; the even ranks' window: 2 × (iters + 1).
	fences := printed(t, out, "fences=")
	if want := int64((ranks + 2) * (iters + 1)); fences != want {
		t.Fatalf("the program counted %d fences, want %d", fences, want)
	}
	r := h.report(t, dir)
	noReportWarnings(t, r)
	// Each window's creation, iters + 1 fences and free, the two final
	// MPI_Reduce: every instance matched.
	allMatched(t, r, 0, 2*(iters+3)+2)

	// The ground truth: the collector's timestamps of the calls.
	calls := windowColls(t, procs)
	for rank, cs := range calls {
		if n := len(cs); rank%2 == 0 && n != 2*(iters+3) || rank%2 == 1 && n != iters+3 {
			t.Errorf("rank %d: %d window collectives", rank, n)
		}
	}
	checkWindowWaits(t, r, calls)
	// Analysed by 1 and by 2 ranks: the same report.
	js := func(n string) []byte {
		f := filepath.Join(t.TempDir(), "r.json")
		if b, err := exec.Command(h.ptrace, "analyze", "-q", "--ranks", n, "--json", f, dir).CombinedOutput(); err != nil {
			t.Fatalf("analyze --ranks %s: %v\n%s", n, err, b)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if !bytes.Equal(js("1"), js("2")) {
		t.Error("the report by 1 rank and by 2 differ")
	}

	// The design: every other rank waits LATE_US at each of the loop's
	// fences of the world window (the even ranks' own window's fences
	// between take some of it: counted with them), CREATE_US and FREE_US;
	// the late rank itself hardly waits.
	return append(bad, rmaDesign(r, iters, late, create, free)...)
}

// checkWindowWaits checks the report's Wait at Fence, Create and Free per
// process against Scalasca's definition applied to the collector's own
// timestamps of the calls (one host, one clock: the clock correction moves
// a rank by microseconds): from a member's enter until the last member of
// the window's group entered, at most to its coll_end, the members' calls
// matched per window (communicator id) by the order of its collectives.
func checkWindowWaits(t *testing.T, r *report.Report, calls [][]windowColl) {
	t.Helper()
	type key struct {
		comm int64
		k    int
	}
	last := map[key]int64{}
	for _, cs := range calls {
		nth := map[int64]int{}
		for _, c := range cs {
			k := key{c.comm, nth[c.comm]}
			nth[c.comm]++
			last[k] = max(last[k], c.enter)
		}
	}
	want := make([]report.WaitTimes, len(calls))
	for rank, cs := range calls {
		nth := map[int64]int{}
		for _, c := range cs {
			k := key{c.comm, nth[c.comm]}
			nth[c.comm]++
			w := max(0, min(last[k], c.end)-c.enter)
			switch c.op {
			case trace.CollWinFence:
				want[rank].WaitAtFenceNS += w
			case trace.CollWinCreate:
				want[rank].WaitAtWinCreateNS += w
			case trace.CollWinFree:
				want[rank].WaitAtWinFreeNS += w
			}
		}
	}
	ws := r.WaitStates
	if ws == nil || len(ws.PerProcess) != len(calls) {
		t.Fatalf("wait states %+v, want %d processes", ws, len(calls))
	}
	for rank := range calls {
		got, w := &ws.PerProcess[rank].WaitTimes, &want[rank]
		t.Logf("rank %d: wait at fence %d (timestamps %d), create %d (%d), free %d (%d)", rank,
			got.WaitAtFenceNS, w.WaitAtFenceNS, got.WaitAtWinCreateNS, w.WaitAtWinCreateNS, got.WaitAtWinFreeNS, w.WaitAtWinFreeNS)
		for _, c := range []struct {
			name      string
			got, want int64
		}{
			{"wait at fence", got.WaitAtFenceNS, w.WaitAtFenceNS},
			{"wait at window create", got.WaitAtWinCreateNS, w.WaitAtWinCreateNS},
			{"wait at window free", got.WaitAtWinFreeNS, w.WaitAtWinFreeNS},
		} {
			if tol := max(500_000, c.want*3/200); abs(c.got-c.want) > tol {
				t.Errorf("rank %d: %s %d ns, the collector's timestamps give %d ns (tolerance %d)", rank, c.name, c.got, c.want, tol)
			}
		}
	}
}

// rmaDesign returns how a run of four ranks, rank 1 late by late µs
// into each of iters fences of a window and by create and free µs into
// its creation and its free, differs from that design: every other rank
// waits about so long at each (or longer: a descheduled rank adds to it),
// rank 1 waits little, causes most of the waiting and holds most of the
// critical path.
func rmaDesign(r *report.Report, iters, late, create, free int64) (bad []string) {
	ws := r.WaitStates
	for _, rank := range []int{0, 2, 3} {
		p := &ws.PerProcess[rank].WaitTimes
		for _, c := range []struct {
			name          string
			got, designed int64
		}{
			{"wait at fence", p.WaitAtFenceNS, iters * late * 1000},
			{"wait at window create", p.WaitAtWinCreateNS, create * 1000},
			{"wait at window free", p.WaitAtWinFreeNS, free * 1000},
		} {
			// A descheduled rank adds waiting, or absorbs the lateness
			// (the ground truth, exact, is checked apart): the design
			// bounds it from below.
			if c.got < c.designed/2 {
				bad = append(bad, fmt.Sprintf("rank %d: %s %d ns, designed %d", rank, c.name, c.got, c.designed))
			}
		}
	}
	var others int64
	for _, rank := range []int{0, 2, 3} {
		p := &ws.PerProcess[rank].WaitTimes
		others += p.WaitAtFenceNS + p.WaitAtWinCreateNS + p.WaitAtWinFreeNS
	}
	if p1 := &ws.PerProcess[1].WaitTimes; p1.WaitAtFenceNS+p1.WaitAtWinCreateNS+p1.WaitAtWinFreeNS > others/3/2 {
		bad = append(bad, fmt.Sprintf("the late rank 1 waits %d ns at fences, the others %d ns", p1.WaitAtFenceNS+p1.WaitAtWinCreateNS+p1.WaitAtWinFreeNS, others))
	}
	// Rank 1 causes more of each pattern's waiting than any other rank (a
	// rank the machine's load deschedules causes some too).
	byRank := map[string]map[int]int64{}
	for _, c := range ws.Causes {
		if byRank[c.Pattern] == nil {
			byRank[c.Pattern] = map[int]int64{}
		}
		byRank[c.Pattern][c.Rank] += c.NS
	}
	for _, pat := range []string{"wait_at_fence", "wait_at_win_create", "wait_at_win_free"} {
		for rank, ns := range byRank[pat] {
			if rank != 1 && ns >= byRank[pat][1] {
				bad = append(bad, fmt.Sprintf("rank %d causes %d ns of %s, rank 1 %d ns: want rank 1 the first", rank, ns, pat, byRank[pat][1]))
			}
		}
		if byRank[pat][1] <= 0 {
			bad = append(bad, "rank 1 causes no "+pat)
		}
	}
	// The critical path runs through the late rank (its computation), not
	// through the waiters' fences.
	if cp := r.CriticalPath; cp == nil || len(cp.ByProcess) == 0 || cp.ByProcess[0].Name != "rank 1" {
		bad = append(bad, fmt.Sprintf("critical path by process %+v, want rank 1's first", cp.ByProcess))
	}
	return bad
}

// The Fortran bindings of a window's creation, MPI_Win_fence and
// MPI_Win_free (rma_fence_f.F90, use mpi and mpi_f08) pass them to the C
// wrappers, so they are the window's collectives as from C: rank 1 late
// into the world window's MPI_Win_allocate (use mpi: its TYPE(C_PTR) form,
// MPI_Win_allocate_cptr, which no binding caught before: the call was not
// recorded at all), every fence of it and its MPI_Win_free; beside it a
// shared-memory window (MPI_Win_allocate_shared), a dynamic one and
// MPI_Win_create on the even ranks' communicator, on time. The waits equal
// the definition applied to the recorded calls and the design, rank 1
// causes them, every window collective matches, no warning, and the
// values the program put and got through the windows are right (the
// converted baseptr, sizes and handles). Before, from Fortran these calls
// were MPI time only: no Wait at Fence, Create or Free.
func TestRMACollectiveWaitsFortran(t *testing.T) {
	h := setup(t)
	t.Setenv("OMPI_MCA_mpi_yield_when_idle", "1")
	for _, tc := range []struct {
		name  string
		flags []string
	}{{"use-mpi", nil}, {"mpi_f08", []string{"-DUSE_F08"}}} {
		t.Run(tc.name, func(t *testing.T) {
			bin := h.buildMPI(t, testdata("rma_fence_f.F90"), tc.flags...)
			designed(t, func() []string { return rmaFortranRun(t, h, bin) })
		})
	}
}

// rmaFortranRun records and checks one run of rma_fence_f.F90 as rmaRun
// does rma_fence.c's.
func rmaFortranRun(t *testing.T, h *harness, bin string) (bad []string) {
	t.Helper()
	const ranks, iters, late, create, free = 4, 10, 20000, 30000, 40000
	dir, out := h.mustRecord(t, nil, mpirunN(ranks, bin, strconv.Itoa(iters), strconv.Itoa(late), strconv.Itoa(create), strconv.Itoa(free))...)
	procs := valid(t, dir)
	if it := printed(t, out, "iterations="); it != iters {
		t.Fatalf("the program ran %d iterations, want %d", it, iters)
	}
	if e := printed(t, out, "errors="); e != 0 {
		t.Fatalf("%d values not where the windows' puts and gets put them", e)
	}
	// Per rank: the world window's iters + 1 fences, the shared window's
	// 2, the even ranks' window's 2.
	if fences := printed(t, out, "fences="); fences != ranks*(iters+1)+ranks*2+ranks/2*2 {
		t.Fatalf("the program counted %d fences, want %d", fences, ranks*(iters+1)+ranks*2+ranks/2*2)
	}
	r := h.report(t, dir)
	noReportWarnings(t, r)
	// The world window: creation, iters + 1 fences, free; the shared one:
	// creation, 2 fences, free; the dynamic one: creation and free; the
	// even ranks' one: creation, 2 fences, free; the final MPI_Reduce.
	allMatched(t, r, 0, (iters+3)+4+2+4+1)
	calls := windowColls(t, procs)
	for rank, cs := range calls {
		if n := len(cs); rank%2 == 0 && n != iters+13 || rank%2 == 1 && n != iters+9 {
			t.Errorf("rank %d: %d window collectives, want %d", rank, n, iters+9+4*(1-rank%2))
		}
	}
	checkWindowWaits(t, r, calls)
	// The calls are the Fortran program's: its source lines.
	for _, s := range r.WaitStates.CallSites {
		if strings.HasPrefix(s.Func, "MPI_Win_") && !strings.Contains(s.Site, "rma_fence_f.F90:") {
			t.Errorf("%s at %q, want a line of rma_fence_f.F90", s.Func, s.Site)
		}
	}
	return rmaDesign(r, iters, late, create, free)
}
