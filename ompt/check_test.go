package ompt_test

import (
	"strings"
	"testing"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// seq builds a process's events thread by thread.
type seq struct{ events [][]trace.Event }

func (q *seq) ev(th int, k trace.Kind, t int64, args ...int64) *seq {
	for len(q.events) <= th {
		q.events = append(q.events, nil)
	}
	e := trace.Event{Time: t, Kind: k}
	copy(e.Args[:], args)
	q.events[th] = append(q.events[th], e)
	return q
}

func (q *seq) run(t *testing.T) *sim.Sim {
	t.Helper()
	tables := trace.Tables{Locations: []trace.Location{{ID: 0, File: "t.c", Line: 1}, {ID: 1, File: "t.c", Line: 2}}}
	deps := make([][]trace.Dep, len(q.events))
	p, err := trace.NewProcess(trace.Header{NRanks: 1}, tables, q.events, deps)
	if err != nil {
		t.Fatal(err)
	}
	s := sim.New(p, nil, false)
	if err := s.Run(ompt.NewModel()); err != nil {
		t.Fatal(err)
	}
	return s
}

func id(th int, seq int64) int64 { return trace.MakeID(th, seq) }

// barrier is an implicit barrier of region par on th from..to, its begin
// kind as libomp reports it and its end kind too (they may differ).
func (q *seq) barrier(th int, par, task, from, to, beginKind, endKind int64) *seq {
	q.ev(th, trace.SyncBegin, from, beginKind, par, task, 1)
	q.ev(th, trace.SyncWaitBegin, from, beginKind, par, task)
	q.ev(th, trace.SyncWaitEnd, to, endKind, par, task)
	return q.ev(th, trace.SyncEnd, to, endKind, par, task, 1)
}

// What libomp does is no contradiction of the checks: the master is
// thread 1 and its worker, thread 0, names the region at the same time
// before the master's parallel_begin sorts; the worker's implicit barrier
// and task end at the next region's fork, after the master ended the
// region, with another barrier kind than they began; a taskwait in the
// initial task names no region; a nested region is begun by an implicit
// task inside its own region. No warning.
func TestOMPTSequencesOfLibompAreAccepted(t *testing.T) {
	q := &seq{}
	const init, r1, r2, nested = 1, 2, 5, 7
	m, w := 1, 0 // master and worker thread
	q.ev(m, trace.ThreadBegin, 0, 1).ev(w, trace.ThreadBegin, 0, 2)
	q.ev(m, trace.ImplicitTaskBegin, 0, 0, id(m, init), 1, 0, ompt.TaskInitial)
	q.ev(m, trace.SyncBegin, 5, ompt.SyncTaskwait, 0, id(m, init), 0)
	q.ev(m, trace.SyncWaitBegin, 5, ompt.SyncTaskwait, 0, id(m, init))
	q.ev(m, trace.SyncWaitEnd, 6, ompt.SyncTaskwait, 0, id(m, init))
	q.ev(m, trace.SyncEnd, 6, ompt.SyncTaskwait, 0, id(m, init), 0)
	// region 1, the worker first at t = 10
	q.ev(w, trace.ImplicitTaskBegin, 10, id(m, r1), id(w, 1), 2, 1, ompt.TaskImplicit)
	q.ev(m, trace.ParallelBegin, 10, id(m, r1), id(m, init), 2, 0, 0)
	q.ev(m, trace.ImplicitTaskBegin, 10, id(m, r1), id(m, r1+1), 2, 0, ompt.TaskImplicit)
	// a nested region of the master's implicit task, a team of one
	q.ev(m, trace.ParallelBegin, 20, id(m, nested), id(m, r1+1), 1, 0, 0)
	q.ev(m, trace.ImplicitTaskBegin, 20, id(m, nested), id(m, nested+1), 1, 0, ompt.TaskImplicit)
	q.ev(m, trace.ImplicitTaskEnd, 30, id(m, nested), id(m, nested+1), 1, 0, ompt.TaskImplicit)
	q.ev(m, trace.ParallelEnd, 30, id(m, nested), id(m, r1+1), 0, 0)
	q.barrier(m, id(m, r1), id(m, r1+1), 40, 50, ompt.SyncBarrierImplicitParallel, ompt.SyncBarrierImplicitParallel)
	q.ev(m, trace.ImplicitTaskEnd, 50, id(m, r1), id(m, r1+1), 2, 0, ompt.TaskImplicit)
	q.ev(m, trace.ParallelEnd, 50, id(m, r1), id(m, init), 0, 0)
	// the worker's barrier of region 1 ends at region 2's fork
	q.barrier(w, id(m, r1), id(w, 1), 45, 60, ompt.SyncBarrierImplicitParallel, ompt.SyncBarrierImplicit)
	q.ev(w, trace.ImplicitTaskEnd, 60, id(m, r1), id(w, 1), 2, 1, ompt.TaskImplicit)
	q.ev(m, trace.ParallelBegin, 60, id(m, r2), id(m, init), 2, 0, 0)
	q.ev(m, trace.ImplicitTaskBegin, 60, id(m, r2), id(m, r2+1), 2, 0, ompt.TaskImplicit)
	q.ev(w, trace.ImplicitTaskBegin, 60, id(m, r2), id(w, 2), 2, 1, ompt.TaskImplicit)
	q.barrier(m, id(m, r2), id(m, r2+1), 70, 80, ompt.SyncBarrierImplicitParallel, ompt.SyncBarrierImplicitParallel)
	q.ev(m, trace.ImplicitTaskEnd, 80, id(m, r2), id(m, r2+1), 2, 0, ompt.TaskImplicit)
	q.ev(m, trace.ParallelEnd, 80, id(m, r2), id(m, init), 0, 0)
	q.barrier(w, id(m, r2), id(w, 2), 75, 90, ompt.SyncBarrierImplicitParallel, ompt.SyncBarrierImplicit)
	q.ev(w, trace.ImplicitTaskEnd, 90, id(m, r2), id(w, 2), 2, 1, ompt.TaskImplicit)
	q.ev(w, trace.ThreadEnd, 90)
	q.ev(m, trace.ImplicitTaskEnd, 95, 0, id(m, init), 1, 0, ompt.TaskInitial)
	q.ev(m, trace.ThreadEnd, 95)
	if s := q.run(t); s.Warn.Total() != 0 {
		t.Errorf("warnings: %v", s.Warn.Examples)
	}
}

// A worker's implicit_task_end lost between two regions is found when the
// worker joins the next team, and its implicit task is completed there,
// as the end would have: the task table holds no task left running.
func TestLostImplicitTaskEndRepaired(t *testing.T) {
	q := &seq{}
	const init, r1, r2 = 1, 2, 5
	q.ev(0, trace.ThreadBegin, 0, 1).ev(1, trace.ThreadBegin, 0, 2)
	q.ev(0, trace.ImplicitTaskBegin, 0, 0, id(0, init), 1, 0, ompt.TaskInitial)
	for k, r := range []int64{r1, r2} {
		t0 := int64(100 * k)
		q.ev(0, trace.ParallelBegin, t0, id(0, r), id(0, init), 2, 0, 0)
		q.ev(0, trace.ImplicitTaskBegin, t0, id(0, r), id(0, r+1), 2, 0, ompt.TaskImplicit)
		q.ev(1, trace.ImplicitTaskBegin, t0+1, id(0, r), id(1, int64(k+1)), 2, 1, ompt.TaskImplicit)
		q.barrier(0, id(0, r), id(0, r+1), t0+10, t0+20, ompt.SyncBarrierImplicitParallel, ompt.SyncBarrierImplicitParallel)
		q.barrier(1, id(0, r), id(1, int64(k+1)), t0+10, t0+20, ompt.SyncBarrierImplicitParallel, ompt.SyncBarrierImplicitParallel)
		if k == 1 { // the first region's end is lost
			q.ev(1, trace.ImplicitTaskEnd, t0+20, id(0, r), id(1, int64(k+1)), 2, 1, ompt.TaskImplicit)
		}
		q.ev(0, trace.ImplicitTaskEnd, t0+20, id(0, r), id(0, r+1), 2, 0, ompt.TaskImplicit)
		q.ev(0, trace.ParallelEnd, t0+20, id(0, r), id(0, init), 0, 0)
	}
	q.ev(1, trace.ThreadEnd, 200)
	q.ev(0, trace.ImplicitTaskEnd, 200, 0, id(0, init), 1, 0, ompt.TaskInitial)
	q.ev(0, trace.ThreadEnd, 200)
	s := q.run(t)
	if s.Warn.Count["implicit_task_end missing"] != 1 || s.Warn.Total() != 1 {
		t.Fatalf("warnings %v, want one implicit_task_end missing", s.Warn.Examples)
	}
	if w := s.Warn.Examples[0]; !strings.Contains(w, "thread 1, event") || !strings.Contains(w, "implicit task 1.1") {
		t.Errorf("warning %q names no thread, event or task", w)
	}
	for i := range s.Tasks {
		if st := s.Tasks[i].State; st != sim.NotCreated && st != sim.Completed {
			t.Errorf("task #%d left %s", i, st)
		}
	}
}

// A host teams construct as LLVM libomp reports it: the league is a
// parallel region with the league flag; each team's initial task (league
// size, team number, no region) runs the team's own region of one thread,
// from inside which the team meets the league's barrier, naming the
// league; then the league's implicit barrier in the initial task. Team 1
// ends its waits after the league's end (a worker's late reports), then
// both threads run an ordinary region with a barrier. No warning: the
// teams are in the league, and the initial task's end closes only the
// regions it began.
func TestHostTeamsLeague(t *testing.T) {
	q := &seq{}
	const init, league, team0, inner0, team1, inner1, r, rt0 = 1, 2, 3, 4, 1, 2, 6, 7
	m, w := 0, 1
	q.ev(m, trace.ThreadBegin, 0, 1).ev(w, trace.ThreadBegin, 0, 2)
	q.ev(m, trace.ImplicitTaskBegin, 0, 0, id(m, init), 1, 1, ompt.TaskInitial)
	q.ev(m, trace.ParallelBegin, 10, id(m, league), id(m, init), 2, ompt.ParallelLeague|2, 0)
	for _, tm := range []struct {
		th, task, inner int
		num, arrive     int64
	}{{m, team0, inner0, 0, 100}, {w, team1, inner1, 1, 500}} {
		q.ev(tm.th, trace.ImplicitTaskBegin, 20, 0, id(tm.th, int64(tm.task)), 2, tm.num, ompt.TaskInitial)
		q.ev(tm.th, trace.ParallelBegin, 21, id(tm.th, int64(tm.inner)), id(tm.th, int64(tm.task)), 1, 2, 0)
		q.ev(tm.th, trace.ImplicitTaskBegin, 22, id(tm.th, int64(tm.inner)), id(tm.th, int64(tm.inner+10)), 1, 0, ompt.TaskImplicit)
	}
	// team 0 waits at the league's barrier from inside its own region
	q.barrier(m, id(m, league), id(m, inner0+10), 100, 500, ompt.SyncBarrierImplementation, ompt.SyncBarrierImplementation)
	q.ev(m, trace.ImplicitTaskEnd, 501, id(m, inner0), id(m, inner0+10), 1, 0, ompt.TaskImplicit)
	q.ev(m, trace.ParallelEnd, 502, id(m, inner0), id(m, team0), 0, 0)
	q.barrier(m, id(m, league), id(m, team0), 503, 510, ompt.SyncBarrierImplicit, ompt.SyncBarrierImplicit)
	q.ev(m, trace.ImplicitTaskEnd, 511, 0, id(m, team0), 2, 0, ompt.TaskInitial)
	q.ev(m, trace.ParallelEnd, 512, id(m, league), id(m, init), ompt.ParallelLeague|2, 0)
	// team 1: the league's barrier, its end reported after the league's end
	q.barrier(w, id(m, league), id(w, inner1+10), 500, 520, ompt.SyncBarrierImplementation, ompt.SyncBarrierImplementation)
	q.ev(w, trace.ImplicitTaskEnd, 521, id(w, inner1), id(w, inner1+10), 1, 0, ompt.TaskImplicit)
	q.ev(w, trace.ParallelEnd, 522, id(w, inner1), id(w, team1), 0, 0)
	q.barrier(w, id(m, league), id(w, team1), 523, 530, ompt.SyncBarrierImplicit, ompt.SyncBarrierImplicit)
	q.ev(w, trace.ImplicitTaskEnd, 531, 0, id(w, team1), 2, 1, ompt.TaskInitial)
	// an ordinary region of both threads, with a barrier
	q.ev(m, trace.ParallelBegin, 600, id(m, r), id(m, init), 2, 0, 0)
	q.ev(m, trace.ImplicitTaskBegin, 600, id(m, r), id(m, rt0), 2, 0, ompt.TaskImplicit)
	q.ev(w, trace.ImplicitTaskBegin, 601, id(m, r), id(w, 20), 2, 1, ompt.TaskImplicit)
	q.barrier(m, id(m, r), id(m, rt0), 610, 700, ompt.SyncBarrierImplicitParallel, ompt.SyncBarrierImplicitParallel)
	q.barrier(w, id(m, r), id(w, 20), 700, 701, ompt.SyncBarrierImplicitParallel, ompt.SyncBarrierImplicitParallel)
	q.ev(m, trace.ImplicitTaskEnd, 702, id(m, r), id(m, rt0), 2, 0, ompt.TaskImplicit)
	q.ev(m, trace.ParallelEnd, 703, id(m, r), id(m, init), 0, 0)
	q.ev(w, trace.ImplicitTaskEnd, 704, id(m, r), id(w, 20), 2, 1, ompt.TaskImplicit)
	q.ev(m, trace.ImplicitTaskEnd, 800, 0, id(m, init), 1, 1, ompt.TaskInitial)
	q.ev(m, trace.ThreadEnd, 801).ev(w, trace.ThreadEnd, 801)
	if s := q.run(t); s.Warn.Total() != 0 {
		t.Errorf("warnings: %v", s.Warn.Examples)
	}
}

// exit() in a task of the initial thread outside any region (testdata/
// exitpar.c serial): libomp's exit handler ends the initial task naming the
// task that called exit (the thread's current task's data), then the
// thread. No warning, and nothing ends, as at an exit() in a region: the
// exiting task is left running over the initial task.
func TestExitInInitialThreadTask(t *testing.T) {
	q := &seq{}
	const init, task = 1, 2
	q.ev(0, trace.ThreadBegin, 0, 1)
	q.ev(0, trace.ImplicitTaskBegin, 0, 0, id(0, init), 1, 1, ompt.TaskInitial)
	q.ev(0, trace.TaskCreate, 10, id(0, task), id(0, init), ompt.TaskExplicit|ompt.TaskUndeferred, 0)
	q.ev(0, trace.TaskSchedule, 11, id(0, init), ompt.StatusSwitch, id(0, task))
	q.ev(0, trace.ImplicitTaskEnd, 20, 0, id(0, task), 0, 1, ompt.TaskInitial)
	q.ev(0, trace.ThreadEnd, 21)
	s := q.run(t)
	if s.Warn.Total() != 0 {
		t.Errorf("warnings: %v", s.Warn.Examples)
	}
	for i, want := range map[int]sim.TaskState{0: sim.Suspended, 1: sim.Running} {
		if st := s.Tasks[i].State; st != want {
			t.Errorf("task #%d %s, want %s", i, st, want)
		}
	}
}
