package sim_test

import (
	"fmt"
	"testing"

	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// runFrags simulates g with the fragment pass.
func runFrags(t *testing.T, g *prog) (*sim.Sim, *ompt.Model, *sim.Frags) {
	t.Helper()
	return simFrags(t, g.proc())
}

// simFrags simulates p with the fragment pass, recording dependences.
func simFrags(t *testing.T, p *trace.Process) (*sim.Sim, *ompt.Model, *sim.Frags) {
	t.Helper()
	s := sim.New(p, nil, false)
	s.RecordDeps = true
	m := ompt.NewModel()
	m.KeepDependences()
	fp := sim.NewFragPass(nil)
	if err := s.Run(m, fp); err != nil {
		t.Fatal(err)
	}
	fp.F.UnpackWeights(nil)
	return s, m, &fp.F
}

// pathTasks returns the length of the fragment graph's longest path and
// the number of task fragments on it (the first node in Kahn's order that
// reaches the length ends it).
func pathTasks(t *testing.T, f *sim.Frags) (span int64, tasks int) {
	t.Helper()
	order, ef, from := kahn(t, f)
	end := int32(-1)
	for _, v := range order {
		if end < 0 || ef[v] > ef[end] {
			end = v
		}
	}
	if end < 0 {
		return 0, 0
	}
	for v := end; v >= 0; v = from[v] {
		if f.Attr(int32(v)).Kind == sim.FragTask {
			tasks++
		}
	}
	return ef[end], tasks
}

// taskFragment returns the weight of task id's one fragment, -1 when it
// has none or several (its first and last fragments differ).
func taskFragment(f *sim.Frags, m *ompt.Model, id int64) int64 {
	first, last := f.FirstOf(m.Task(id)), f.LastOf(m.Task(id))
	if first < 0 || first != last || f.Attr(first).Kind != sim.FragTask {
		return -1
	}
	return f.Weight[first]
}

// An untied task's stub runs on one thread and re-queues the task, whose
// body another thread starts; the stub's task_schedule events sort after
// the body's start: both at the same time with the body's thread numbered
// lower, or the stub's thread's clock ahead by more than the stub lasted.
// The stub is no steal of the running body: the body keeps its thread, its
// run time (40 ns) and its one fragment; no warning. Before, the stub's
// start took the task off the body's thread (the lost race of
// TestUntiedStolenBeforeSwitchOut read backwards), the body's completion
// warned twice and the fragment weighed only the stub's 1 ns, which breaks
// a chain's critical path.
func TestUntiedStubRecordedAfterBody(t *testing.T) {
	for _, c := range []struct {
		body, stub     int   // threads
		stubAt, stubTo int64 // the stub's recorded start and switch-out
	}{
		{body: 0, stub: 1, stubAt: 10, stubTo: 11}, // equal start times
		{body: 1, stub: 0, stubAt: 12, stubTo: 13}, // stub's clock 2+ ns ahead
		{body: 0, stub: 1, stubAt: 12, stubTo: 13},
	} {
		t.Run(fmt.Sprintf("body%d-stub%d-at%d", c.body, c.stub, c.stubAt), func(t *testing.T) {
			g := newProg(2).region(2, 0)
			a := id(0, 4)
			g.ev(0, trace.TaskCreate, 0, a, implicit(0), ompt.TaskExplicit|ompt.TaskUntied, 0)
			for th := 0; th < 2; th++ {
				g.waitBegin(th, 5)
				if th == c.body {
					g.ev(th, trace.TaskSchedule, 10, implicit(th), ompt.StatusSwitch, a)
					g.ev(th, trace.TaskSchedule, 50, a, ompt.StatusComplete, implicit(th))
				} else {
					g.ev(th, trace.TaskSchedule, c.stubAt, implicit(th), ompt.StatusSwitch, a)
					g.ev(th, trace.TaskSchedule, c.stubTo, a, ompt.StatusSwitch, implicit(th))
				}
				g.waitEnd(th, 60)
			}
			g.end(2, 60)
			s, m, f := runFrags(t, g)
			noWarnings(t, s)
			if tk := s.Tasks[m.Task(a)]; tk.State != sim.Completed || s.RunNS(m.Task(a)) != 40 || tk.Thread() != c.body {
				t.Errorf("task %s ran %d ns, last on thread %d; want completed, 40 ns on thread %d", tk.State, s.RunNS(m.Task(a)), tk.Thread(), c.body)
			}
			if w := taskFragment(f, m, a); w != 40 {
				t.Errorf("task fragment weighs %d, want one of 40 (-1: none or several)", w)
			}
			// body thread: work 0..5 (its implicit task), overhead 5..10
			// (a ready), work 10..50, overhead 50..60 (barrier released);
			// the stub's thread: work 0..5, overhead 5..10, idle 10..50,
			// overhead 50..60.
			b := s.Breakdown.Threads
			if w := b[c.body].Work + b[1-c.body].Work; w != 5+40+5 {
				t.Errorf("work %d, want 50", w)
			}
			if o := b[1-c.body]; o.Idle != 40 {
				t.Errorf("stub's thread %+v, want idle 40 (the body runs elsewhere)", o)
			}
		})
	}
}

// A task that yields to a task run nested above it (not to the task below
// it) stays on its thread's stack; if it then resumes on another thread,
// it leaves the first one, whose tasks below it resume without a warning.
// The task's run time is its two pieces (10 + 30 ns).
func TestYieldNestedResumedElsewhere(t *testing.T) {
	g := newProg(2).region(2, 0)
	a, b := id(0, 4), id(0, 5)
	g.ev(0, trace.TaskCreate, 0, a, implicit(0), ompt.TaskExplicit|ompt.TaskUntied, 0)
	g.ev(0, trace.TaskCreate, 0, b, implicit(0), ompt.TaskExplicit, 0)
	g.waitBegin(0, 5)
	g.ev(0, trace.TaskSchedule, 10, implicit(0), ompt.StatusSwitch, a)
	g.ev(0, trace.TaskSchedule, 20, a, ompt.StatusYield, b)
	g.ev(0, trace.TaskSchedule, 40, b, ompt.StatusComplete, implicit(0))
	g.waitEnd(0, 60)
	g.runInWait(1, a, 25, 55, 60)
	g.end(2, 60)
	s, m, f := runFrags(t, g)
	noWarnings(t, s)
	if tk := s.Tasks[m.Task(a)]; tk.State != sim.Completed || s.RunNS(m.Task(a)) != 40 {
		t.Errorf("task %s ran %d ns, want completed after 40", tk.State, s.RunNS(m.Task(a)))
	}
	// thread 0: work 0..5, overhead 5..10 (a, b ready), work 10..40 (a, then
	// b), idle 40..55 (a runs on thread 1), overhead 55..60. thread 1:
	// overhead 0..25 (b, then a ready), work 25..55, overhead 55..60.
	wantBreakdown(t, s, 5+30+30, 0, 5+5+25+5, 15)
	if span, _ := longest(t, f); span != 40 {
		t.Errorf("span %d, want 40 (a's two pieces)", span)
	}
}

// omp_fulfill_event reported as task_schedule with the early or late
// fulfil status and no next task (a producer other than the collector) is
// no scheduling point: the task running on the thread keeps one fragment.
func TestFulfilKeepsFragment(t *testing.T) {
	g := newProg(1).region(1, 0)
	a, b, c := id(0, 4), id(0, 5), id(0, 6)
	g.ev(0, trace.TaskCreate, 0, a, implicit(0), ompt.TaskExplicit, 0)
	g.ev(0, trace.TaskCreate, 0, b, implicit(0), ompt.TaskExplicit, 0)
	g.ev(0, trace.TaskCreate, 0, c, implicit(0), ompt.TaskExplicit, 0)
	g.ev(0, trace.TaskSchedule, 0, implicit(0), ompt.StatusSwitch, a)
	g.ev(0, trace.TaskSchedule, 5, a, ompt.StatusEarlyFulfill, 0)
	g.ev(0, trace.TaskSchedule, 10, a, ompt.StatusDetach, implicit(0))
	g.ev(0, trace.TaskSchedule, 10, implicit(0), ompt.StatusSwitch, b)
	g.ev(0, trace.TaskSchedule, 20, b, ompt.StatusDetach, implicit(0))
	g.ev(0, trace.TaskSchedule, 20, implicit(0), ompt.StatusSwitch, c)
	g.ev(0, trace.TaskSchedule, 25, b, ompt.StatusLateFulfill, 0) // while c runs
	g.ev(0, trace.TaskSchedule, 40, c, ompt.StatusComplete, implicit(0))
	g.end(1, 40)
	s, m, f := runFrags(t, g)
	noWarnings(t, s)
	for _, x := range []struct {
		task int64
		w    int64
	}{{a, 10}, {b, 10}, {c, 20}} {
		if st := state(s, m, x.task); st != sim.Completed {
			t.Errorf("task %#x: %s, want completed", x.task, st)
		}
		if w := taskFragment(f, m, x.task); w != x.w {
			t.Errorf("task %#x: fragment weighs %d, want one of %d (-1: none or several)", x.task, w, x.w)
		}
	}
}

// A chain of three untied tasks (inout on one address) created by thread 0
// and run by thread 1 as LLVM libomp runs them (a 1 ns stub, then a 20 ns
// body). Each link depends on its creation too: when the creator is
// descheduled between creating b and c long enough, the critical path runs
// through its region code into c and holds one task node, not three — the
// e2e untied chain's "fewer links on the path" on a loaded machine, which
// is the right answer, not a broken chain.
//
// creator: creates a at 0, b at 1, c at createC; barrier from createC+1.
// Creator path: 0 + 1 + (createC−1) + 21 (c); chain: 21·3 = 63.
func TestUntiedChainSlowCreator(t *testing.T) {
	for _, c := range []struct {
		createC, span int64
		tasks         int
	}{
		{createC: 30, span: 63, tasks: 3}, // 0+1+29+21 = 51 < 63
		{createC: 61, span: 82, tasks: 1}, // 0+1+60+21 = 82 > 63
	} {
		g := newProg(2).region(2, 0)
		a, b, cc := id(0, 4), id(0, 5), id(0, 6)
		for _, x := range []struct{ task, at int64 }{{a, 0}, {b, 1}, {cc, c.createC}} {
			g.ev(0, trace.TaskCreate, x.at, x.task, implicit(0), ompt.TaskExplicit|ompt.TaskUntied, 0)
			g.deps(0, x.at, x.task, trace.Dep{Addr: 64, Type: trace.DepInout})
		}
		g.waitBegin(0, c.createC+1)
		g.waitBegin(1, 0)
		stub := func(task, at int64) int64 { // stub at..at+1, body at+2..at+22
			g.ev(1, trace.TaskSchedule, at, implicit(1), ompt.StatusSwitch, task)
			g.ev(1, trace.TaskSchedule, at+1, task, ompt.StatusSwitch, implicit(1))
			g.ev(1, trace.TaskSchedule, at+2, implicit(1), ompt.StatusSwitch, task)
			g.ev(1, trace.TaskSchedule, at+22, task, ompt.StatusComplete, implicit(1))
			return at + 22
		}
		endB := stub(b, stub(a, 2)+1)
		stub(cc, max(endB, c.createC)+1)
		g.waitEnd(0, 100)
		g.waitEnd(1, 100)
		g.end(2, 100)
		s, m, f := runFrags(t, g)
		noWarnings(t, s)
		for _, task := range []int64{a, b, cc} {
			if w := taskFragment(f, m, task); w != 21 {
				t.Errorf("c at %d: task %#x's fragment weighs %d, want one of 21 (-1: none or several)", c.createC, task, w)
			}
		}
		if span, tasks := pathTasks(t, f); span != c.span || tasks != c.tasks {
			t.Errorf("c created at %d: path %d ns with %d task nodes, want %d ns with %d", c.createC, span, tasks, c.span, c.tasks)
		}
	}
}

// A task switched out inside an MPI call whose cost never became a node
// (zero length, nothing arrived at it) resumes in a new fragment: its
// piece before the call is not continued, as it would not be had the cost
// node existed (FragPass's lazy fragments).
func TestRequeueInsideMPICall(t *testing.T) {
	g := newProg(2).region(2, 0)
	a := id(0, 4)
	g.ev(0, trace.TaskCreate, 0, a, implicit(0), ompt.TaskExplicit|ompt.TaskUntied, 0)
	g.waitBegin(0, 5)
	g.ev(0, trace.TaskSchedule, 10, implicit(0), ompt.StatusSwitch, a)
	g.ev(0, trace.MPIEnter, 12, 0)
	g.ev(0, trace.TaskSchedule, 12, a, ompt.StatusSwitch, implicit(0))
	g.ev(0, trace.MPIExit, 14, 0)
	g.waitEnd(0, 60)
	g.runInWait(1, a, 20, 50, 60)
	g.end(2, 60)
	_, m, f := runFrags(t, g)
	first, last := f.FirstOf(m.Task(a)), f.LastOf(m.Task(a))
	if first < 0 || first == last {
		t.Fatalf("task fragments %d..%d, want two", first, last)
	}
	if f.Weight[first] != 2 || f.Weight[last] != 30 {
		t.Errorf("fragments weigh %d and %d, want 2 (10..12) and 30 (20..50)", f.Weight[first], f.Weight[last])
	}
	if span, _ := pathTasks(t, f); span < 32 {
		t.Errorf("longest path %d, want at least the task's 32", span)
	}
}
