package driver_test

import (
	"math"
	"reflect"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/driver"
	"github.com/ptrace-dev/ptrace/report"
	"github.com/ptrace-dev/ptrace/trace"
)

// Tasks created with dependences that never run (a trace cut before any
// task started) analyse: the task graph and the critical path have no
// task to put the dependences on, and indexed the per-task tables that a
// process without tasks that ran does not keep (a panic until 2026-11-24).
func TestDependencesOfTasksThatNeverRan(t *testing.T) {
	bases, err := fuzzTraces()
	if err != nil {
		t.Fatal(err)
	}
	procs := withoutSchedules(bases[1], math.MinInt64) // stencil: tasks with dependences
	dir := t.TempDir()
	if !writeTrace(dir, procs) {
		t.Fatal("the writer refused the trace")
	}
	for k := 1; k <= 2; k++ {
		err := inproc.Run(k, func(c comm.Comm) error {
			_, err := driver.Run(c, driver.Options{Dir: dir})
			return err
		})
		if err != nil {
			t.Errorf("%d analysis ranks: %v", k, err)
		}
	}
}

// A task that names one predecessor's address twice (depend(in: a, a), or
// two addresses one task wrote) makes the dependence pair twice. The task
// graph and the fragment DAG keep it once: the repeats take the sorting
// path (the simulation's check finds them, so the pairs are not read in
// place), and must give the graphs of the trace without them, whose pairs
// are read in place. So too when some tasks never ran (the trace cut at
// 200 µs): then neither list is read in place, the pairs of tasks that
// ran kept by a pass that the simulation's marks of the tasks the pairs
// join decide on.
func TestRepeatedDependences(t *testing.T) {
	bases, err := fuzzTraces()
	if err != nil {
		t.Fatal(err)
	}
	full := bases[1] // stencil: tasks with dependences
	cut := withoutSchedules(full, 200_000)
	graphs := func(procs []fuzzProc, k int) (*report.Graph, *report.CriticalPath) {
		dir := t.TempDir()
		if !writeTrace(dir, procs) {
			t.Fatal("the writer refused the trace")
		}
		rep, _ := analyze(t, dir, k)
		if rep.Graph == nil || rep.CriticalPath == nil {
			t.Fatal("no task graph or critical path in the report")
		}
		return rep.Graph, rep.CriticalPath
	}
	for _, tc := range []struct {
		name string
		base []fuzzProc
	}{{"whole", full}, {"cut", cut}} {
		doubled, repeats := doubleDependences(tc.base)
		if repeats == 0 {
			t.Fatalf("%s: the base trace has no dependences to repeat", tc.name)
		}
		for k := 1; k <= 2; k++ {
			g0, cp0 := graphs(tc.base, k)
			g1, cp1 := graphs(doubled, k)
			if g0.Edges == 0 || g0.Tasks == 0 {
				t.Fatalf("%s: the task graph has no edges or tasks", tc.name)
			}
			if !reflect.DeepEqual(g0, g1) {
				t.Errorf("%s, %d ranks: task graph with repeated pairs %+v, without %+v", tc.name, k, *g1, *g0)
			}
			if !reflect.DeepEqual(cp0, cp1) {
				t.Errorf("%s, %d ranks: critical path with repeated pairs %+v, without %+v", tc.name, k, *cp1, *cp0)
			}
		}
	}
}

// doubleDependences returns procs with every dependence of every task
// listed twice, and how many were.
func doubleDependences(procs []fuzzProc) ([]fuzzProc, int) {
	out := make([]fuzzProc, len(procs))
	repeats := 0
	for i := range procs {
		p := clone(&procs[i])
		for th, evs := range p.Events {
			var deps []trace.Dep
			for k := range evs {
				e := &evs[k]
				if e.Kind != trace.TaskDeps {
					continue
				}
				list := e.Deps(p.Deps[th])
				e.Args[1], e.Args[2] = int64(2*len(list)), int64(len(deps))
				for _, d := range list {
					deps = append(deps, d, d)
				}
				repeats += len(list)
			}
			p.Deps[th] = deps
		}
		out[i] = p
	}
	return out, repeats
}

// withoutSchedules returns a copy of procs without their task_schedule
// events from time from on: the tasks they would have started never run.
func withoutSchedules(procs []fuzzProc, from int64) []fuzzProc {
	out := make([]fuzzProc, len(procs))
	for i := range procs {
		out[i] = clone(&procs[i])
		for th, evs := range out[i].Events {
			kept := evs[:0]
			for _, e := range evs {
				if e.Kind != trace.TaskSchedule || e.Time < from {
					kept = append(kept, e)
				}
			}
			out[i].Events[th] = kept
		}
	}
	return out
}
