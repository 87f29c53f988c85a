package sim_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// prog builds an in-memory process thread by thread, the way a collector
// would record it.
type prog struct {
	tables trace.Tables
	events [][]trace.Event
	deps_  [][]trace.Dep
}

func newProg(threads int) *prog {
	g := &prog{events: make([][]trace.Event, threads), deps_: make([][]trace.Dep, threads)}
	g.tables.Locations = []trace.Location{{ID: 0, File: "t.c", Line: 1}}
	return g
}

// proc encodes the program as a process, as the loader would hold it.
func (g *prog) proc() *trace.Process {
	p, err := trace.NewProcess(trace.Header{NRanks: 1}, g.tables, g.events, g.deps_)
	if err != nil {
		panic(err)
	}
	return p
}

func (g *prog) ev(th int, k trace.Kind, t int64, args ...int64) *prog {
	e := trace.Event{Time: t, Kind: k}
	copy(e.Args[:], args)
	g.events[th] = append(g.events[th], e)
	return g
}

func (g *prog) deps(th int, t int64, task int64, ds ...trace.Dep) *prog {
	e := trace.Event{Time: t, Kind: trace.TaskDeps}
	e.Args[0] = task
	e.Args[1] = int64(len(ds))
	e.Args[2] = int64(len(g.deps_[th]))
	g.deps_[th] = append(g.deps_[th], ds...)
	g.events[th] = append(g.events[th], e)
	return g
}

// id is a task id created by thread th.
func id(th int, seq int64) int64 { return trace.MakeID(th, seq) }

// region opens a parallel region on threads 0..n-1 at time t: thread 0's
// initial task is id(0,1), the region id(0,2), implicit tasks id(th,3) on
// thread 0 and id(th,1) on the others.
func (g *prog) region(n int, t int64) *prog {
	g.ev(0, trace.ThreadBegin, t, 1)
	g.ev(0, trace.ImplicitTaskBegin, t, 0, id(0, 1), 1, 0, ompt.TaskInitial)
	g.ev(0, trace.ParallelBegin, t, id(0, 2), id(0, 1), int64(n), 0, 0)
	for th := 0; th < n; th++ {
		if th > 0 {
			g.ev(th, trace.ThreadBegin, t, 2)
		}
		g.ev(th, trace.ImplicitTaskBegin, t, id(0, 2), implicit(th), int64(n), int64(th), ompt.TaskImplicit)
	}
	return g
}

func implicit(th int) int64 {
	if th == 0 {
		return id(0, 3)
	}
	return id(th, 1)
}

// end closes the region at time t (barrier already passed).
func (g *prog) end(n int, t int64) *prog {
	for th := 0; th < n; th++ {
		g.ev(th, trace.ImplicitTaskEnd, t, id(0, 2), implicit(th), int64(n), int64(th), ompt.TaskImplicit)
	}
	g.ev(0, trace.ParallelEnd, t, id(0, 2), id(0, 1), 0, 0)
	g.ev(0, trace.ImplicitTaskEnd, t, 0, id(0, 1), 1, 0, ompt.TaskInitial)
	for th := 0; th < n; th++ {
		g.ev(th, trace.ThreadEnd, t)
	}
	return g
}

func (g *prog) barrier(th int, from, to int64) *prog {
	g.ev(th, trace.SyncBegin, from, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(th), 0)
	g.ev(th, trace.SyncWaitBegin, from, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(th))
	g.ev(th, trace.SyncWaitEnd, to, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(th))
	g.ev(th, trace.SyncEnd, to, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(th), 0)
	return g
}

func (g *prog) waitBegin(th int, t int64) *prog {
	g.ev(th, trace.SyncBegin, t, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(th), 0)
	return g.ev(th, trace.SyncWaitBegin, t, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(th))
}

// runInWait has thread th, waiting at the region's barrier from 0 to end,
// run task from..to.
func (g *prog) runInWait(th int, task, from, to, end int64) *prog {
	g.waitBegin(th, 0)
	g.ev(th, trace.TaskSchedule, from, implicit(th), ompt.StatusSwitch, task)
	g.ev(th, trace.TaskSchedule, to, task, ompt.StatusComplete, implicit(th))
	return g.waitEnd(th, end)
}

func (g *prog) waitEnd(th int, t int64) *prog {
	g.ev(th, trace.SyncWaitEnd, t, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(th))
	return g.ev(th, trace.SyncEnd, t, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(th), 0)
}

func (g *prog) run(t *testing.T, strict bool) (*sim.Sim, *ompt.Model, error) {
	t.Helper()
	s := sim.New(g.proc(), nil, strict)
	m := ompt.NewModel()
	err := s.Run(m)
	return s, m, err
}

func totals(s *sim.Sim) (work, mpi, over, idle int64) {
	for _, tt := range s.Breakdown.Threads {
		work += tt.Work
		mpi += tt.MPI
		over += tt.Overhead + tt.OverheadSerial
		idle += tt.Idle + tt.IdleSerial
	}
	return
}

func wantBreakdown(t *testing.T, s *sim.Sim, work, mpi, over, idle int64) {
	t.Helper()
	w, m, o, i := totals(s)
	if w != work || m != mpi || o != over || i != idle {
		t.Errorf("breakdown work/mpi/overhead/idle = %d/%d/%d/%d, want %d/%d/%d/%d (warnings %v)", w, m, o, i, work, mpi, over, idle, s.Warn.Examples)
	}
	for th, tt := range s.Breakdown.Threads {
		if tt.Total() != s.End-s.Begin {
			t.Errorf("thread %d accounts %d ns of a %d ns window", th, tt.Total(), s.End-s.Begin)
		}
	}
}

func state(s *sim.Sim, m *ompt.Model, task int64) sim.TaskState {
	return s.Tasks[m.Task(task)].State
}

func noWarnings(t *testing.T, s *sim.Sim) {
	t.Helper()
	if s.Warn.Total() != 0 {
		t.Errorf("unexpected warnings: %v", s.Warn.Examples)
	}
}

func TestLegalTransitionsAreFig2(t *testing.T) {
	want := map[[2]sim.TaskState]bool{}
	for _, e := range [][2]sim.TaskState{
		{sim.Initialized, sim.Ready}, {sim.Ready, sim.Cancelled}, {sim.Ready, sim.Running}, {sim.Suspended, sim.Ready},
		{sim.Cancelled, sim.Detached}, {sim.Cancelled, sim.Completed}, {sim.Running, sim.Ready}, {sim.Running, sim.Suspended},
		{sim.Running, sim.Cancelled}, {sim.Running, sim.Executed}, {sim.Executed, sim.Detached}, {sim.Executed, sim.Completed},
		{sim.Detached, sim.Completed}, {sim.Completed, sim.Deleted}, {sim.NotCreated, sim.Initialized},
	} {
		want[e] = true
	}
	for a := sim.NotCreated; a <= sim.Deleted; a++ {
		for b := sim.NotCreated; b <= sim.Deleted; b++ {
			if sim.Legal(a, b) != want[[2]sim.TaskState{a, b}] {
				t.Errorf("Legal(%s, %s) = %v", a, b, sim.Legal(a, b))
			}
		}
	}
}

