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
)

// Nonblocking collectives synchronise their members as blocking ones do,
// from the starts to the completions (testdata/nbc_late.c, 4 ranks): the
// ranks that wait in MPI_Wait for the last rank's late MPI_Iallreduce wait
// at N×N, for root 1's late MPI_Ibcast a late broadcast, for rank 2's late
// MPI_Ibarrier at the barrier — each about the program's own lateness, the
// cause the late rank — while rank 0's MPI_Test loop, whose completing
// call starts after the late start, waits none. The critical path goes
// through the late rank's computation, not through the waiters' MPI_Wait.
// Before the collector recorded them, these waits were transfer/other with
// no cause.
func TestNonblockingCollectivesWait(t *testing.T) {
	h := setup(t)
	const ranks, iters, lateUS, overlapUS = 4, 20, 2000, 100
	src := testdata("nbc_late.c")
	bin := h.buildMPI(t, src)
	dir, out := h.mustRecord(t, nil, mpirunN(ranks, bin, strconv.Itoa(iters), strconv.Itoa(lateUS))...)
	valid(t, dir)
	js1, js2 := filepath.Join(t.TempDir(), "1.json"), filepath.Join(t.TempDir(), "2.json")
	for _, a := range [][]string{{"--ranks", "1", "--json", js1}, {"--ranks", "2", "--json", js2}} {
		if o, err := exec.Command(h.ptrace, append(append([]string{"analyze", "-q"}, a...), dir)...).CombinedOutput(); err != nil {
			t.Fatalf("ptrace analyze %v: %v\n%s", a, err, o)
		}
	}
	b1, _ := os.ReadFile(js1)
	b2, _ := os.ReadFile(js2)
	if !bytes.Equal(b1, b2) {
		t.Errorf("the reports at --ranks 1 and 2 differ")
	}
	r := h.report(t, dir)
	noReportWarnings(t, r)
	if it := printed(t, out, "iterations="); it != iters {
		t.Fatalf("the program ran %d iterations, want %d", it, iters)
	}
	allMatched(t, r, 0, printed(t, out, "collectives="))
	ws := r.WaitStates
	if ws == nil {
		t.Fatal("no wait_states section")
	}
	// The call sites by the source line of their call.
	text, err := os.ReadFile(filepath.Join(h.root, src))
	if err != nil {
		t.Fatal(err)
	}
	lineOf := func(call string) string {
		for i, l := range strings.Split(string(text), "\n") {
			if strings.Contains(l, call) {
				return fmt.Sprintf("nbc_late.c:%d:", i+1)
			}
		}
		t.Fatalf("no %q in %s", call, src)
		return ""
	}
	site := func(fn, call string) *report.WaitSite {
		at := lineOf(call)
		for i := range ws.CallSites {
			if s := &ws.CallSites[i]; s.Func == fn && strings.Contains(s.Site, at) {
				return s
			}
		}
		t.Fatalf("no call site of %s at %s: %+v", fn, at, ws.CallSites)
		return nil
	}
	red, bc, bar := site("MPI_Wait", "MPI_Wait(&red"), site("MPI_Wait", "MPI_Wait(&bc"), site("MPI_Wait", "MPI_Wait(&bar")
	test := site("MPI_Test", "MPI_Test(&bar")
	// The others' waits: three ranks for the Iallreduce and the Ibcast,
	// two in MPI_Wait for the Ibarrier (rank 0 tests it).
	wantRed, wantBc, wantBar := int64(3*iters*(lateUS-overlapUS)*1000), int64(3*iters*lateUS/2*1000), int64(2*iters*lateUS/4*1000)
	t.Logf("Iallreduce wait at N×N %d ns (planned %d), Ibcast late broadcast %d ns (%d), Ibarrier wait at barrier %d ns (%d), MPI_Test %d ns",
		red.WaitNxNNS, wantRed, bc.LateBroadcastNS, wantBc, bar.WaitBarrierNS, wantBar, test.WaitBarrierNS)
	near := func(v, want int64) bool { return v > want/2 && v < want*3/2 }
	if !near(red.WaitNxNNS, wantRed) {
		t.Errorf("MPI_Wait of the Iallreduce: %+v, want a wait at N×N near %d ns", red, wantRed)
	}
	if !near(bc.LateBroadcastNS, wantBc) {
		t.Errorf("MPI_Wait of the Ibcast: %+v, want a late broadcast near %d ns", bc, wantBc)
	}
	if !near(bar.WaitBarrierNS, wantBar) {
		t.Errorf("MPI_Wait of the Ibarrier: %+v, want a wait at the barrier near %d ns", bar, wantBar)
	}
	// Rank 0's MPI_Test loop: only the completing call, which begins
	// after rank 2's start, has the completion.
	if test.WaitBarrierNS > iters*10_000 {
		t.Errorf("MPI_Test of the Ibarrier: %+v, want no wait (its earlier calls are no wait)", test)
	}
	// The cause, per pattern: the process waited for most.
	cause := map[string]report.WaitCause{}
	for _, c := range ws.Causes {
		if c.Func == "MPI_Wait" && c.NS > cause[c.Pattern].NS {
			cause[c.Pattern] = c
		}
	}
	if c := cause["wait_nxn"]; c.Rank != ranks-1 || !strings.Contains(c.Site, lineOf("MPI_Wait(&red")) {
		t.Errorf("wait at N×N caused by %+v, want rank %d at the Iallreduce's MPI_Wait", c, ranks-1)
	}
	if c := cause["late_broadcast"]; c.Rank != 1 {
		t.Errorf("late broadcast caused by %+v, want rank 1", c)
	}
	// The critical path runs through the last rank's late_allreduce: that
	// rank holds the most of it, and the waiters' MPI_Wait of the
	// Iallreduce little (it held about iters × LATE_US when the path bent
	// onto it).
	cp := r.CriticalPath
	if cp == nil || len(cp.ByProcess) == 0 {
		t.Fatal("no critical path")
	}
	top := cp.ByProcess[0]
	for _, p := range cp.ByProcess {
		if p.NS > top.NS {
			top = p
		}
	}
	if top.Name != fmt.Sprintf("rank %d", ranks-1) {
		t.Errorf("critical path by process %+v, want rank %d first", cp.ByProcess, ranks-1)
	}
	for _, c := range cp.ByConstruct {
		if c.Name == "MPI_Wait at "+red.Site && c.NS > iters*lateUS*1000/2 {
			t.Errorf("the Iallreduce's MPI_Wait holds %d ns of the critical path, want under %d", c.NS, iters*lateUS*1000/2)
		}
	}
}
