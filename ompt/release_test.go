package ompt

import (
	"testing"

	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// watchTracker records the dependence tracker's live states and table size
// at the first task_schedule, after every task is created, and the most
// live states after any event.
type watchTracker struct {
	m                    *Model
	seen                 bool
	live, slots, maxLive int
}

func (w *watchTracker) Before(s *sim.Sim, e *trace.Event, th int, dt int64) {}
func (w *watchTracker) Finish(s *sim.Sim)                                   {}
func (w *watchTracker) After(s *sim.Sim, e *trace.Event, th int) {
	w.maxLive = max(w.maxLive, w.m.deps.live)
	if !w.seen && e.Kind == trace.TaskSchedule {
		w.seen, w.live, w.slots = true, w.m.deps.live, len(w.m.deps.table)
	}
}

// Once the process's last task_create and task_dependences events are
// simulated, nothing can look an address up: the tracker's states go
// (a program that creates every task before any runs holds them only
// while it creates), and the edges are those of the dependences all the
// same. Before, an address's state goes at its last entry: between
// events, a chain holds one (the address the latest task wrote), where
// keep held them all.
func TestTrackerReleasedAfterLastCreation(t *testing.T) {
	const tasks = 3000
	events := [][]trace.Event{nil}
	var deps []trace.Dep
	ev := func(k trace.Kind, at int64, args ...int64) {
		e := trace.Event{Time: at, Kind: k}
		copy(e.Args[:], args)
		events[0] = append(events[0], e)
	}
	id := func(seq int64) int64 { return trace.MakeID(0, seq) }
	ev(trace.ImplicitTaskBegin, 0, 0, id(1), 1, 0, TaskInitial)
	for k := range int64(tasks) {
		// Task k writes address k and reads address k−1: a chain.
		ev(trace.TaskCreate, 1, id(2+k), id(1), TaskExplicit, 0)
		d := []trace.Dep{{Addr: uint64(k) * 64, Type: trace.DepOut}}
		if k > 0 {
			d = append(d, trace.Dep{Addr: uint64(k-1) * 64, Type: trace.DepIn})
		}
		ev(trace.TaskDeps, 1, id(2+k), int64(len(d)), int64(len(deps)))
		deps = append(deps, d...)
	}
	for k := range int64(tasks) {
		ev(trace.TaskSchedule, 10+2*k, id(1), StatusSwitch, id(2+k))
		ev(trace.TaskSchedule, 11+2*k, id(2+k), StatusComplete, id(1))
	}
	ev(trace.ImplicitTaskEnd, 10+2*tasks, 0, id(1), 1, 0, TaskInitial)
	p, err := trace.NewProcess(trace.Header{NRanks: 1}, trace.Tables{Locations: []trace.Location{{ID: 0, File: "t.c", Line: 1}}}, events, [][]trace.Dep{deps})
	if err != nil {
		t.Fatal(err)
	}
	s := sim.New(p, nil, true)
	s.RecordDeps = true
	m := NewModel()
	m.KeepDependences()
	w := &watchTracker{m: m}
	var dropped []int64
	s.OnDrop = func(n int64) {
		if w.seen {
			t.Errorf("tables dropped after a task started")
		}
		dropped = append(dropped, n)
	}
	if err := s.Run(m, w); err != nil {
		t.Fatal(err)
	}
	// The table Prepare reserved for the 2·3000−1 entries (a state for
	// every fourth, 20 bytes each) and a bit an entry.
	if want := tableSize((2*tasks-1)/4)*20 + (2*tasks-1+63)/64*8; len(dropped) != 1 || dropped[0] != int64(want) {
		t.Errorf("OnDrop calls %v, want one of %d bytes", dropped, want)
	}
	if w.maxLive != 1 {
		t.Errorf("at most %d live states, want 1", w.maxLive)
	}
	if !w.seen || w.live != 0 || w.slots > tableSize(0) {
		t.Errorf("after the last creation: %d live states in %d slots, want none in %d", w.live, w.slots, tableSize(0))
	}
	n := 0
	s.DepEdges.Each(func(pred, succ sim.Task) {
		if succ != pred+1 {
			t.Errorf("edge %d → %d, want a chain", pred, succ)
		}
		n++
	})
	if n != tasks-1 {
		t.Errorf("%d edges, want %d", n, tasks-1)
	}
}