// ① → ② → ⑤ → ⑥ → ⑧, with a ready task waiting while thread 1 idles: that
// wait is overhead, not idleness.
func TestCreateRunComplete(t *testing.T) {
	g := newProg(2).region(2, 0)
	task := id(0, 4)
	g.ev(0, trace.TaskCreate, 10, task, implicit(0), ompt.TaskExplicit, 0)
	g.barrier(0, 10, 100)
	g.runInWait(1, task, 30, 80, 100) // thread 1 arrived first; the task is ready 10..30
	g.end(2, 100)
	s, m, err := g.run(t, false)
	if err != nil {
		t.Fatal(err)
	}
	noWarnings(t, s)
	if st := state(s, m, task); st != sim.Completed {
		t.Errorf("task state %s", st)
	}
	if d := s.RunNS(m.Task(task)); d != 50 {
		t.Errorf("task ran %d ns, want 50", d)
	}
	// The barrier is released at 80 (team arrived, last task done), so both
	// implicit tasks are ready 80..100: runtime overhead. Thread 0: work
	// 0..10, overhead 10..30, idle 30..80, overhead 80..100. Thread 1: idle
	// 0..10, overhead 10..30, work 30..80, overhead 80..100.
	wantBreakdown(t, s, 10+50, 0, 20+20+20+20, 50+10)
}

// in after out: the reader waits (①) until the writer completes, then it
// is ready (①→②); while ready and no thread runs it, that is overhead.
func TestDependencesReleaseSuccessor(t *testing.T) {
	g := newProg(2).region(2, 0)
	a, b := id(0, 4), id(0, 5)
	g.ev(0, trace.TaskCreate, 0, a, implicit(0), ompt.TaskExplicit, 0)
	g.deps(0, 0, a, trace.Dep{Addr: 64, Type: trace.DepInout})
	g.ev(0, trace.TaskCreate, 0, b, implicit(0), ompt.TaskExplicit, 0)
	g.deps(0, 0, b, trace.Dep{Addr: 64, Type: trace.DepIn})
	g.ev(0, trace.SyncBegin, 0, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(0), 0)
	g.ev(0, trace.SyncWaitBegin, 0, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(0))
	g.ev(0, trace.TaskSchedule, 0, implicit(0), ompt.StatusSwitch, a)
	g.ev(0, trace.TaskSchedule, 40, a, ompt.StatusComplete, implicit(0))
	g.ev(0, trace.SyncWaitEnd, 100, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(0))
	g.ev(0, trace.SyncEnd, 100, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(0), 0)
	g.ev(1, trace.SyncBegin, 0, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(1), 0)
	g.ev(1, trace.SyncWaitBegin, 0, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(1))
	g.ev(1, trace.TaskSchedule, 50, implicit(1), ompt.StatusSwitch, b) // ready 40..50
	g.ev(1, trace.TaskSchedule, 90, b, ompt.StatusComplete, implicit(1))
	g.ev(1, trace.SyncWaitEnd, 100, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(1))
	g.ev(1, trace.SyncEnd, 100, ompt.SyncBarrierImplicitParallel, id(0, 2), implicit(1), 0)
	g.end(2, 100)
	s, _, err := g.run(t, false)
	if err != nil {
		t.Fatal(err)
	}
	noWarnings(t, s)
	// Thread 1 idles 0..40 (b not ready), overhead 40..50; thread 0 overhead
	// 40..50 too, then idle; barrier released at 90 (last task done): ready
	// implicit tasks 90..100 are overhead for both.
	wantBreakdown(t, s, 40+40, 0, 10+10+10+10, 40+40+0)
}

func TestDependenceSemantics(t *testing.T) {
	// Each case: dependence types of tasks 1..n on one address, and the
	// expected predecessor sets.
	type tc struct {
		name  string
		types []uint8
		preds [][]int
	}
	for _, c := range []tc{
		{"raw", []uint8{trace.DepOut, trace.DepIn, trace.DepIn}, [][]int{nil, {0}, {0}}},
		{"war", []uint8{trace.DepIn, trace.DepIn, trace.DepInout}, [][]int{nil, nil, {0, 1}}},
		{"waw", []uint8{trace.DepInout, trace.DepOut}, [][]int{nil, {0}}},
		{"inoutset", []uint8{trace.DepOut, trace.DepInoutset, trace.DepInoutset, trace.DepIn}, [][]int{nil, {0}, {0}, {1, 2}}},
		{"mutexinoutset", []uint8{trace.DepIn, trace.DepMutexInoutset, trace.DepMutexInoutset, trace.DepOut}, [][]int{nil, {0}, {0}, {1, 2}}},
		{"set after set of other kind", []uint8{trace.DepInoutset, trace.DepMutexInoutset}, [][]int{nil, {0}}},
	} {
		g := newProg(1).region(1, 0)
		n := len(c.types)
		for i, ty := range c.types {
			tk := id(0, int64(4+i))
			g.ev(0, trace.TaskCreate, 1, tk, implicit(0), ompt.TaskExplicit, 0)
			g.deps(0, 1, tk, trace.Dep{Addr: 0x1000, Type: ty})
		}
		g.ev(0, trace.SyncBegin, 1, ompt.SyncTaskwait, id(0, 2), implicit(0), 0)
		g.ev(0, trace.SyncWaitBegin, 1, ompt.SyncTaskwait, id(0, 2), implicit(0))
		// Run them in order; record which are ready at each step.
		clock := int64(1)
		for i := 0; i < n; i++ {
			clock += 10
			g.ev(0, trace.TaskSchedule, clock, implicit(0), ompt.StatusSwitch, id(0, int64(4+i)))
			clock += 10
			g.ev(0, trace.TaskSchedule, clock, id(0, int64(4+i)), ompt.StatusComplete, implicit(0))
		}
		g.ev(0, trace.SyncWaitEnd, clock, ompt.SyncTaskwait, id(0, 2), implicit(0))
		g.ev(0, trace.SyncEnd, clock, ompt.SyncTaskwait, id(0, 2), implicit(0), 0)
		g.end(1, clock)
		// A pass that records, after creation, who is ready; with the
		// edges recorded (as the driver runs it), a waiting task is
		// registered with one predecessor (Sim.AddEdges), the same.
		for _, record := range []bool{false, true} {
			rec := &readyAfterCreation{ids: n}
			s := sim.New(g.proc(), nil, false)
			s.RecordDeps = record
			m := ompt.NewModel()
			if err := s.Run(m, rec); err != nil {
				t.Fatal(err)
			}
			noWarnings(t, s)
			for i := 0; i < n; i++ {
				free := len(c.preds[i]) == 0
				if rec.ready[i] != free {
					t.Errorf("%s, recorded %v: task %d ready at creation = %v, want %v", c.name, record, i, rec.ready[i], free)
				}
				if got := rec.missing[i]; got != int32(len(c.preds[i])) {
					t.Errorf("%s, recorded %v: task %d has %d predecessors, want %d (%v)", c.name, record, i, got, len(c.preds[i]), c.preds[i])
				}
			}
		}
	}
}

type readyAfterCreation struct {
	ids     int
	ready   []bool
	missing []int32
	done    bool
}

func (r *readyAfterCreation) Before(s *sim.Sim, e *trace.Event, th int, dt int64) {
	if r.done || e == nil || e.Kind != trace.SyncBegin {
		return
	}
	r.done = true
	// Tasks 4.. of thread 0 are the dense indices after the three ids
	// (initial, region, implicit) thread 0 made first.
	for i := 0; i < r.ids; i++ {
		k := 3 + i
		r.ready = append(r.ready, s.Tasks[k].State == sim.Ready)
		r.missing = append(r.missing, s.Missing(sim.Task(k)))
	}
}
func (r *readyAfterCreation) After(s *sim.Sim, e *trace.Event, th int) {}
func (r *readyAfterCreation) Finish(s *sim.Sim)                        {}

