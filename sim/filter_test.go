package sim_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/ompt"
	"github.com/ptrace-dev/ptrace/sim"
	"github.com/ptrace-dev/ptrace/trace"
)

// kindCounter counts the events its Before and After see, per kind.
type kindCounter struct {
	before, after [trace.NumKinds]int64
	final         int
	set           *[2]sim.KindSet // nil: not Filtered
}

func (k *kindCounter) Before(s *sim.Sim, e *trace.Event, th int, dt int64) {
	if e == nil {
		k.final++
		return
	}
	k.before[e.Kind]++
}
func (k *kindCounter) After(s *sim.Sim, e *trace.Event, th int) { k.after[e.Kind]++ }
func (k *kindCounter) Finish(s *sim.Sim)                        {}

type filteredCounter struct{ kindCounter }

func (k *filteredCounter) Kinds() (before, after sim.KindSet) { return k.set[0], k.set[1] }

// unfiltered hides a pass's Kinds: Run calls it for every event.
type unfiltered struct{ sim.Pass }

// unfilteredWatcher hides a ready watcher's Kinds, not what it watches.
type unfilteredWatcher struct {
	unfiltered
	sim.ReadyWatcher
}

func unfilter(p sim.Pass) sim.Pass {
	if w, ok := p.(sim.ReadyWatcher); ok {
		return unfilteredWatcher{unfiltered{p}, w}
	}
	return unfiltered{p}
}

