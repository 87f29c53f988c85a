package driver_test

import (
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
	base := bases[1] // stencil: tasks with dependences
	procs := make([]fuzzProc, len(base))
	for i := range base {
		procs[i] = clone(&base[i])
		for th, evs := range procs[i].Events {
			kept := evs[:0]
			for _, e := range evs {
				if e.Kind != trace.TaskSchedule {
					kept = append(kept, e)
				}
			}
			procs[i].Events[th] = kept
		}
	}
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
// place), and must give the graphs of the trace without them.
func TestRepeatedDependences(t *testing.T) {
	bases, err := fuzzTraces()
	if err != nil {
		t.Fatal(err)
	}
	base := bases[1] // stencil: tasks with dependences
	doubled := make([]fuzzProc, len(base))
	repeats := 0
	for i := range base {
		p := clone(&base[i])
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
		doubled[i] = p
	}
	if repeats == 0 {
		t.Fatal("the base trace has no dependences to repeat")
	}
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
	for k := 1; k <= 2; k++ {
		g0, cp0 := graphs(base, k)
		g1, cp1 := graphs(doubled, k)
		if g0.Edges == 0 {
			t.Fatal("the task graph has no edges")
		}
		if !reflect.DeepEqual(g0, g1) {
			t.Errorf("%d ranks: task graph with repeated pairs %+v, without %+v", k, *g1, *g0)
		}
		if !reflect.DeepEqual(cp0, cp1) {
			t.Errorf("%d ranks: critical path with repeated pairs %+v, without %+v", k, *cp1, *cp0)
		}
	}
}