// taskwait: ⑤→③ at the wait, ③→② when the last child completes, ②→⑤ at
// the wait's end: the gap between the last two is overhead.
func TestTaskwait(t *testing.T) {
	g := newProg(1).region(1, 0)
	c1, c2 := id(0, 4), id(0, 5)
	g.ev(0, trace.TaskCreate, 0, c1, implicit(0), ompt.TaskExplicit, 0)
	g.ev(0, trace.TaskCreate, 0, c2, implicit(0), ompt.TaskExplicit, 0)
	g.ev(0, trace.SyncBegin, 10, ompt.SyncTaskwait, id(0, 2), implicit(0), 0)
	g.ev(0, trace.SyncWaitBegin, 10, ompt.SyncTaskwait, id(0, 2), implicit(0))
	g.ev(0, trace.TaskSchedule, 10, implicit(0), ompt.StatusSwitch, c1)
	g.ev(0, trace.TaskSchedule, 30, c1, ompt.StatusComplete, implicit(0))
	g.ev(0, trace.TaskSchedule, 30, implicit(0), ompt.StatusSwitch, c2)
	g.ev(0, trace.TaskSchedule, 50, c2, ompt.StatusComplete, implicit(0))
	g.ev(0, trace.SyncWaitEnd, 55, ompt.SyncTaskwait, id(0, 2), implicit(0))
	g.ev(0, trace.SyncEnd, 55, ompt.SyncTaskwait, id(0, 2), implicit(0), 0)
	g.end(1, 60)
	s, _, err := g.run(t, false)
	if err != nil {
		t.Fatal(err)
	}
	noWarnings(t, s)
	// work: 0..10 implicit, 10..50 children, 55..60 implicit; 50..55 overhead.
	wantBreakdown(t, s, 10+40+5, 0, 5, 0)
}

// An undeferred child suspends its parent (⑤→③) and the parent resumes
// (③→②→⑤) when the child completes.
func TestUndeferredChild(t *testing.T) {
	g := newProg(1).region(1, 0)
	parent, child := id(0, 4), id(0, 5)
	g.ev(0, trace.TaskCreate, 0, parent, implicit(0), ompt.TaskExplicit, 0)
	g.ev(0, trace.TaskSchedule, 0, implicit(0), ompt.StatusSwitch, parent)
	g.ev(0, trace.TaskCreate, 10, child, parent, ompt.TaskExplicit|ompt.TaskUndeferred, 0)
	g.ev(0, trace.TaskSchedule, 10, parent, ompt.StatusSwitch, child)
	var mid sim.TaskState
	g.ev(0, trace.TaskSchedule, 40, child, ompt.StatusComplete, parent)
	g.ev(0, trace.TaskSchedule, 50, parent, ompt.StatusComplete, implicit(0))
	g.end(1, 50)
	probe := &stateAt{when: 20, task: 3, out: &mid}
	s := sim.New(g.proc(), nil, false)
	m := ompt.NewModel()
	if err := s.Run(m, probe); err != nil {
		t.Fatal(err)
	}
	noWarnings(t, s)
	if mid != sim.Suspended {
		t.Errorf("parent during its undeferred child: %s, want suspended", mid)
	}
	if d := s.RunNS(m.Task(parent)); d != 20 {
		t.Errorf("parent ran %d ns, want 20 (10 before and 10 after the child)", d)
	}
	wantBreakdown(t, s, 50, 0, 0, 0)
}

// stateAt records a task's state at the first event at or after when.
type stateAt struct {
	when int64
	task sim.Task
	out  *sim.TaskState
	done bool
}

func (p *stateAt) Before(s *sim.Sim, e *trace.Event, th int, dt int64) {
	if !p.done && e != nil && e.Time >= p.when {
		*p.out = s.Tasks[p.task].State
		p.done = true
	}
}
func (p *stateAt) After(s *sim.Sim, e *trace.Event, th int) {}
func (p *stateAt) Finish(s *sim.Sim)                        {}

// detach: ⑥→⑦ at the end of execution, ⑦→⑧ at fulfill, which is when its
// successor becomes ready.
func TestDetach(t *testing.T) {
	g := newProg(1).region(1, 0)
	a, b := id(0, 4), id(0, 5)
	g.ev(0, trace.TaskCreate, 0, a, implicit(0), ompt.TaskExplicit, 0)
	g.deps(0, 0, a, trace.Dep{Addr: 8, Type: trace.DepOut})
	g.ev(0, trace.TaskCreate, 0, b, implicit(0), ompt.TaskExplicit, 0)
	g.deps(0, 0, b, trace.Dep{Addr: 8, Type: trace.DepIn})
	g.ev(0, trace.TaskSchedule, 0, implicit(0), ompt.StatusSwitch, a)
	g.ev(0, trace.TaskSchedule, 10, a, ompt.StatusDetach, implicit(0))
	g.ev(0, trace.SyncBegin, 10, ompt.SyncTaskwait, id(0, 2), implicit(0), 0)
	g.ev(0, trace.SyncWaitBegin, 10, ompt.SyncTaskwait, id(0, 2), implicit(0))
	g.ev(0, trace.DetachFulfill, 30, a)
	g.ev(0, trace.TaskSchedule, 35, implicit(0), ompt.StatusSwitch, b)
	g.ev(0, trace.TaskSchedule, 45, b, ompt.StatusComplete, implicit(0))
	g.ev(0, trace.SyncWaitEnd, 45, ompt.SyncTaskwait, id(0, 2), implicit(0))
	g.ev(0, trace.SyncEnd, 45, ompt.SyncTaskwait, id(0, 2), implicit(0), 0)
	g.end(1, 45)
	var mid sim.TaskState
	s := sim.New(g.proc(), nil, false)
	m := ompt.NewModel()
	if err := s.Run(m, &stateAt{when: 20, task: m2(3), out: &mid}); err != nil {
		t.Fatal(err)
	}
	noWarnings(t, s)
	if mid != sim.Detached {
		t.Errorf("detached task before fulfill: %s", mid)
	}
	if st := state(s, m, a); st != sim.Completed {
		t.Errorf("after fulfill: %s", st)
	}
	// idle 10..30 (b waits for a's event), overhead 30..35 (b ready).
	wantBreakdown(t, s, 10+10, 0, 5, 20)
}

func m2(k sim.Task) sim.Task { return k }

// A discarded task (cancel taskgroup) goes ② → ④ → ⑧ and releases its
// successors.
func TestCancelDiscarded(t *testing.T) {
	g := newProg(1).region(1, 0)
	a := id(0, 4)
	g.ev(0, trace.TaskCreate, 0, a, implicit(0), ompt.TaskExplicit, 0)
	g.ev(0, trace.Cancel, 5, a, ompt.CancelTaskgroup|ompt.CancelDiscardedTask, 0)
	g.end(1, 10)
	s, m, err := g.run(t, false)
	if err != nil {
		t.Fatal(err)
	}
	noWarnings(t, s)
	if st := state(s, m, a); st != sim.Completed {
		t.Errorf("discarded task: %s", st)
	}
	wantBreakdown(t, s, 10, 0, 0, 0)
}

