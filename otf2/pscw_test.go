package otf2_test

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/driver"
	"github.com/ptrace-dev/ptrace/otf2"
	"github.com/ptrace-dev/ptrace/report"
)

// pscwDir is Score-P 8.4's trace of rma_pscw.c (its SOURCE.md).
var pscwDir = filepath.Join("testdata", "scorep-8.4-rma-pscw")

// TestScorepGeneralActiveTarget: the RmaGroupSync records of MPI_Win_post,
// _start, _complete, _wait and _test become the collector's messages
// (tags −4, −5 on the window's entry), so Late Post and Early Wait per rank
// equal Scalasca's definitions applied to the archive's own timestamps
// (waits.py, SOURCE.md) to 2 ns; caused by the late poster (rank 1) and
// the late completer (rank 3); the same JSON on 1 and 2 analysis ranks.
func TestScorepGeneralActiveTarget(t *testing.T) {
	anchor := filepath.Join(pscwDir, "traces.otf2")
	rep, _ := analyzeOn1And2(t, anchor)
	if w := rep.Trace.Warnings; w != nil && w.Count > 0 {
		t.Errorf("warnings %+v", w)
	}
	// 2 targets × 8 posts × 2 origins, and as many completes
	if cs := rep.ClockSync; cs == nil || cs.Messages != 64 || cs.UnmatchedSends != 0 || cs.UnmatchedReceives != 0 {
		t.Errorf("clocksync %+v, want 64 messages matched", cs)
	}
	want := [4][2]int64{ // ns: Late Post, Early Wait (waits.py: both definitions agree here)
		{0, 587_194_031},
		{0, 376_499_940},
		{633_000_876, 0},
		{251_081_657, 0},
	}
	for _, p := range rep.WaitStates.PerProcess {
		got := [2]int64{p.LatePostNS, p.EarlyWaitNS}
		for k := range got {
			if d := got[k] - want[p.Rank][k]; d < -2 || d > 2 {
				t.Errorf("rank %d: late post, early wait %v ns, want %v", p.Rank, got, want[p.Rank])
				break
			}
		}
		if p.LateSenderNS != 0 {
			t.Errorf("rank %d: late sender %d ns, want none", p.Rank, p.LateSenderNS)
		}
	}
	causes := map[string]int64{}
	for _, c := range rep.WaitStates.Causes {
		switch {
		case c.Pattern == "late_post" && c.Rank != 1, c.Pattern == "early_wait" && c.Rank != 3:
			t.Errorf("cause %+v: want rank 1 for late post, rank 3 for early wait", c)
		}
		causes[c.Pattern] += c.NS
	}
	if causes["late_post"] < 800_000_000 || causes["early_wait"] < 900_000_000 {
		t.Errorf("causes %v: want the late post and early wait caused", causes)
	}
}

