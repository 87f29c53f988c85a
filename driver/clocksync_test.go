package driver

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
)

// analyze runs the driver on k inproc ranks and returns rank 0's report and
// every rank's error.
func analyze(t *testing.T, opts Options, k int) (*report.Report, []error, error) {
	t.Helper()
	var rep *report.Report
	errs := make([]error, k)
	var mu sync.Mutex
	done := make(chan error, 1)
	go func() {
		done <- inproc.Run(k, func(c comm.Comm) error {
			r, err := Run(c, opts)
			mu.Lock()
			defer mu.Unlock()
			errs[c.Rank()] = err
			if c.Rank() == 0 {
				rep = r
			}
			return err
		})
	}()
	select {
	case err := <-done:
		return rep, errs, err
	case <-time.After(60 * time.Second):
		t.Fatalf("analysis on %d ranks hangs", k)
	}
	return nil, nil, nil
}

func clockJSON(t *testing.T, r *report.Report) string {
	t.Helper()
	b, err := json.MarshalIndent(r.ClockSync, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestClockSyncSectionIndependentOfRanks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "halo")
	if _, err := gen.Generate(dir, gen.Config{Workload: "halo", Ranks: 6, Threads: 2, Iterations: 8, LatencyNS: 2000, SkewNS: 1_000_000, DriftPPM: 30}); err != nil {
		t.Fatal(err)
	}
	var first string
	for _, k := range []int{1, 2, 3, 4, 7, 9} { // 7 and 9: ranks without a process
		rep, _, err := analyze(t, Options{Dir: dir}, k)
		if err != nil {
			t.Fatal(err)
		}
		cs := rep.ClockSync
		if cs == nil || cs.Method != "interpolation+clc" || cs.Messages != 8*2*5 || cs.Collectives != 1 ||
			cs.ViolationsBefore == 0 || cs.ViolationsAfter != 0 || len(cs.PerProcess) != 6 {
			t.Fatalf("k=%d: %s", k, clockJSON(t, rep))
		}
		if k == 1 {
			first = clockJSON(t, rep)
		} else if got := clockJSON(t, rep); got != first {
			t.Fatalf("k=%d: clocksync section differs from 1 rank:\n%s\nvs\n%s", k, got, first)
		}
		var sb strings.Builder
		report.WriteText(&sb, rep, report.TextOptions{})
		if !strings.Contains(sb.String(), "clocks     interpolation+clc, 80 messages, violations ") || !strings.Contains(sb.String(), " → 0 after the CLC; the CLC then moved") {
			t.Fatalf("terminal summary:\n%s", sb.String())
		}
	}
	rep, _, err := analyze(t, Options{Dir: dir, NoClockSync: true}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if cs := rep.ClockSync; cs.Method != "none" || cs.ViolationsAfter != cs.ViolationsBefore || cs.ViolationsAfter == 0 {
		t.Fatalf("--no-clocksync: %s", clockJSON(t, rep))
	}
}

// writeTrace writes processes as a trace directory (no manifest).
func writeTrace(t *testing.T, procs []*rawProc) string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range procs {
		w, err := trace.Create(filepath.Join(dir, trace.FileName(p.Header.Rank)), p.Header)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range p.Comms {
			w.AddComm(c)
		}
		for th, ev := range p.Events {
			w.SetThread(trace.Thread{Index: th, Type: trace.ThreadInitial})
			for i := range ev {
				if err := w.Emit(th, &ev[i]); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// rawProc is a process as a test spells it: header, tables and rows.
type rawProc struct {
	Header trace.Header
	trace.Tables
	Events [][]trace.Event
}

func twoProcs(events func(rank int, peer int64) []trace.Event) []*rawProc {
	world := []trace.Communicator{{Index: 0, ID: 0, Name: "MPI_COMM_WORLD", Members: []int{0, 1}}}
	var out []*rawProc
	for r := 0; r < 2; r++ {
		out = append(out, &rawProc{Header: trace.Header{Rank: r, NRanks: 2, ClockUnit: "ns"}, Tables: trace.Tables{Comms: world},
			Events: [][]trace.Event{events(r, int64(1-r))}})
	}
	return out
}

func ev(t int64, k trace.Kind, args ...int64) trace.Event {
	e := trace.Event{Time: t, Kind: k}
	copy(e.Args[:], args)
	return e
}

// TestCyclicTraceFailsEveryRank: each process receives before it sends to
// the other. Every rank must end with the cycle error, not hang.
func TestCyclicTraceFailsEveryRank(t *testing.T) {
	dir := writeTrace(t, twoProcs(func(r int, peer int64) []trace.Event {
		return []trace.Event{ev(10, trace.ThreadBegin, 1), ev(20, trace.MPIRecv, peer, 5, 0, 8, 0), ev(30, trace.MPISend, peer, 5, 0, 8, 0), ev(40, trace.ThreadEnd)}
	}))
	for k := 1; k <= 2; k++ {
		_, errs, err := analyze(t, Options{Dir: dir}, k)
		if err == nil || !strings.Contains(err.Error(), "happened-before cycle") || !strings.Contains(err.Error(), "(mpi_recv) waits for") {
			t.Fatalf("k=%d: %v", k, err)
		}
		for r, e := range errs {
			if e == nil || !IsAgreed(e) {
				t.Fatalf("k=%d rank %d: %v (want an agreed error)", k, r, e)
			}
		}
	}
}

// TestUnmatchedMessagesWarn: a send nobody receives is a counted warning,
// and --strict makes it an error on every rank.
func TestUnmatchedMessagesWarn(t *testing.T) {
	dir := writeTrace(t, twoProcs(func(r int, peer int64) []trace.Event {
		evs := []trace.Event{ev(10, trace.ThreadBegin, 1)}
		if r == 0 {
			evs = append(evs, ev(20, trace.MPISend, peer, 5, 0, 8, 0), ev(25, trace.MPISend, peer, 6, 0, 8, 0))
		} else {
			evs = append(evs, ev(30, trace.MPIRecv, peer, 5, 0, 8, 0))
		}
		return append(evs, ev(40, trace.ThreadEnd))
	}))
	for k := 1; k <= 2; k++ {
		rep, _, err := analyze(t, Options{Dir: dir}, k)
		if err != nil {
			t.Fatal(err)
		}
		cs := rep.ClockSync
		w := rep.Trace.Warnings
		if cs.Messages != 1 || cs.UnmatchedSends != 1 || w == nil || w.Count != 1 || !strings.Contains(w.First[0], "unmatched mpi_send: process 0 → 1, tag 6") {
			t.Fatalf("k=%d: %s, warnings %+v", k, clockJSON(t, rep), w)
		}
		_, errs, err := analyze(t, Options{Dir: dir, Strict: true}, k)
		if err == nil || !strings.Contains(err.Error(), "--strict") {
			t.Fatalf("k=%d strict: %v", k, err)
		}
		for r, e := range errs {
			if e == nil {
				t.Fatalf("k=%d strict: rank %d succeeded", k, r)
			}
		}
	}
}

// TestAnalyzeNoEvents: a trace whose processes hold no event (each rank's
// program killed before its first chunk, as an MPI_Abort in MPI_Init's
// wake leaves them) is analysed, at any number of ranks, as an empty run:
// the critical path of a graph with only its orphan node ran into that
// node, which procOf gives to the last process, whose fragment attributes
// have no block (a panic: index out of range).
func TestAnalyzeNoEvents(t *testing.T) {
	for _, n := range []int{1, 3} {
		var procs []*rawProc
		for r := 0; r < n; r++ {
			procs = append(procs, &rawProc{Header: trace.Header{Rank: r, NRanks: n, ClockUnit: "ns"}})
		}
		dir := writeTrace(t, procs)
		for k := 1; k <= n; k++ {
			rep, _, err := analyze(t, Options{Dir: dir}, k)
			if err != nil {
				t.Fatalf("%d processes, %d ranks: %v", n, k, err)
			}
			if cp := rep.CriticalPath; cp == nil || cp.Nodes != 0 || cp.LengthNS != 0 {
				t.Fatalf("%d processes, %d ranks: critical path %+v, want empty", n, k, cp)
			}
		}
	}
}