// A taskgroup waits for descendants, grandchildren included.
func TestTaskgroup(t *testing.T) {
	g := newProg(2).region(2, 0)
	child, grand := id(0, 4), id(1, 2)
	g.ev(0, trace.SyncBegin, 0, ompt.SyncTaskgroup, id(0, 2), implicit(0), 0)
	g.ev(0, trace.TaskCreate, 0, child, implicit(0), ompt.TaskExplicit, 0)
	g.ev(0, trace.SyncWaitBegin, 5, ompt.SyncTaskgroup, id(0, 2), implicit(0))
	g.ev(0, trace.SyncWaitEnd, 60, ompt.SyncTaskgroup, id(0, 2), implicit(0))
	g.ev(0, trace.SyncEnd, 60, ompt.SyncTaskgroup, id(0, 2), implicit(0), 0)
	g.barrier(0, 60, 60)
	// Thread 1 waits in the region's barrier and runs the child there, which
	// creates a grandchild and finishes; the grandchild runs 30..50; the
	// group's waiter is ready from 50.
	g.waitBegin(1, 0)
	g.ev(1, trace.TaskSchedule, 10, implicit(1), ompt.StatusSwitch, child)
	g.ev(1, trace.TaskCreate, 20, grand, child, ompt.TaskExplicit, 0)
	g.ev(1, trace.TaskSchedule, 25, child, ompt.StatusComplete, implicit(1))
	g.ev(1, trace.TaskSchedule, 30, implicit(1), ompt.StatusSwitch, grand)
	g.ev(1, trace.TaskSchedule, 50, grand, ompt.StatusComplete, implicit(1))
	g.waitEnd(1, 60)
	g.end(2, 60)
	var mid sim.TaskState
	s := sim.New(g.proc(), nil, false)
	m := ompt.NewModel()
	if err := s.Run(m, &stateAt{when: 40, task: 2, out: &mid}); err != nil { // implicit(0) is dense 2
		t.Fatal(err)
	}
	noWarnings(t, s)
	if mid != sim.Suspended {
		t.Errorf("group waiter while the grandchild runs: %s", mid)
	}
	// Ready: child 0..10, grandchild 20..30, the waiter 50..60.
	// thread 0: work 0..5, overhead 5..10, idle 10..20, overhead 20..30, idle
	// 30..50, overhead 50..60. thread 1: overhead 0..10, work 10..25,
	// overhead 25..30, work 30..50, overhead 50..60.
	wantBreakdown(t, s, 5+35, 0, 25+25, 30)
}

// yield: ⑤→②; the task stays on its thread and resumes later.
func TestYield(t *testing.T) {
	g := newProg(1).region(1, 0)
	a, b := id(0, 4), id(0, 5)
	g.ev(0, trace.TaskCreate, 0, a, implicit(0), ompt.TaskExplicit, 0)
	g.ev(0, trace.TaskCreate, 0, b, implicit(0), ompt.TaskExplicit, 0)
	g.ev(0, trace.TaskSchedule, 0, implicit(0), ompt.StatusSwitch, a)
	g.ev(0, trace.TaskSchedule, 10, a, ompt.StatusYield, b)
	g.ev(0, trace.TaskSchedule, 20, b, ompt.StatusComplete, a)
	g.ev(0, trace.TaskSchedule, 30, a, ompt.StatusComplete, implicit(0))
	g.end(1, 30)
	var mid sim.TaskState
	s := sim.New(g.proc(), nil, false)
	m := ompt.NewModel()
	if err := s.Run(m, &stateAt{when: 15, task: 3, out: &mid}); err != nil {
		t.Fatal(err)
	}
	noWarnings(t, s)
	if mid != sim.Ready {
		t.Errorf("yielded task: %s, want ready", mid)
	}
	wantBreakdown(t, s, 30, 0, 0, 0)
}

// Invalid sequences are counted warnings, never panics; --strict makes the
// first one an error.
func TestInvalidSequences(t *testing.T) {
	build := func() *prog {
		g := newProg(1).region(1, 0)
		g.ev(0, trace.TaskSchedule, 5, implicit(0), ompt.StatusSwitch, id(0, 99)) // never created
		g.ev(0, trace.TaskCreate, 6, id(0, 4), implicit(0), ompt.TaskExplicit, 0)
		g.ev(0, trace.TaskSchedule, 7, implicit(0), ompt.StatusSwitch, id(0, 4))
		g.ev(0, trace.TaskSchedule, 8, id(0, 4), ompt.StatusComplete, implicit(0))
		g.ev(0, trace.TaskSchedule, 9, id(0, 4), ompt.StatusComplete, implicit(0)) // completed twice
		g.ev(0, trace.MPIExit, 9, 0)                                               // exit without enter
		g.end(1, 10)
		return g
	}
	s, _, err := build().run(t, false)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(s.Warn.Examples, "\n")
	for _, want := range []string{"unknown task", "completed twice", "unbalanced MPI"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q warning in:\n%s", want, all)
		}
	}
	if _, _, err := build().run(t, true); err == nil || !strings.Contains(err.Error(), "--strict") {
		t.Errorf("strict: %v", err)
	}
}

// A task waiting for a remote dependence is not ready until it arrives.
func TestRemoteDependence(t *testing.T) {
	g := newProg(1).region(1, 0)
	a := id(0, 4)
	g.ev(0, trace.TaskCreate, 0, a, implicit(0), ompt.TaskExplicit, 0)
	g.ev(0, trace.SyncBegin, 0, ompt.SyncTaskwait, id(0, 2), implicit(0), 0)
	g.ev(0, trace.SyncWaitBegin, 0, ompt.SyncTaskwait, id(0, 2), implicit(0))
	g.ev(0, trace.RemoteDepIn, 40, a, 1, id(0, 7))
	g.ev(0, trace.TaskSchedule, 40, implicit(0), ompt.StatusSwitch, a)
	g.ev(0, trace.TaskSchedule, 60, a, ompt.StatusComplete, implicit(0))
	g.ev(0, trace.SyncWaitEnd, 60, ompt.SyncTaskwait, id(0, 2), implicit(0))
	g.ev(0, trace.SyncEnd, 60, ompt.SyncTaskwait, id(0, 2), implicit(0), 0)
	g.end(1, 60)
	s, _, err := g.run(t, false)
	if err != nil {
		t.Fatal(err)
	}
	noWarnings(t, s)
	wantBreakdown(t, s, 20, 0, 0, 40)
}

// mpiProg: thread 0 works 0..10, is in MPI 10..30 and waits at the barrier
// 30..40; thread 1 works 0..5 and waits 5..40.
func mpiProg() *prog {
	g := newProg(2).region(2, 0)
	g.ev(0, trace.MPIEnter, 10, 0)
	g.ev(0, trace.MPIExit, 30, 0)
	g.barrier(0, 30, 40)
	g.barrier(1, 5, 40)
	return g.end(2, 40)
}

// MPI time wins over work: a thread inside an MPI call is not working.
func TestMPITime(t *testing.T) {
	s, _, err := mpiProg().run(t, false)
	if err != nil {
		t.Fatal(err)
	}
	noWarnings(t, s)
	// thread 0: work 0..10, MPI 10..30, wait 30..40 (released at 30); thread 1
	// work 0..5, wait 5..40. Barrier release at 30 makes both ready: overhead
	// 30..40 on both.
	wantBreakdown(t, s, 10+5, 20, 10+10, 25)
}

