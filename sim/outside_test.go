package sim_test

import (
	"testing"

	"github.com/ptrace-dev/ptrace/trace"
)

// TestOutsideGraph: the events of an MPI call made while no task is
// current on its thread (a thread no OpenMP runtime runs) are outside
// the fragment graph (no node: the critical path leaves the edges from
// them out without counting them as a damaged trace's), from the call's
// enter to its exit, a nested call's included, and to the thread's end
// when the exit is missing; an event outside any MPI call on that thread
// is not (a damaged trace's), nor is any event of a thread whose calls
// run in a task. Every event of a thread of type unknown is outside.
func TestOutsideGraph(t *testing.T) {
	for _, unknown := range []bool{false, true} {
		g := newProg(2)
		g.ev(0, trace.ThreadBegin, 0, trace.ThreadInitial).
			ev(0, trace.ImplicitTaskBegin, 0, 0, trace.MakeID(0, 1), 1, 0, 1).
			ev(0, trace.MPIEnter, 5, 0). // 2
			ev(0, trace.MPISend, 6, 1, 4, 0, 8, 0).
			ev(0, trace.MPIExit, 7, 0).
			ev(0, trace.ImplicitTaskEnd, 100, 0, trace.MakeID(0, 1), 1, 0, 1).
			ev(0, trace.ThreadEnd, 100)
		g.ev(1, trace.ThreadBegin, 0, trace.ThreadOther). // 0
									ev(1, trace.MPIEnter, 10, 0). // 1
									ev(1, trace.MPIEnter, 11, 0). // 2: nested
									ev(1, trace.MPISend, 12, 0, 4, 0, 8, 0).
									ev(1, trace.MPIExit, 13, 0).
									ev(1, trace.MPIExit, 14, 0).             // 5
									ev(1, trace.MPISend, 20, 0, 5, 0, 8, 0). // 6: outside any call
									ev(1, trace.MPIEnter, 30, 0).            // 7: no exit
									ev(1, trace.MPISend, 40, 0, 6, 0, 8, 0).
									ev(1, trace.ThreadEnd, 100) // 9
		if unknown {
			g.tables.Threads = []trace.Thread{{Index: 0, Type: trace.ThreadInitial}, {Index: 1, Type: trace.ThreadUnknown}}
		}
		_, _, f := runFrags(t, g)
		for ev := int64(0); ev <= 9; ev++ {
			want := unknown || (ev >= 1 && ev <= 5) || ev >= 7
			if got := f.OutsideGraph(1, ev); got != want {
				t.Errorf("unknown %v: thread 1 event %d outside: %v, want %v", unknown, ev, got, want)
			}
		}
		for ev := int64(0); ev <= 6; ev++ {
			if f.OutsideGraph(0, ev) {
				t.Errorf("unknown %v: thread 0 event %d outside", unknown, ev)
			}
		}
		if f.OutsideGraph(2, 0) || f.OutsideGraph(-1, 0) {
			t.Errorf("unknown %v: a thread the process does not have is outside", unknown)
		}
	}
}