func genProcess(t *testing.T, cfg gen.Config) []*trace.Process {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tr")
	if _, err := gen.Generate(dir, cfg); err != nil {
		t.Fatal(err)
	}
	var procs []*trace.Process
	for r := range max(cfg.Ranks, 1) {
		p, err := trace.LoadProcess(filepath.Join(dir, trace.FileName(r)), trace.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		procs = append(procs, p)
	}
	return procs
}

// TestFilteredDispatch: a Filtered pass sees the kinds it asked for, an
// unfiltered one every event, and both the final Before.
func TestFilteredDispatch(t *testing.T) {
	p := genProcess(t, gen.Config{Workload: "forkjoin", Ranks: 1, Threads: 3, Width: 8, Steps: 4})[0]
	all := &kindCounter{}
	f := &filteredCounter{kindCounter{set: &[2]sim.KindSet{sim.KindsOf(trace.TaskCreate), sim.KindsOf(trace.TaskSchedule, trace.SyncEnd)}}}
	s := sim.New(p, nil, false)
	if err := s.Run(ompt.NewModel(), all, f); err != nil {
		t.Fatal(err)
	}
	// Every pass sees the event that starts the program's code, the
	// initial thread's first.
	sc := p.Scan(0, nil)
	if !sc.Next() {
		t.Fatal("no event on the initial thread")
	}
	first := sc.Event().Kind
	for k := range trace.NumKinds {
		n := p.Census.Kinds[k]
		if all.before[k] != n || all.after[k] != n {
			t.Errorf("%s: unfiltered pass saw %d / %d events, the trace has %d", k, all.before[k], all.after[k], n)
		}
		wb, wa := int64(0), int64(0)
		if k == first {
			wb, wa = 1, 1
		}
		if k == trace.TaskCreate {
			wb = n
		}
		if k == trace.TaskSchedule || k == trace.SyncEnd {
			wa = n
		}
		if f.before[k] != wb || f.after[k] != wa {
			t.Errorf("%s: filtered pass saw %d / %d events, want %d / %d", k, f.before[k], f.after[k], wb, wa)
		}
	}
	if p.Census.Kinds[trace.TaskCreate] == 0 || p.Census.Kinds[trace.SyncEnd] == 0 {
		t.Fatal("the trace lacks the kinds the test filters")
	}
	if all.final != 1 || f.final != 1 {
		t.Errorf("final Before: %d and %d calls, want 1", all.final, f.final)
	}
}

// TestFilteredSameResults: the sim package's passes give the same results
// whether Run filters their calls by kind or calls them for every event.
func TestFilteredSameResults(t *testing.T) {
	cfgs := []gen.Config{
		{Workload: "stencil", Ranks: 2, Threads: 3, Width: 16, Steps: 8, Jitter: 0.3, LatencyNS: 500},
		{Workload: "halo", Ranks: 2, Threads: 3, Iterations: 4, Jitter: 0.2},
		{Workload: "untied", Threads: 3, Steps: 20},
		{Workload: "forkjoin", Threads: 4, Width: 12, Steps: 5, Jitter: 0.2},
	}
	type out struct {
		stats *sim.TaskStats
		ready *sim.ReadySeries
		frags *sim.FragPass
	}
	run := func(p *trace.Process, wrap bool) out {
		s := sim.New(p, nil, false)
		s.RecordDeps = true
		m := ompt.NewModel()
		m.KeepDependences()
		o := out{sim.NewTaskStats(), sim.NewReadySeries(0, 1000, 64), sim.NewFragPass(nil)}
		passes := []sim.Pass{o.stats, o.ready, o.frags}
		if wrap {
			for i := range passes {
				passes[i] = unfilter(passes[i])
			}
		}
		if err := s.Run(m, passes...); err != nil {
			t.Fatal(err)
		}
		return o
	}
	for _, cfg := range cfgs {
		for _, p := range genProcess(t, cfg) {
			a, b := run(p, false), run(p, true)
			if !reflect.DeepEqual(a.stats, b.stats) || !reflect.DeepEqual(a.ready.Values, b.ready.Values) || !reflect.DeepEqual(a.frags.F, b.frags.F) {
				t.Errorf("%s rank %d: the passes' results differ when Run filters their calls", cfg.Workload, p.Header.Rank)
			}
		}
	}
}

// orderPass records every event's thread, index in its thread and kind,
// in the order Run passes them.
type orderPass struct{ seen [][3]int64 }

func (o *orderPass) Before(*sim.Sim, *trace.Event, int, int64) {}
func (o *orderPass) Finish(*sim.Sim)                           {}
func (o *orderPass) After(s *sim.Sim, e *trace.Event, th int) {
	o.seen = append(o.seen, [3]int64{int64(th), s.Pos(th), int64(e.Kind)})
}

// TestWalkIsRunsOrder: Walk over some of the threads and kinds passes
// those threads' events of those kinds in the order Run passes them, with
// the same indices; the generated traces have many events of different
// threads at one time, which only the tie class and thread order.
func TestWalkIsRunsOrder(t *testing.T) {
	procs := genProcess(t, gen.Config{Workload: "halo", Ranks: 2, Threads: 3, Iterations: 6, Seed: 5})
	procs = append(procs, genProcess(t, gen.Config{Workload: "stencil", Ranks: 2, Threads: 4, Width: 12, Steps: 8, Jitter: 0.3, Seed: 2})...)
	// One thread a process: Walk's path without a merge.
	procs = append(procs, genProcess(t, gen.Config{Workload: "mpi", Ranks: 2, Iterations: 6, Seed: 3})...)
	kinds := sim.KindsOf(trace.TaskCreate, trace.TaskSchedule, trace.MPIEnter, trace.MPIExit, trace.ImplicitTaskBegin, trace.SyncEnd)
	for pi, p := range procs {
		all := &orderPass{}
		if err := sim.New(p, nil, false).Run(ompt.NewModel(), all); err != nil {
			t.Fatal(err)
		}
		for _, keep := range []func(th int) bool{
			func(int) bool { return true },
			func(th int) bool { return th == 0 },
			func(th int) bool { return th%2 == 1 },
			func(th int) bool { return th >= 2 },
		} {
			var want, got [][3]int64
			for _, x := range all.seen {
				if keep(int(x[0])) && kinds.Has(trace.Kind(x[2])) {
					want = append(want, x)
				}
			}
			var pool trace.Scans
			err := sim.Walk(p, nil, &pool, keep, kinds, func(e *trace.Event, th int, idx int64) {
				got = append(got, [3]int64{int64(th), idx, int64(e.Kind)})
			})
			if err != nil {
				t.Fatal(err)
			}
			kept := false // a one-thread process keeps none of some
			for th := range p.NumThreads() {
				kept = kept || keep(th)
			}
			if kept && len(want) == 0 || !reflect.DeepEqual(got, want) {
				t.Fatalf("process %d: Walk passed %d events, Run %d of those threads and kinds (first difference at %d)", pi, len(got), len(want), firstDiff(got, want))
			}
		}
	}
}

func firstDiff(a, b [][3]int64) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