func TestModelIDRoundTrip(t *testing.T) {
	g := newProg(3).region(3, 0)
	g.ev(1, trace.TaskCreate, 1, id(1, 2), implicit(1), ompt.TaskExplicit, 0)
	g.ev(2, trace.TaskCreate, 1, id(2, 5), implicit(2), ompt.TaskExplicit, 0)
	g.end(3, 2)
	s, m, err := g.run(t, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []int64{id(0, 1), id(0, 3), id(1, 1), id(1, 2), id(2, 5)} {
		if got := m.ID(m.Task(want)); got != want {
			t.Errorf("ID(Task(%#x)) = %#x", want, got)
		}
	}
	_ = s
}

// LLVM libomp reports a worker's implicit-task end (and may report its
// barrier exit) after the region ended: the region's end closes it, the
// worker is idle outside any region from then on, and the late events
// raise no warning.
func TestLateWorkerImplicitEnd(t *testing.T) {
	g := newProg(2).region(2, 0)
	g.barrier(0, 10, 20)
	g.waitBegin(1, 15)
	g.ev(0, trace.ImplicitTaskEnd, 20, id(0, 2), implicit(0), 2, 0, ompt.TaskImplicit)
	g.ev(0, trace.ParallelEnd, 20, id(0, 2), id(0, 1), 0, 0)
	// Serial work on the master 20..50, then a second region.
	g.ev(0, trace.ParallelBegin, 50, id(0, 4), id(0, 1), 2, 0, 0)
	g.ev(0, trace.ImplicitTaskBegin, 50, id(0, 4), id(0, 5), 2, 0, ompt.TaskImplicit)
	// The worker wakes at 25 and its implicit task ends only at the next fork.
	g.waitEnd(1, 25)
	g.ev(1, trace.ImplicitTaskEnd, 50, 0, implicit(1), 0, 1, ompt.TaskImplicit)
	g.ev(1, trace.ImplicitTaskBegin, 50, id(0, 4), id(1, 2), 2, 1, ompt.TaskImplicit)
	g.ev(1, trace.SyncBegin, 60, ompt.SyncBarrierImplicit, id(0, 4), id(1, 2), 0)
	g.ev(1, trace.SyncWaitBegin, 60, ompt.SyncBarrierImplicit, id(0, 4), id(1, 2))
	g.ev(0, trace.SyncBegin, 70, ompt.SyncBarrierImplicit, id(0, 4), id(0, 5), 0)
	g.ev(0, trace.SyncWaitBegin, 70, ompt.SyncBarrierImplicit, id(0, 4), id(0, 5))
	g.ev(0, trace.SyncWaitEnd, 70, ompt.SyncBarrierImplicit, id(0, 4), id(0, 5))
	g.ev(0, trace.SyncEnd, 70, ompt.SyncBarrierImplicit, id(0, 4), id(0, 5), 0)
	g.ev(1, trace.SyncWaitEnd, 70, ompt.SyncBarrierImplicit, id(0, 4), id(1, 2))
	g.ev(1, trace.SyncEnd, 70, ompt.SyncBarrierImplicit, id(0, 4), id(1, 2), 0)
	g.ev(0, trace.ImplicitTaskEnd, 70, id(0, 4), id(0, 5), 2, 0, ompt.TaskImplicit)
	g.ev(0, trace.ParallelEnd, 70, id(0, 4), id(0, 1), 0, 0)
	g.ev(0, trace.ImplicitTaskEnd, 80, 0, id(0, 1), 1, 0, ompt.TaskInitial)
	g.ev(0, trace.ThreadEnd, 80)
	g.ev(1, trace.ImplicitTaskEnd, 80, 0, id(1, 2), 0, 1, ompt.TaskImplicit)
	g.ev(1, trace.ThreadEnd, 80)
	s, _, err := g.run(t, false)
	if err != nil {
		t.Fatal(err)
	}
	noWarnings(t, s)
	w1 := s.Breakdown.Threads[1]
	// Worker: work 0..15 and 50..60; in region 1 it waits 15..20 (released at
	// 15, so ready: overhead); serial idle 20..50 and 70..80; region 2
	// barrier 60..70 (released at 70): idle.
	if w1.Work != 25 || w1.IdleSerial != 40 || w1.Overhead != 5 || w1.Idle != 10 {
		t.Errorf("worker %+v", w1)
	}
}

// The window cuts the accounting, not the simulation: TestCreateRunComplete's
// program seen through [20, 90] keeps the states of its whole run, and a
// window wider than the trace counts the time outside as serial idleness.
func TestWindow(t *testing.T) {
	prog := func() *prog {
		g := newProg(2).region(2, 0)
		task := id(0, 4)
		g.ev(0, trace.TaskCreate, 10, task, implicit(0), ompt.TaskExplicit, 0)
		g.barrier(0, 10, 100)
		g.runInWait(1, task, 30, 80, 100)
		return g.end(2, 100)
	}
	for _, c := range []struct {
		begin, end            int64
		work, mpi, over, idle int64
	}{
		{0, 100, 10 + 50, 0, 80, 50 + 10},
		// thread 0: overhead 20..30, idle 30..80, overhead 80..90; thread
		// 1: overhead 20..30, work 30..80, overhead 80..90
		{20, 90, 50, 0, 40, 50},
		// a window inside one interval: both threads ready-waiting 12..25
		{12, 25, 0, 0, 26, 0},
		{-10, 110, 10 + 50, 0, 80, 50 + 10 + 40},
	} {
		g := prog()
		s := sim.New(g.proc(), nil, false)
		s.SetWindow(c.begin, c.end)
		if err := s.Run(ompt.NewModel()); err != nil {
			t.Fatal(err)
		}
		noWarnings(t, s)
		t.Run(fmt.Sprintf("%d..%d", c.begin, c.end), func(t *testing.T) {
			wantBreakdown(t, s, c.work, c.mpi, c.over, c.idle)
		})
	}
}

// Fragment weights count only their part inside the window.
func TestWindowFragments(t *testing.T) {
	s := sim.New(mpiProg().proc(), nil, false)
	s.SetWindow(15, 35)
	f := sim.NewFragPass(nil)
	if err := s.Run(ompt.NewModel(), f); err != nil {
		t.Fatal(err)
	}
	var w [2]int64
	f.F.UnpackWeights(nil)
	for n := 0; n < f.F.Len(); n++ {
		if th := f.F.Attr(int32(n)).Thread; th >= 0 {
			w[th] += f.F.Weight[n]
		}
		if k := f.F.Attr(int32(n)).Kind; k == sim.FragMPI && f.F.Weight[n] != 15 {
			t.Errorf("MPI fragment weighs %d, want 15 (15..30)", f.F.Weight[n])
		}
	}
	if w != [2]int64{15, 0} {
		t.Errorf("fragment weights per thread %v, want [15 0]", w)
	}
}

// An untied task as LLVM libomp runs it: its stub starts on thread 0 and
// switches back to the implicit task below it (re-queued, ⑤→②), and its
// body runs later on thread 1. The same holds for a task that yields to
// the task below it. One task, ready while queued, no warning, one
// fragment weighing both pieces.
func TestUntiedRequeue(t *testing.T) {
	for _, status := range []int64{ompt.StatusSwitch, ompt.StatusYield} {
		g := newProg(2).region(2, 0)
		a := id(0, 4)
		g.ev(0, trace.TaskCreate, 0, a, implicit(0), ompt.TaskExplicit|ompt.TaskUntied, 0)
		g.waitBegin(0, 5)
		g.ev(0, trace.TaskSchedule, 10, implicit(0), ompt.StatusSwitch, a)
		g.ev(0, trace.TaskSchedule, 12, a, status, implicit(0))
		g.waitEnd(0, 80)
		g.runInWait(1, a, 20, 70, 80)
		g.end(2, 80)
		var mid sim.TaskState
		s := sim.New(g.proc(), nil, false)
		m := ompt.NewModel()
		fp := sim.NewFragPass(nil)
		if err := s.Run(m, &stateAt{when: 15, task: 3, out: &mid}, fp); err != nil { // a is dense 3
			t.Fatal(err)
		}
		noWarnings(t, s)
		if mid != sim.Ready {
			t.Errorf("status %d: re-queued task is %s, want ready", status, mid)
		}
		tk := s.Tasks[m.Task(a)]
		if tk.State != sim.Completed || s.RunNS(m.Task(a)) != 52 || s.Started(m.Task(a)) != 10 {
			t.Errorf("status %d: task %s ran %d ns from %d, want completed, 52 ns from 10", status, tk.State, s.RunNS(m.Task(a)), s.Started(m.Task(a)))
		}
		// thread 0: work 0..5, overhead 5..10 (a ready), work 10..12 (stub),
		// overhead 12..20 (a queued), idle 20..70, overhead 70..80 (barrier
		// released). thread 1: overhead 0..10, idle 10..12, overhead
		// 12..20, work 20..70, overhead 70..80.
		wantBreakdown(t, s, 5+2+50, 0, 5+8+10+10+8+10, 50+2)
		f := &fp.F
		f.UnpackWeights(nil)
		first, last := f.FirstOf(m.Task(a)), f.LastOf(m.Task(a))
		if first != last || first < 0 {
			t.Fatalf("status %d: task fragments %d..%d, want one", status, first, last)
		}
		if a := f.Attr(first); f.Weight[first] != 52 || a.Thread != 1 || a.Start != 18 {
			t.Errorf("status %d: fragment weight %d thread %d start %d, want 52, 1, 18", status, f.Weight[first], a.Thread, a.Start)
		}
	}
}

// An untied task switched out at its own scheduling point (a runtime that
// switches to the new child): the child completes and the thread returns to
// the implicit task below, leaving the parent re-queued; the parent resumes
// on the other thread. No warning; the parent is ready while queued.
func TestUntiedSwitchedAtCreation(t *testing.T) {
	g := newProg(2).region(2, 0)
	a, c := id(0, 4), id(1, 2)
	g.ev(0, trace.TaskCreate, 0, a, implicit(0), ompt.TaskExplicit|ompt.TaskUntied, 0)
	g.waitBegin(0, 0)
	g.ev(0, trace.TaskSchedule, 0, implicit(0), ompt.StatusSwitch, a)
	g.ev(0, trace.TaskCreate, 10, c, a, ompt.TaskExplicit|ompt.TaskUntied, 0)
	g.ev(0, trace.TaskSchedule, 10, a, ompt.StatusSwitch, c)
	g.ev(0, trace.TaskSchedule, 30, c, ompt.StatusComplete, implicit(0))
	g.waitEnd(0, 60)
	g.runInWait(1, a, 40, 60, 60)
	g.end(2, 60)
	var mid sim.TaskState
	s := sim.New(g.proc(), nil, false)
	m := ompt.NewModel()
	if err := s.Run(m, &stateAt{when: 35, task: 3, out: &mid}); err != nil { // a is dense 3
		t.Fatal(err)
	}
	noWarnings(t, s)
	if mid != sim.Ready {
		t.Errorf("switched-out parent at 35: %s, want ready", mid)
	}
	if tk := s.Tasks[m.Task(a)]; tk.State != sim.Completed || s.RunNS(m.Task(a)) != 10+20 {
		t.Errorf("parent %s ran %d ns, want completed after 30", tk.State, s.RunNS(m.Task(a)))
	}
	// thread 0: work 0..30 (a, then c), overhead 30..40 (a queued), idle
	// 40..60. thread 1: idle 0..30 (a, then c running, a suspended: nothing
	// ready), overhead 30..40, work 40..60.
	wantBreakdown(t, s, 30+20, 0, 10+10, 20+30)
}

// The fulfil statuses of task_schedule (a producer other than the
// collector, which records them as detach_fulfill) come from
// omp_fulfill_event with no next task: early marks the running task
// fulfilled, late completes the detached one.
func TestFulfilStatuses(t *testing.T) {
	g := newProg(1).region(1, 0)
	a, b := id(0, 4), id(0, 5)
	g.ev(0, trace.TaskCreate, 0, a, implicit(0), ompt.TaskExplicit, 0)
	g.ev(0, trace.TaskCreate, 0, b, implicit(0), ompt.TaskExplicit, 0)
	g.ev(0, trace.TaskSchedule, 0, implicit(0), ompt.StatusSwitch, a)
	g.ev(0, trace.TaskSchedule, 5, a, ompt.StatusEarlyFulfill, 0)
	g.ev(0, trace.TaskSchedule, 10, a, ompt.StatusComplete, implicit(0))
	g.ev(0, trace.TaskSchedule, 10, implicit(0), ompt.StatusSwitch, b)
	g.ev(0, trace.TaskSchedule, 20, b, ompt.StatusDetach, implicit(0))
	g.ev(0, trace.TaskSchedule, 25, b, ompt.StatusLateFulfill, 0)
	g.end(1, 30)
	s, m, err := g.run(t, false)
	if err != nil {
		t.Fatal(err)
	}
	noWarnings(t, s)
	for _, task := range []int64{a, b} {
		if st := state(s, m, task); st != sim.Completed {
			t.Errorf("task %#x: %s, want completed", task, st)
		}
	}
}

// LLVM libomp pushes a re-queued untied task back to its deque before the
// re-queuing thread reports the switch-out, so another thread may report
// starting it first. The task moves without a warning; the late report is
// ignored; its pieces are still one fragment.
func TestUntiedStolenBeforeSwitchOut(t *testing.T) {
	g := newProg(2).region(2, 0)
	a := id(0, 4)
	g.ev(0, trace.TaskCreate, 0, a, implicit(0), ompt.TaskExplicit|ompt.TaskUntied, 0)
	g.waitBegin(0, 0)
	g.ev(0, trace.TaskSchedule, 10, implicit(0), ompt.StatusSwitch, a)
	g.ev(0, trace.TaskSchedule, 16, a, ompt.StatusSwitch, implicit(0)) // reported after thread 1 took it
	g.waitEnd(0, 60)
	g.runInWait(1, a, 15, 55, 60)
	g.end(2, 60)
	s, m, f := runFrags(t, g)
	noWarnings(t, s)
	tk := s.Tasks[m.Task(a)]
	if tk.State != sim.Completed || s.RunNS(m.Task(a)) != 5+40 {
		t.Errorf("task %s ran %d ns, want completed after 45", tk.State, s.RunNS(m.Task(a)))
	}
	// thread 0: overhead 0..10 (a ready), work 10..15, idle 15..55,
	// overhead 55..60 (barrier released). thread 1: overhead 0..10, idle
	// 10..15, work 15..55, overhead 55..60.
	wantBreakdown(t, s, 5+40, 0, 10+5+10+5, 40+5)
	if first, last := f.FirstOf(m.Task(a)), f.LastOf(m.Task(a)); first != last || f.Weight[first] != 45 {
		t.Errorf("fragments %d..%d weighing %d, want one of 45", first, last, f.Weight[first])
	}
}

// A process may have up to 65 536 threads (trace.MaxThreads): the task
// table names the thread a task ran on whatever its index (an int16 made
// thread 40 000 read as −25 536, "never ran").
func TestTaskThreadAbove32767(t *testing.T) {
	const hi = 40000
	task := id(0, 4)
	g := newProg(hi + 1)
	g.ev(0, trace.ThreadBegin, 0, 1)
	g.ev(0, trace.ImplicitTaskBegin, 0, 0, id(0, 1), 1, 0, ompt.TaskInitial)
	g.ev(0, trace.ParallelBegin, 0, id(0, 2), id(0, 1), 2, 0, 0)
	g.ev(0, trace.ImplicitTaskBegin, 0, id(0, 2), implicit(0), 2, 0, ompt.TaskImplicit)
	g.ev(hi, trace.ThreadBegin, 0, 2)
	g.ev(hi, trace.ImplicitTaskBegin, 0, id(0, 2), implicit(hi), 2, 1, ompt.TaskImplicit)
	g.ev(0, trace.TaskCreate, 10, task, implicit(0), ompt.TaskExplicit, 0)
	g.ev(hi, trace.TaskSchedule, 20, implicit(hi), ompt.StatusSwitch, task)
	g.ev(hi, trace.TaskSchedule, 30, task, ompt.StatusComplete, implicit(hi))
	for _, th := range []int{0, hi} {
		g.ev(th, trace.ImplicitTaskEnd, 40, id(0, 2), implicit(th), 2, int64(min(th, 1)), ompt.TaskImplicit)
	}
	g.ev(0, trace.ParallelEnd, 40, id(0, 2), id(0, 1), 0, 0)
	g.ev(0, trace.ImplicitTaskEnd, 40, 0, id(0, 1), 1, 0, ompt.TaskInitial)
	g.ev(0, trace.ThreadEnd, 40)
	g.ev(hi, trace.ThreadEnd, 40)
	s, m, err := g.run(t, false)
	if err != nil {
		t.Fatal(err)
	}
	if tk := s.Tasks[m.Task(task)]; tk.Thread() != hi || s.RunNS(m.Task(task)) != 10 {
		t.Errorf("task ran on thread %d for %d ns, want %d for 10", tk.Thread(), s.RunNS(m.Task(task)), hi)
	}
}

// A region whose parallel_begin requests 4 threads and whose implicit tasks
// report a team of 2 (the actual size) gets a team of 2: both members, the
// barrier released when they arrive, no warning. (The process has 4
// threads: a request beyond the threads is bounded at the begin already.)
func TestActualTeamSizeReplacesRequested(t *testing.T) {
	g := newProg(4)
	for th := 2; th < 4; th++ {
		g.ev(th, trace.ThreadBegin, 0, 2).ev(th, trace.ThreadEnd, 40)
	}
	g.ev(0, trace.ThreadBegin, 0, 1)
	g.ev(0, trace.ImplicitTaskBegin, 0, 0, id(0, 1), 1, 0, ompt.TaskInitial)
	g.ev(0, trace.ParallelBegin, 0, id(0, 2), id(0, 1), 4, 0, 0)
	for th := 0; th < 2; th++ {
		if th > 0 {
			g.ev(th, trace.ThreadBegin, 0, 2)
		}
		g.ev(th, trace.ImplicitTaskBegin, 0, id(0, 2), implicit(th), 2, int64(th), ompt.TaskImplicit)
	}
	g.barrier(0, 10, 30).barrier(1, 30, 30)
	g.end(2, 40)
	s := sim.New(g.proc(), nil, true)
	var seen regionSeen
	if err := s.Run(ompt.NewModel(), &seen); err != nil {
		t.Fatal(err)
	}
	if len(s.Regions) != 1 {
		t.Fatalf("%d regions, want 1", len(s.Regions))
	}
	reg, at := s.Regions[0], seen.atEnd[0]
	if reg.Team != 2 || at.epochs != 2 || at.idle != 2 || at.members != 2 || !reg.Ended {
		t.Fatalf("region: team %d, %d epochs, %d idle slots, %d members at its end, ended %v; want a team of 2, ended", reg.Team, at.epochs, at.idle, at.members, reg.Ended)
	}
	if !reg.Retired || reg.Epoch != nil || reg.Idle != nil || reg.Members != nil {
		t.Errorf("ended region not retired: %+v", reg)
	}
	if w := s.Breakdown.Threads[0].Idle; w != 20 {
		t.Errorf("thread 0 idle %d ns, want 20 (waiting at the barrier from 10 to 30)", w)
	}
}

// Run times past 2^32 ns (a task of minutes) and pieces that add up past
// it are exact: the record's 32 bits give way to the simulator's map.
func TestLongRunTimes(t *testing.T) {
	const sec = int64(1e9)
	for _, c := range []struct {
		name   string
		pieces [][2]int64 // running [from, to)
		want   int64
	}{
		{"short", [][2]int64{{30, 80}}, 50},
		{"one long piece", [][2]int64{{30, 30 + 7*sec}}, 7 * sec},
		{"pieces past 2^32", [][2]int64{{30, 30 + 3*sec}, {4 * sec, 6 * sec}, {7 * sec, 7*sec + 5}}, 5*sec + 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newProg(2).region(2, 0)
			task := id(0, 4)
			g.ev(0, trace.TaskCreate, 10, task, implicit(0), ompt.TaskExplicit, 0)
			last := c.pieces[len(c.pieces)-1][1]
			g.barrier(0, 10, last+10)
			g.waitBegin(1, 20)
			for k, p := range c.pieces {
				g.ev(1, trace.TaskSchedule, p[0], implicit(1), ompt.StatusSwitch, task)
				status := int64(ompt.StatusYield)
				if k == len(c.pieces)-1 {
					status = ompt.StatusComplete
				}
				g.ev(1, trace.TaskSchedule, p[1], task, status, implicit(1))
			}
			g.waitEnd(1, last+10)
			g.end(2, last+10)
			s, m, err := g.run(t, false)
			if err != nil {
				t.Fatal(err)
			}
			noWarnings(t, s)
			if d := s.RunNS(m.Task(task)); d != c.want {
				t.Errorf("task ran %d ns, want %d", d, c.want)
			}
		})
	}
}

