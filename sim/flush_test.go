package sim_test

import (
	"testing"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// A pure MPI process (its code is work outside MPI, from its first event)
// flushes its trace
// buffer three times: 10..30 while it computes, 65..70 inside an MPI call
// (60..80) and 85..95 inside the last call (80..100), which the window cuts
// at 90. The flush in work is taken out of it into Instrumentation (left
// in work with the correction off); the others stay in MPI. A window from
// 15 counts the first flush from 15.
func TestBufferFlushes(t *testing.T) {
	for _, c := range []struct {
		begin                     int64
		keep                      bool
		work, instr, mpi          int64
		flushes, flush, fwork, fm int64
	}{
		{0, false, 40, 20, 30, 3, 30, 20, 10},
		{0, true, 60, 0, 30, 3, 30, 20, 10},
		{15, false, 30, 15, 30, 3, 25, 15, 10},
	} {
		g := newProg(1)
		g.ev(0, trace.FlushBegin, 10)
		g.ev(0, trace.FlushEnd, 30)
		g.ev(0, trace.MPIEnter, 60, 0)
		g.ev(0, trace.FlushBegin, 65)
		g.ev(0, trace.FlushEnd, 70)
		g.ev(0, trace.MPIExit, 80, 0)
		g.ev(0, trace.MPIEnter, 80, 0)
		g.ev(0, trace.FlushBegin, 85)
		g.ev(0, trace.FlushEnd, 95)
		g.ev(0, trace.MPIExit, 100, 0)
		// The initial thread's first event starts the program at 0.
		g.events[0] = append([]trace.Event{{Time: 0, Kind: trace.ThreadBegin, Args: [5]int64{1}}}, g.events[0]...)
		s := sim.New(g.proc(), nil, false)
		s.SetWindow(c.begin, 90)
		s.KeepRecordingCost = c.keep
		if err := s.Run(ompt.NewModel()); err != nil {
			t.Fatal(err)
		}
		noWarnings(t, s)
		tt := s.Breakdown.Threads[0]
		if tt.Work != c.work || tt.Instrumentation != c.instr || tt.MPI != c.mpi || tt.Total() != 90-c.begin {
			t.Errorf("window from %d, keep %v: work %d, instrumentation %d, MPI %d, total %d; want %d, %d, %d, %d",
				c.begin, c.keep, tt.Work, tt.Instrumentation, tt.MPI, tt.Total(), c.work, c.instr, c.mpi, 90-c.begin)
		}
		if tt.Flushes != c.flushes || tt.Flush != c.flush || tt.FlushWork != c.fwork || tt.FlushMPI != c.fm {
			t.Errorf("window from %d, keep %v: %d flushes, %d ns, %d in work, %d in MPI; want %d, %d, %d, %d",
				c.begin, c.keep, tt.Flushes, tt.Flush, tt.FlushWork, tt.FlushMPI, c.flushes, c.flush, c.fwork, c.fm)
		}
	}
}

// Flushes while not working: two threads in a region 0..100, thread 1
// flushes 20..30 in the implicit barrier it waits in from 10 (no task
// ready: idle) and thread 0 flushes 40..60 in the taskwait it waits in
// from 35 for a task it created at 30, which thread 1 runs from 50 (a task
// ready 30..50: overhead 40..50, idle 50..60). Idle and overhead keep
// their time; the report's split is the breakdown's.
func TestBufferFlushesNotWorking(t *testing.T) {
	task := id(0, 4)
	g := newProg(2).region(2, 0)
	g.waitBegin(1, 10)
	g.ev(1, trace.FlushBegin, 20)
	g.ev(1, trace.FlushEnd, 30)
	g.ev(0, trace.TaskCreate, 30, task, implicit(0), ompt.TaskExplicit, 0)
	g.ev(0, trace.SyncBegin, 35, ompt.SyncTaskwait, id(0, 2), implicit(0), 0)
	g.ev(0, trace.SyncWaitBegin, 35, ompt.SyncTaskwait, id(0, 2), implicit(0))
	g.ev(0, trace.FlushBegin, 40)
	g.ev(0, trace.FlushEnd, 60)
	g.ev(1, trace.TaskSchedule, 50, implicit(1), ompt.StatusSwitch, task)
	g.ev(1, trace.TaskSchedule, 80, task, ompt.StatusComplete, implicit(1))
	g.ev(1, trace.SyncWaitEnd, 90, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(1))
	g.ev(1, trace.SyncEnd, 90, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(1), 0)
	g.ev(0, trace.SyncWaitEnd, 80, ompt.SyncTaskwait, id(0, 2), implicit(0))
	g.ev(0, trace.SyncEnd, 80, ompt.SyncTaskwait, id(0, 2), implicit(0), 0)
	g.barrier(0, 80, 90)
	g.end(2, 100)
	s := sim.New(g.proc(), nil, false)
	if err := s.Run(ompt.NewModel()); err != nil {
		t.Fatal(err)
	}
	noWarnings(t, s)
	for th, want := range [][3]int64{{20, 10, 10}, {10, 0, 10}} {
		tt := s.Breakdown.Threads[th]
		if tt.Flushes != 1 || tt.Flush != want[0] || tt.FlushOverhead != want[1] || tt.Flush-tt.FlushWork-tt.FlushMPI-tt.FlushOverhead != want[2] || tt.Instrumentation != 0 {
			t.Errorf("thread %d: %d flushes, %d ns, %d in overhead, %d idle, instrumentation %d; want 1, %d, %d, %d, 0",
				th, tt.Flushes, tt.Flush, tt.FlushOverhead, tt.Flush-tt.FlushWork-tt.FlushMPI-tt.FlushOverhead, tt.Instrumentation, want[0], want[1], want[2])
		}
	}
}

// Flushes that only touch the window's edges are not in it: one ending as
// the window begins (a flush in MPI_Init, cut at the Leave that begins the
// window) and one beginning as it ends were counted, with 0 ns; a flush
// of no length at an edge is in it.
func TestBufferFlushesAtWindowEdges(t *testing.T) {
	g := newProg(1)
	g.ev(0, trace.ThreadBegin, 0, trace.ThreadInitial)
	g.ev(0, trace.FlushBegin, 5)
	g.ev(0, trace.FlushEnd, 10)
	g.ev(0, trace.FlushBegin, 10)
	g.ev(0, trace.FlushEnd, 10)
	g.ev(0, trace.FlushBegin, 90)
	g.ev(0, trace.FlushEnd, 95)
	g.ev(0, trace.MPIEnter, 96, 0)
	g.ev(0, trace.MPIExit, 100, 0)
	s := sim.New(g.proc(), nil, false)
	s.SetWindow(10, 90)
	if err := s.Run(ompt.NewModel()); err != nil {
		t.Fatal(err)
	}
	noWarnings(t, s)
	if tt := s.Breakdown.Threads[0]; tt.Flushes != 1 || tt.Flush != 0 || tt.Work != 80 {
		t.Errorf("%d flushes, %d ns, work %d; want 1 (of no length), 0 ns, 80", tt.Flushes, tt.Flush, tt.Work)
	}
}

// A flush inside a task is not the task's either: one thread creates a
// task at 10 and runs it 20..80 inside a taskwait; the task's thread
// flushes 40..55. Its run time is 45 ns, 60 with the correction off,
// whether the window holds the flush or not (60..100).
func TestBufferFlushInTask(t *testing.T) {
	for _, c := range []struct {
		keep   bool
		window bool
		run    int64
	}{{false, false, 45}, {true, false, 60}, {false, true, 45}} {
		task := id(0, 4)
		g := newProg(1).region(1, 0)
		g.ev(0, trace.TaskCreate, 10, task, implicit(0), ompt.TaskExplicit, 0)
		g.ev(0, trace.SyncBegin, 20, ompt.SyncTaskwait, id(0, 2), implicit(0), 0)
		g.ev(0, trace.SyncWaitBegin, 20, ompt.SyncTaskwait, id(0, 2), implicit(0))
		g.ev(0, trace.TaskSchedule, 20, implicit(0), ompt.StatusSwitch, task)
		g.ev(0, trace.FlushBegin, 40)
		g.ev(0, trace.FlushEnd, 55)
		g.ev(0, trace.TaskSchedule, 80, task, ompt.StatusComplete, implicit(0))
		g.ev(0, trace.SyncWaitEnd, 80, ompt.SyncTaskwait, id(0, 2), implicit(0))
		g.ev(0, trace.SyncEnd, 80, ompt.SyncTaskwait, id(0, 2), implicit(0), 0)
		g.end(1, 100)
		s := sim.New(g.proc(), nil, false)
		s.KeepRecordingCost = c.keep
		if c.window {
			s.SetWindow(60, 100)
		}
		m := ompt.NewModel()
		if err := s.Run(m); err != nil {
			t.Fatal(err)
		}
		noWarnings(t, s)
		tk := m.Task(task)
		if tk == sim.NoTask {
			t.Fatal("the task is unknown")
		}
		if got := s.RunNS(tk); got != c.run {
			t.Errorf("keep %v, window from 60 %v: the task ran %d ns, want %d", c.keep, c.window, got, c.run)
		}
	}
}