// TestScorepGeneralActiveTargetBadInput: damaged RmaGroupSync records are
// counted warnings of the conversion naming file and offset, never a
// conversion error or a panic: a window of no communicator, a group that
// is none, an ending MPI_Win_test made to look as one that returned false
// (its epoch's completes left unreceived), a record of another type turned
// into a first RmaGroupSync in an MPI_Win_complete (on a window that is
// none), which makes the call's own record a second one; one in an
// MPI_Put is only not used. The analysis
// then runs, or refuses the archive as any trace that lost a message
// whose receive waited for it (a happened-before cycle: later messages
// match in order on the channel), never panics.
func TestScorepGeneralActiveTargetBadInput(t *testing.T) {
	for _, c := range []struct {
		name string
		loc  uint64
		nth  func(e *otf2.Event, k int) bool // the record to damage
		at   int64                           // its byte to change, from the record's type byte
		b    byte
		want []string
	}{
		// RmaGroupSync: type, length, level (1: 01 01), window (0: 00), group (01 0g)
		{"window", 0, isSync(0), 4, 0xff, []string{"traces/0.evt: offset %d: RmaGroupSync on RMA window 4294967295, which is not a window"}},
		{"group", 2, isSync(0), 6, 9, []string{"traces/2.evt: offset %d: RmaGroupSync of group 9, which is no MPI group of ranks"}},
		{"test", 0, endingTest(), 3, 0, nil},
		// an RmaPut (type 46) inside MPI_Put made an RmaGroupSync: in no
		// call of the five, not used (noted), no warning, nothing changed
		{"outside", 2, isType(otf2.EvRmaGroupSync+7, 0), 0, otf2.EvRmaGroupSync, nil},
		{"second", 3, isType(otf2.EvRmaGroupSync+11, 0), 0, otf2.EvRmaGroupSync,
			[]string{"traces/3.evt: offset %d: RmaGroupSync on RMA window 1,", "traces/3.evt: offset ", "a second RmaGroupSync in one MPI_Win_post, _start, _complete, _wait or _test; skipped"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyDir(t, pscwDir)
			path := filepath.Join(dir, "traces", []string{"0", "1", "2", "3"}[c.loc]+".evt")
			anchor := filepath.Join(dir, "traces.otf2")
			off := findRecord(t, anchor, c.loc, c.nth)
			patch(t, path, off+c.at, c.b)
			a, err := otf2.Open(anchor)
			if err != nil {
				t.Fatal(err)
			}
			st, err := a.Convert(int(c.loc), io.Discard)
			if err != nil {
				t.Fatalf("conversion: %v", err)
			}
			if c.name == "outside" && (len(st.Warnings) != 0 || st.Ignored[otf2.EvRmaGroupSync] != 1) {
				t.Errorf("warnings %q, %d RmaGroupSync not used; want none, 1", st.Warnings, st.Ignored[otf2.EvRmaGroupSync])
			}
			wantWarningsAt(t, st.Warnings, c.want, off)
			var rep *report.Report
			err = inproc.Run(1, func(cm comm.Comm) error {
				var err error
				rep, err = driver.Run(cm, driver.Options{Dir: anchor})
				return err
			})
			switch {
			case err != nil && !strings.Contains(err.Error(), "happened-before cycle"):
				t.Errorf("analysis: %v", err)
			case c.name == "outside" && (err != nil || abs64(rep.WaitStates.PerProcess[2].LatePostNS-633_000_876) > 2):
				t.Errorf("analysis: %v, %+v, want rank 2's late post as before", err, rep.WaitStates.PerProcess[2])
			case c.name == "test" && (err != nil || rep.ClockSync == nil || rep.ClockSync.UnmatchedSends != 2):
				// the epoch's two completes are left unreceived (later
				// ones received in the next epochs)
				t.Errorf("analysis: %v, want 2 unmatched sends", err)
			}
		})
	}
}

func isSync(k int) func(e *otf2.Event, n int) bool { return isType(otf2.EvRmaGroupSync, k) }

// isType matches the k-th record of type typ (n counts them).
func isType(typ uint8, k int) func(e *otf2.Event, n int) bool {
	return func(e *otf2.Event, n int) bool { return e.Type == typ && n == k }
}

// endingTest matches location 0's fourth RmaGroupSync of level
// PROCESS|MEMORY (3): the one of the MPI_Win_test that ended its fourth
// exposure epoch (otf2-print.txt.gz; the first three are MPI_Win_wait's,
// whose level is not read: damaging one of them would leave every message
// matched). The level's value byte is the record's fourth.
func endingTest() func(e *otf2.Event, n int) bool {
	k := 0
	return func(e *otf2.Event, _ int) bool {
		if e.Type != otf2.EvRmaGroupSync || e.A[0] != 3 {
			return false
		}
		k++
		return k == 4
	}
}

// findRecord returns the offset of the first record of location loc that
// match accepts, given how many records of its type came before.
func findRecord(t *testing.T, anchor string, loc uint64, match func(e *otf2.Event, n int) bool) int64 {
	t.Helper()
	a, err := otf2.Open(anchor)
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.OpenEvents(loc)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var e otf2.Event
	count := map[uint8]int{}
	for {
		ok, err := r.Next(&e)
		if err != nil || !ok {
			t.Fatalf("no such record in location %d: %v", loc, err)
		}
		if match(&e, count[e.Type]) {
			return e.Offset
		}
		count[e.Type]++
	}
}

// copyDir copies directory src (files and directories) into a temporary
// directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func abs64(v int64) int64 { return max(v, -v) }

// wantWarningsAt wants a warning containing each of want, the first's %d
// the damaged record's offset off.
func wantWarningsAt(t *testing.T, warnings, want []string, off int64) {
	t.Helper()
	for k, w := range want {
		if k == 0 {
			w = strings.Replace(w, "%d", strconv.FormatInt(off, 10), 1)
		}
		found := false
		for _, s := range warnings {
			found = found || strings.Contains(s, w)
		}
		if !found {
			t.Errorf("warnings %q, want one with %q", warnings, w)
		}
	}
}