// regionSeen is a pass that notes, at each parallel_end, the sizes and idle
// times of the region it ends, as they are before Run retires it.
type regionSeen struct {
	atEnd map[int32]regionAtEnd
}

type regionAtEnd struct {
	epochs, idle, members int
	topLevel              bool
	idleNS                []int64
}

func (p *regionSeen) Before(*sim.Sim, *trace.Event, int, int64) {}
func (p *regionSeen) Finish(*sim.Sim)                           {}
func (p *regionSeen) After(s *sim.Sim, e *trace.Event, th int) {
	if e.Kind != trace.ParallelEnd {
		return
	}
	if p.atEnd == nil {
		p.atEnd = map[int32]regionAtEnd{}
	}
	for r := range s.Regions {
		if reg := &s.Regions[r]; reg.Ended && !reg.Retired {
			p.atEnd[int32(r)] = regionAtEnd{len(reg.Epoch), len(reg.Idle), len(reg.Members), reg.TopLevel, append([]int64(nil), reg.Idle...)}
		}
	}
}

// Regions are retired as they end (their per-member arrays released), and
// TALP's load-balance and scheduling sums are those of the idle times
// they had at their end.
func TestRegionsRetiredIdleKept(t *testing.T) {
	const threads, regions = 3, 5
	g := newProg(threads)
	seq := make([]int64, threads) // per thread: its last task id's sequence
	next := func(th int) int64 { seq[th]++; return id(th, seq[th]) }
	for th := range threads {
		g.ev(th, trace.ThreadBegin, 0, map[bool]int64{true: 1, false: 2}[th == 0])
	}
	initial := next(0)
	g.ev(0, trace.ImplicitTaskBegin, 0, 0, initial, 1, 0, ompt.TaskInitial)
	for r := range regions {
		t0 := int64(100 * (r + 1))
		par := next(0)
		g.ev(0, trace.ParallelBegin, t0, par, initial, threads, 0, 0)
		tasks := make([]int64, threads)
		for th := range threads {
			tasks[th] = next(th)
			g.ev(th, trace.ImplicitTaskBegin, t0, par, tasks[th], threads, int64(th), ompt.TaskImplicit)
		}
		for th := range threads {
			// Members arrive at the barrier at different times: idle
			// differs by thread and by region.
			from := t0 + 10 + int64(th*(r+1))
			g.ev(th, trace.SyncBegin, from, ompt.SyncBarrierImplicitParallel, par, tasks[th], 0)
			g.ev(th, trace.SyncWaitBegin, from, ompt.SyncBarrierImplicitParallel, par, tasks[th])
			g.ev(th, trace.SyncWaitEnd, t0+50, ompt.SyncBarrierImplicitParallel, par, tasks[th])
			g.ev(th, trace.SyncEnd, t0+50, ompt.SyncBarrierImplicitParallel, par, tasks[th], 0)
		}
		for th := range threads {
			g.ev(th, trace.ImplicitTaskEnd, t0+60, par, tasks[th], threads, int64(th), ompt.TaskImplicit)
		}
		g.ev(0, trace.ParallelEnd, t0+60, par, initial, 0, 0)
	}
	end := int64(100 * (regions + 1))
	g.ev(0, trace.ImplicitTaskEnd, end, 0, initial, 1, 0, ompt.TaskInitial)
	for th := range threads {
		g.ev(th, trace.ThreadEnd, end)
	}
	s := sim.New(g.proc(), nil, true)
	var seen regionSeen
	if err := s.Run(ompt.NewModel(), &seen); err != nil {
		t.Fatal(err)
	}
	if len(s.Regions) != regions {
		t.Fatalf("%d regions, want %d", len(s.Regions), regions)
	}
	var lb, sched, in int64
	for r := range s.Regions {
		reg := &s.Regions[r]
		if !reg.Retired || reg.Idle != nil || reg.Epoch != nil || reg.Members != nil {
			t.Fatalf("region %d not retired: %+v", r, reg)
		}
		at, ok := seen.atEnd[int32(r)]
		if !ok || !at.topLevel || len(at.idleNS) != threads {
			t.Fatalf("region %d at its end: %+v", r, at)
		}
		mn := slices.Min(at.idleNS)
		for _, v := range at.idleNS {
			lb, in = lb+v-mn, in+v
		}
		sched += threads * mn
	}
	tl := s.TALP()
	if in == 0 || lb == 0 {
		t.Fatalf("no idle in the regions (%d, load imbalance %d): the test proves nothing", in, lb)
	}
	if tl.LB != lb || tl.Sched != sched+tl.ForkJoin || tl.Serial != tl.Idle-in-tl.ForkJoin {
		t.Errorf("TALP LB %d sched %d serial %d, want %d, %d, %d", tl.LB, tl.Sched, tl.Serial, lb, sched+tl.ForkJoin, tl.Idle-in-tl.ForkJoin)
	}
}

