package sim_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

func simulate(t *testing.T, path string) *sim.Sim {
	t.Helper()
	p, err := trace.LoadProcess(path, trace.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := sim.New(p, nil, false)
	if err := s.Run(ompt.NewModel()); err != nil {
		t.Fatal(err)
	}
	return s
}

// POT's imbalance benchmark (seed §4.2): thread t of n runs one task of t·g
// per iteration and waits, so work is I·g·n(n+1)/2, idleness I·g·n(n−1)/2
// and overhead 0.
func TestImbalanceQuick(t *testing.T) {
	const n, g, iters = 4, 1000, 10
	dir := t.TempDir()
	if _, err := gen.Generate(dir, gen.Config{Workload: "imbalance", Ranks: 1, Threads: n, GrainNS: g, Iterations: iters}); err != nil {
		t.Fatal(err)
	}
	s := simulate(t, filepath.Join(dir, trace.FileName(0)))
	var tot sim.ThreadTimes
	for _, tt := range s.Breakdown.Threads {
		tot.Work += tt.Work
		tot.Idle += tt.Idle + tt.IdleSerial
		tot.Overhead += tt.Overhead + tt.OverheadSerial
		tot.MPI += tt.MPI
	}
	want := sim.ThreadTimes{Work: iters * g * n * (n + 1) / 2, Idle: iters * g * n * (n - 1) / 2}
	if tot != want || s.Warn.Total() != 0 {
		t.Errorf("breakdown %+v, want %+v (warnings %v)", tot, want, s.Warn.Examples)
	}
}

// simulated is what a simulation leaves that later phases read.
type simulated struct {
	Threads []sim.ThreadTimes
	Tasks   sim.Tasks
	Deps    [][2]sim.Task
	Weight  []int64
	Edges   [][2]int32
	First   []int32
	Warn    int64
}

func simulateSpare(t *testing.T, p *trace.Process, sp *sim.Spare, osp *ompt.Spare) simulated {
	t.Helper()
	s := sim.New(p, nil, false)
	s.Spare = sp
	s.RecordDeps = true
	m := ompt.NewModel()
	m.Spare = osp
	m.KeepDependences()
	fp := sim.NewFragPass(nil)
	if err := s.Run(m, fp); err != nil {
		t.Fatal(err)
	}
	f := fp.Take()
	f.UnpackWeights(nil)
	out := simulated{Threads: s.Breakdown.Threads, Tasks: append(sim.Tasks(nil), s.Tasks...),
		Weight: f.Weight, Edges: fragEdges(f), Warn: s.Warn.Total()}
	for tk := range s.Tasks {
		out.First = append(out.First, f.FirstOf(sim.Task(tk)))
	}
	s.DepEdges.Each(func(a, b sim.Task) { out.Deps = append(out.Deps, [2]sim.Task{a, b}) })
	s.Recycle()
	m.Recycle()
	return out
}

// A simulation given the tables another process's left behind (Spare)
// computes exactly what a fresh one does: after a process cut short, whose
// tasks never completed (dependence lists, pending inputs, open fragments
// left in the tables), and after larger and smaller processes.
func TestSpareSameResults(t *testing.T) {
	procs := genProcess(t, gen.Config{Workload: "stencil", Ranks: 3, Threads: 3, Width: 24, Steps: 20, Jitter: 0.3, Seed: 2})
	procs = append(procs, genProcess(t, gen.Config{Workload: "untied", Ranks: 2, Threads: 2, Steps: 30, Jitter: 0.3, Seed: 3})...)
	procs = append(procs, genProcess(t, gen.Config{Workload: "forkjoin", Ranks: 1, Threads: 4, Width: 8, Steps: 6, Seed: 4})...)
	// The first stencil process cut at 60 %, salvaged.
	b, err := os.ReadFile(procs[0].File)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.ptrace")
	if err := os.WriteFile(cut, b[:len(b)*6/10], 0o644); err != nil {
		t.Fatal(err)
	}
	short, err := trace.LoadProcess(cut, trace.LoadOptions{Salvage: true})
	if err != nil {
		t.Fatal(err)
	}
	order := append([]*trace.Process{short}, procs...)
	order = append(order, short, procs[4], procs[0])

	var sp sim.Spare
	var osp ompt.Spare
	for i, p := range order {
		got := simulateSpare(t, p, &sp, &osp)
		want := simulateSpare(t, p, nil, nil)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("process %d of the sequence (%s): results after reuse differ from a fresh simulation's", i, p.File)
		}
	}
}

// TaskTimes reads in task order what Started and RunNS read one by one,
// from pages dense, frozen (every task of the page completed) and never
// written, over a few pages of tasks: a fork-join's, all completed, and
// an untied chain's, re-queued.
func TestTaskTimes(t *testing.T) {
	for _, cfg := range []gen.Config{
		{Workload: "forkjoin", Ranks: 1, Threads: 4, Width: 64, Steps: 200, TaskNS: 5000, Jitter: 0.5},
		{Workload: "untied", Ranks: 1, Threads: 4, Steps: 15000, TaskNS: 2000},
	} {
		dir := t.TempDir()
		if _, err := gen.Generate(dir, cfg); err != nil {
			t.Fatal(err)
		}
		s := simulate(t, filepath.Join(dir, trace.FileName(0)))
		if n := s.Tasks.Len(); n < 3*4096 {
			t.Fatalf("%s: %d task slots, want several pages", cfg.Workload, n)
		}
		r, started := s.Times(), 0
		for i := range s.Tasks.Len() {
			tk := sim.Task(i)
			st, run := r.At(tk)
			if st != s.Started(tk) || run != s.RunNS(tk) {
				t.Fatalf("%s: task %d: Times %d, %d; Started, RunNS %d, %d", cfg.Workload, i, st, run, s.Started(tk), s.RunNS(tk))
			}
			if st >= 0 && run > 0 {
				started++
			}
		}
		if started < s.Tasks.Len()/2 {
			t.Errorf("%s: %d of %d tasks started and ran", cfg.Workload, started, s.Tasks.Len())
		}
	}
}
