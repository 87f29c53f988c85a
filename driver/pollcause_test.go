package driver

import (
	"path/filepath"
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

// polledThenWaitallTrace: rank 1 posts a receive from rank 0 (request
// 11), polls it in three MPI_Test calls (200–300, 400–500, 600–700),
// then posts a receive from rank 2 (request 12) and completes both in one
// MPI_Waitall (900–3020). Rank 0 sends at 1000, rank 2 at 3000.
func polledThenWaitallTrace(t *testing.T) string {
	t.Helper()
	const fIrecv, fTest, fWaitall, fSend = 1, 2, 3, 4
	return threeRankTrace(t, []string{"MPI_Init", "MPI_Irecv", "MPI_Test", "MPI_Waitall", "MPI_Send", "MPI_Finalize"}, func(r int, call callFunc) []trace.Event {
		switch r {
		case 0:
			return call(1000, 1010, fSend, ev(1001, trace.MPISend, 1, 3, 0, 4, 0))
		case 2:
			return call(3000, 3010, fSend, ev(3001, trace.MPISend, 1, 3, 0, 4, 0))
		}
		var evs []trace.Event
		evs = append(evs, call(100, 110, fIrecv, ev(101, trace.MPIRecvPost, 0, 3, 0, 11))...)
		evs = append(evs, call(200, 300, fTest, ev(299, trace.MPIPolled, 11))...)
		evs = append(evs, call(400, 500, fTest)...)
		evs = append(evs, call(600, 700, fTest)...)
		evs = append(evs, call(800, 810, fIrecv, ev(801, trace.MPIRecvPost, 2, 3, 0, 12))...)
		return append(evs, call(900, 3020, fWaitall, ev(1020, trace.MPIRecv, 0, 3, 0, 4, 11), ev(3015, trace.MPIRecv, 2, 3, 0, 4, 12))...)
	})
}

// callFunc returns an MPI call's events: its enter, inner's, its exit.
type callFunc func(enter, exit, fn int64, inner ...trace.Event) []trace.Event

// threeRankTrace writes a trace of three one-thread processes: each
// calls MPI_Init (function 0) over [0, 10], then what body gives it, then
// MPI_Finalize (the last of strs) over [4000, 4010]; strs name the
// functions by index.
func threeRankTrace(t *testing.T, strs []string, body func(r int, call callFunc) []trace.Event) string {
	t.Helper()
	call := func(enter, exit, fn int64, inner ...trace.Event) []trace.Event {
		return append(append([]trace.Event{ev(enter, trace.MPIEnter, fn, -1)}, inner...), ev(exit, trace.MPIExit, fn))
	}
	fFin := int64(len(strs) - 1)
	dir := t.TempDir()
	for r := range 3 {
		evs := []trace.Event{ev(0, trace.ThreadBegin, 1)}
		evs = append(evs, call(0, 10, 0)...)
		evs = append(evs, body(r, call)...)
		evs = append(evs, call(4000, 4010, fFin)...)
		evs = append(evs, ev(4010, trace.ThreadEnd))
		w, err := trace.Create(filepath.Join(dir, trace.FileName(r)), trace.Header{Rank: r, NRanks: 3, ClockUnit: "ns"})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range strs {
			w.String(s)
		}
		w.AddComm(trace.Communicator{Index: 0, ID: 0, Name: "MPI_COMM_WORLD", Members: []int{0, 1, 2}})
		w.SetThread(trace.Thread{Index: 0, Type: trace.ThreadInitial})
		for i := range evs {
			if err := w.Emit(0, &evs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestPolledWaitOfAnotherCause: the polling calls' Late Sender of a
// receive whose completing MPI_Waitall is charged to a later sender
// (polledThenWaitallTrace: rank 1 polls rank 0's message for 300 ns in
// MPI_Test, then waits 2100 ns in MPI_Waitall for rank 2's) stays rank
// 0's: the Waitall's delay costs, rank 2's, explain its own 2100 ns, not
// 2400 with rank 0's polls added (they were added to whatever wait the
// completing call held), on 1, 2 and 3 analysis ranks.
func TestPolledWaitOfAnotherCause(t *testing.T) {
	dir := polledThenWaitallTrace(t)
	for k := 1; k <= 3; k++ {
		rep, _, err := analyze(t, Options{Dir: dir, NoClockSync: true}, k)
		if err != nil {
			t.Fatal(err)
		}
		if w := rep.Trace.Warnings; w != nil && w.Count > 0 {
			t.Errorf("k=%d: warnings %v", k, w.First)
		}
		ws := rep.WaitStates
		got := map[string]int64{}
		for _, s := range ws.CallSites {
			got[s.Func] = s.LateSenderNS
		}
		if got["MPI_Test"] != 300 || got["MPI_Waitall"] != 2100 {
			t.Errorf("k=%d: late sender %v, want 300 in MPI_Test and 2100 in MPI_Waitall", k, got)
		}
		byCause := map[int]int64{}
		for _, c := range ws.Causes {
			byCause[c.Rank] += c.NS
		}
		if byCause[0] != 300 || byCause[2] != 2100 {
			t.Errorf("k=%d: causes %+v, want rank 0 300 ns, rank 2 2100", k, ws.Causes)
		}
		delayed := map[int]int64{}
		for _, d := range ws.Delays {
			if d.Pattern == "late_sender" {
				delayed[d.Rank] += d.NS
			}
		}
		if delayed[2] != 2100 || delayed[0] > 300 {
			t.Errorf("k=%d: delay costs %+v, want rank 2's 2100 ns (its own wait), rank 0's at most 300", k, ws.Delays)
		}
	}
}

// polledPastCompletionTrace: rank 1 posts a receive from rank 2 (request
// 12) and polls it in an MPI_Test (200–300), posts a receive from rank 0
// (request 11), then spins in one MPI_Testsome (500–3500) that completes
// request 11 (rank 0 sent at 1001) while request 12 stays pending; an
// MPI_Test (3600–3700) completes request 12 (rank 2 sent at 3001, after
// computing from 10 on). MPI_Finalize at 4000 on every rank.
func polledPastCompletionTrace(t *testing.T) string {
	t.Helper()
	const fIrecv, fTest, fTestsome, fSend = 1, 2, 3, 4
	return threeRankTrace(t, []string{"MPI_Init", "MPI_Irecv", "MPI_Test", "MPI_Testsome", "MPI_Send", "MPI_Finalize"}, func(r int, call callFunc) []trace.Event {
		switch r {
		case 0:
			return call(1000, 1010, fSend, ev(1001, trace.MPISend, 1, 3, 0, 4, 0))
		case 2:
			return call(3000, 3010, fSend, ev(3001, trace.MPISend, 1, 3, 0, 4, 0))
		}
		var evs []trace.Event
		evs = append(evs, call(100, 110, fIrecv, ev(101, trace.MPIRecvPost, 2, 3, 0, 12))...)
		evs = append(evs, call(200, 300, fTest, ev(299, trace.MPIPolled, 12))...)
		evs = append(evs, call(400, 410, fIrecv, ev(401, trace.MPIRecvPost, 0, 3, 0, 11))...)
		evs = append(evs, call(500, 3500, fTestsome, ev(3490, trace.MPIRecv, 0, 3, 0, 4, 11))...)
		return append(evs, call(3600, 3700, fTest, ev(3690, trace.MPIRecv, 2, 3, 0, 4, 12))...)
	})
}

// TestPollingCallCompletingEarlierSend: a Test-family call that completes
// a request whose sender came early (rank 0 at 1001) while it polls
// another whose sender comes later (rank 2 at 3001, whose edge enters the
// call: pollTarget) weighs only from the later time, as a polling call
// does. Weighing from the earlier one, the path ran through rank 2's
// 2990 ns of computation and then 2499 ns of the same MPI_Testsome: 5989
// ns in the 3990 ns window (MPI_Init's end to MPI_Finalize's start).
// Every rank's own chain spans the window, so the path is exactly it.
func TestPollingCallCompletingEarlierSend(t *testing.T) {
	dir := polledPastCompletionTrace(t)
	for k := 1; k <= 3; k++ {
		rep, _, err := analyze(t, Options{Dir: dir, NoClockSync: true}, k)
		if err != nil {
			t.Fatal(err)
		}
		if w := rep.Trace.Warnings; w != nil && w.Count > 0 {
			t.Errorf("k=%d: warnings %v", k, w.First)
		}
		if cp, win := rep.CriticalPath, rep.Trace.Window.DurationNS; cp == nil || win != 3990 || cp.LengthNS != win {
			t.Fatalf("k=%d: critical path %+v, want the window's %d ns", k, cp, win)
		}
	}
}