// onStackAt records, at the first event at or after when, whether each of
// tasks is on thread 0's stack and on thread 1's.
type onStackAt struct {
	when  int64
	tasks []sim.Task
	out   [][2]bool
}

func (p *onStackAt) Before(s *sim.Sim, e *trace.Event, th int, dt int64) {
	if p.out == nil && e != nil && e.Time >= p.when {
		for _, t := range p.tasks {
			p.out = append(p.out, [2]bool{s.OnStack(t, 0), s.OnStack(t, 1)})
		}
	}
}
func (p *onStackAt) After(s *sim.Sim, e *trace.Event, th int) {}
func (p *onStackAt) Finish(s *sim.Sim)                        {}

// A recursion of undeferred children three deep (BOTS fib's shape): each
// parent waits on thread 0's stack under its child, the deepest runs, and
// the tasks not started yet are on no stack; each resumes when its child
// completes (the stacks' scans skip the tasks never pushed, and OnStack
// looks from the top: the answers and the run times are the same).
func TestStackOfRecursion(t *testing.T) {
	g := newProg(2).region(2, 0)
	a, b, c, d := id(0, 4), id(0, 5), id(0, 6), id(0, 7)
	g.ev(0, trace.TaskCreate, 0, a, implicit(0), ompt.TaskExplicit, 0)
	g.ev(0, trace.TaskSchedule, 0, implicit(0), ompt.StatusSwitch, a)
	g.ev(0, trace.TaskCreate, 10, b, a, ompt.TaskExplicit|ompt.TaskUndeferred, 0)
	g.ev(0, trace.TaskSchedule, 10, a, ompt.StatusSwitch, b)
	g.ev(0, trace.TaskCreate, 20, c, b, ompt.TaskExplicit|ompt.TaskUndeferred, 0)
	g.ev(0, trace.TaskCreate, 25, d, b, ompt.TaskExplicit, 0) // not started until 60
	g.ev(0, trace.TaskSchedule, 30, b, ompt.StatusSwitch, c)
	g.ev(0, trace.TaskSchedule, 50, c, ompt.StatusComplete, b)
	g.ev(0, trace.TaskSchedule, 55, b, ompt.StatusComplete, a)
	g.ev(0, trace.TaskSchedule, 60, a, ompt.StatusSwitch, d)
	g.ev(0, trace.TaskSchedule, 70, d, ompt.StatusComplete, a)
	g.ev(0, trace.TaskSchedule, 80, a, ompt.StatusComplete, implicit(0))
	g.end(2, 80)
	s := sim.New(g.proc(), nil, false)
	m := ompt.NewModel()
	probe := &onStackAt{when: 40}
	// Dense tasks: the implicit ones first, then a, b, c, d in creation order.
	probe.tasks = []sim.Task{2, 3, 4, 5, 6}
	if err := s.Run(m, probe); err != nil {
		t.Fatal(err)
	}
	noWarnings(t, s)
	for i, tk := range []int64{a, b, c, d} {
		if got := m.Task(tk); got != probe.tasks[i+1] {
			t.Fatalf("task %d is dense %d, want %d", i, got, probe.tasks[i+1])
		}
	}
	want := [][2]bool{{true, false}, {true, false}, {true, false}, {true, false}, {false, false}}
	if !slices.Equal(probe.out, want) {
		t.Errorf("on the stacks at 40 (implicit 0, a, b, c, d): %v, want %v", probe.out, want)
	}
	for i, w := range []struct {
		task int64
		run  int64
	}{{a, 10 + 5 + 10}, {b, 20 + 5}, {c, 20}, {d, 10}} {
		if got := s.RunNS(m.Task(w.task)); got != w.run {
			t.Errorf("task %d ran %d ns, want %d", i, got, w.run)
		}
		if st := s.Tasks[m.Task(w.task)].State; st != sim.Completed {
			t.Errorf("task %d %s, want completed", i, st)
		}
	}
}
