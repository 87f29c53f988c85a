package sim_test

import (
	"testing"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// runBooking simulates with the instrumentation correction at cost ns per
// event, and the sync regions' runtime code booked as work when asWork.
func (g *prog) runBooking(t *testing.T, cost int64, asWork bool) *sim.Sim {
	t.Helper()
	s := sim.New(g.proc(), nil, false)
	s.EventCostNS = cost
	s.SyncRuntimeAsWork = asWork
	if err := s.Run(ompt.NewModel()); err != nil {
		t.Fatal(err)
	}
	noWarnings(t, s)
	return s
}

// One thread, 0..100. Its implicit task creates a task at 10, enters a
// taskwait at 20 (wait from 25), runs the task 25..60 inside the wait, leaves
// the wait at 60 and the taskwait at 70, then meets a barrier at 80 (wait
// 85..95, end 100). The runtime's code around the waits is
// 20..25, 60..70, 80..85 and 95..100: 25 ns of overhead, although no task is
// ready around the barrier's wait (δr would make that idleness); work is
// the rest, 65 ns. The barrier's wait is overhead too: a team of one is
// complete at its arrival, so its implicit task is ready (②) until the
// wait's end. With the booking off it is POT's: work 90, overhead 10.
func TestSyncRuntimeBooking(t *testing.T) {
	task := id(0, 4)
	g := newProg(1).region(1, 0)
	g.ev(0, trace.TaskCreate, 10, task, implicit(0), ompt.TaskExplicit, 0)
	g.ev(0, trace.SyncBegin, 20, ompt.SyncTaskwait, id(0, 2), implicit(0), 0)
	g.ev(0, trace.SyncWaitBegin, 25, ompt.SyncTaskwait, id(0, 2), implicit(0))
	g.ev(0, trace.TaskSchedule, 25, implicit(0), ompt.StatusSwitch, task)
	g.ev(0, trace.TaskSchedule, 60, task, ompt.StatusComplete, implicit(0))
	g.ev(0, trace.SyncWaitEnd, 60, ompt.SyncTaskwait, id(0, 2), implicit(0))
	g.ev(0, trace.SyncEnd, 70, ompt.SyncTaskwait, id(0, 2), implicit(0), 0)
	g.ev(0, trace.SyncBegin, 80, ompt.SyncBarrierExplicit, id(0, 2), implicit(0), 0)
	g.ev(0, trace.SyncWaitBegin, 85, ompt.SyncBarrierExplicit, id(0, 2), implicit(0))
	g.ev(0, trace.SyncWaitEnd, 95, ompt.SyncBarrierExplicit, id(0, 2), implicit(0))
	g.ev(0, trace.SyncEnd, 100, ompt.SyncBarrierExplicit, id(0, 2), implicit(0), 0)
	g.end(1, 100)

	s := g.runBooking(t, 0, false)
	wantBreakdown(t, s, 65, 0, 35, 0)
	if rt := s.Breakdown.Threads[0].SyncRuntime; rt != 25 {
		t.Errorf("sync runtime %d, want 25", rt)
	}
	talp := s.TALP()
	if talp.Useful != 65 || talp.Idle != 35 || talp.Serial != 0 || talp.LB+talp.Sched != 35 {
		t.Errorf("TALP useful %d, idle %d, serial %d; want 65, 35, 0", talp.Useful, talp.Idle, talp.Serial)
	}

	s = g.runBooking(t, 0, true)
	wantBreakdown(t, s, 90, 0, 10, 0)
	if rt := s.Breakdown.Threads[0].SyncRuntime; rt != 0 {
		t.Errorf("booked as work: sync runtime %d, want 0", rt)
	}
}

// A taskgroup's begin opens the user's body (work); only its tail after the
// wait is runtime. Thread 0: taskgroup 10..60, creating a task at 20, wait
// 30..50 running the task inside it 30..45 (the wait idles 45..50), the tail
// 50..60. A task run inside a barrier before its wait is work; the
// barrier's runtime code around it (70..72, 80..82) is not.
func TestSyncRuntimeTaskgroupAndNested(t *testing.T) {
	a, b := id(0, 4), id(0, 5)
	g := newProg(1).region(1, 0)
	g.ev(0, trace.SyncBegin, 10, ompt.SyncTaskgroup, id(0, 2), implicit(0), 0)
	g.ev(0, trace.TaskCreate, 20, a, implicit(0), ompt.TaskExplicit, 0)
	g.ev(0, trace.SyncWaitBegin, 30, ompt.SyncTaskgroup, id(0, 2), implicit(0))
	g.ev(0, trace.TaskSchedule, 30, implicit(0), ompt.StatusSwitch, a)
	g.ev(0, trace.TaskSchedule, 45, a, ompt.StatusComplete, implicit(0))
	g.ev(0, trace.SyncWaitEnd, 50, ompt.SyncTaskgroup, id(0, 2), implicit(0))
	g.ev(0, trace.SyncEnd, 60, ompt.SyncTaskgroup, id(0, 2), implicit(0), 0)
	g.ev(0, trace.TaskCreate, 65, b, implicit(0), ompt.TaskExplicit, 0)
	g.ev(0, trace.SyncBegin, 70, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(0), 0)
	g.ev(0, trace.TaskSchedule, 72, implicit(0), ompt.StatusSwitch, b)
	g.ev(0, trace.TaskSchedule, 80, b, ompt.StatusComplete, implicit(0))
	g.ev(0, trace.SyncWaitBegin, 82, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(0))
	g.ev(0, trace.SyncWaitEnd, 100, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(0))
	g.ev(0, trace.SyncEnd, 100, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(0), 0)
	g.end(1, 100)

	// work: 0..30 (the group's body), 30..45 (task a), 60..70, 72..80
	// (task b); runtime: 50..60, 70..72, 80..82; the waits 45..50 and
	// 82..100 are overhead (their condition holds, the waiter is ready).
	s := g.runBooking(t, 0, false)
	wantBreakdown(t, s, 30+15+10+8, 0, 10+2+2+5+18, 0)
	if rt := s.Breakdown.Threads[0].SyncRuntime; rt != 14 {
		t.Errorf("sync runtime %d, want 14", rt)
	}
	s = g.runBooking(t, 0, true)
	wantBreakdown(t, s, 77, 0, 23, 0)
}

// A trace without sync_region_wait events (a runtime that reports only the
// regions) has its waits at sync_begin … sync_end: no runtime code is
// bounded, and nothing changes.
func TestSyncRuntimeWithoutWaitEvents(t *testing.T) {
	g := newProg(1).region(1, 0)
	g.ev(0, trace.SyncBegin, 80, ompt.SyncBarrierExplicit, id(0, 2), implicit(0), 0)
	g.ev(0, trace.SyncEnd, 100, ompt.SyncBarrierExplicit, id(0, 2), implicit(0), 0)
	g.end(1, 100)
	for _, asWork := range []bool{false, true} {
		s := g.runBooking(t, 0, asWork)
		wantBreakdown(t, s, 80, 0, 20, 0)
	}
}

// The open constructs of a thread stay bounded when a trace leaves them
// unbalanced: a region's end reported with no task on the thread clears
// them, the innermost construct's end drops those above it (tasks that
// left the thread inside theirs), and a thread that only enters keeps at
// most a fixed number.
func TestSyncRuntimeBookkeeping(t *testing.T) {
	s := &sim.Sim{Threads: make([]sim.Thread, 1)}
	thr := &s.Threads[0]
	thr.Stack = []sim.Task{1}
	s.EnterSyncRuntime(0)
	s.EnterSyncRuntime(0) // the same task again: one entry
	thr.Stack = []sim.Task{1, 2}
	s.EnterSyncRuntime(0)
	if len(thr.Sync) != 2 {
		t.Fatalf("open constructs %v, want [1 2]", thr.Sync)
	}
	thr.Stack = []sim.Task{1} // task 2 left the thread inside its construct
	s.LeaveSyncRuntime(0)
	if len(thr.Sync) != 0 {
		t.Errorf("after task 1's end: open constructs %v, want none", thr.Sync)
	}
	s.EnterSyncRuntime(0)
	thr.Stack = nil // the region ended before the worker reported its barrier's end
	s.LeaveSyncRuntime(0)
	if len(thr.Sync) != 0 {
		t.Errorf("after an end with no task: open constructs %v, want none", thr.Sync)
	}
	for i := range 10000 {
		thr.Stack = []sim.Task{sim.Task(i)}
		s.EnterSyncRuntime(0)
	}
	if n := len(thr.Sync); n == 0 || n > 1000 || thr.Sync[n-1] != 9999 {
		t.Errorf("after 10000 entries without ends: %d open constructs, last %d", n, thr.Sync[n-1])
	}
	s.SyncRuntimeAsWork = true
	thr.Sync, thr.Stack = nil, []sim.Task{1}
	s.EnterSyncRuntime(0)
	if len(thr.Sync) != 0 {
		t.Errorf("booked as work: open constructs %v, want none", thr.Sync)
	}
}
