package clocksync

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/graph"
	"github.com/ptrace-dev/ptrace/partition"
	"github.com/ptrace-dev/ptrace/trace"
)

// genProcs generates a trace and loads all its processes.
func genProcs(t testing.TB, cfg gen.Config) []*trace.Process {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "trace")
	if _, err := gen.Generate(dir, cfg); err != nil {
		t.Fatal(err)
	}
	d, err := trace.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	procs := make([]*trace.Process, d.NRanks())
	for i := range procs {
		if procs[i], err = trace.LoadProcess(d.FilePath(i), trace.LoadOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return procs
}

// cloneProcs copies processes deeply enough for Sync to change times.
func cloneProcs(procs []*trace.Process) []*trace.Process {
	out := make([]*trace.Process, len(procs))
	for i, p := range procs {
		q := *p
		q.Events = make([][]trace.Event, len(p.Events))
		for t := range p.Events {
			q.Events[t] = slices.Clone(p.Events[t])
		}
		out[i] = &q
	}
	return out
}

// syncRun is the outcome of synchronizing a copy of a trace on k ranks.
type syncRun struct {
	procs []*trace.Process // with corrected times
	stats []ProcessStats   // by process
	match graph.MatchStats
	local []*Local
}

// runSync matches and synchronizes a copy of procs on k inproc ranks
// (partitioned by event count, as the driver does); noSync runs Census.
func runSync(t testing.TB, procs []*trace.Process, k int, o Options, noSync bool) (*syncRun, error) {
	t.Helper()
	res := &syncRun{procs: cloneProcs(procs), stats: make([]ProcessStats, len(procs)), local: make([]*Local, k)}
	w := make([]int64, len(procs))
	for i, p := range procs {
		w[i] = p.NumEvents()
	}
	plan, err := partition.Assign(w, k)
	if err != nil {
		t.Fatal(err)
	}
	ms := make([]graph.MatchStats, k)
	err = inproc.Run(k, func(c comm.Comm) error {
		lo, hi := plan.Range(c.Rank())
		m, err := graph.Match(c, plan, res.procs[lo:hi], graph.MatchOptions{})
		if err != nil {
			return err
		}
		ms[c.Rank()] = m.Stats
		var l *Local
		if noSync {
			l, err = Census(c, m, o)
		} else {
			l, err = Sync(c, m, o)
		}
		if err != nil {
			return err
		}
		edges, err := graph.ExchangeEdges(c, m, l.NodeTimes)
		if err != nil {
			return err
		}
		l.CountAfter(m, edges)
		copy(res.stats[lo:hi], l.Procs)
		res.local[c.Rank()] = l
		return nil
	})
	for _, s := range ms {
		v := res.match.Vector()
		for i, x := range s.Vector() {
			v[i] += x
		}
		res.match = graph.MatchStatsFrom(v)
	}
	return res, err
}

// mustSync is runSync that fails the test on error.
func mustSync(t testing.TB, procs []*trace.Process, k int, o Options) *syncRun {
	t.Helper()
	r, err := runSync(t, procs, k, o, false)
	if err != nil {
		t.Fatalf("%d ranks: %v", k, err)
	}
	return r
}

// sameTimes reports the first event whose time differs between a and b.
func sameTimes(t *testing.T, what string, a, b []*trace.Process) {
	t.Helper()
	for i := range a {
		for th := range a[i].Events {
			for j := range a[i].Events[th] {
				if x, y := a[i].Events[th][j].Time, b[i].Events[th][j].Time; x != y {
					t.Fatalf("%s: process %d thread %d event %d (%s): %d vs %d", what, i, th, j, a[i].Events[th][j].Kind, x, y)
				}
			}
		}
	}
}

// monotone checks that no thread's time goes back.
func monotone(t *testing.T, procs []*trace.Process) {
	t.Helper()
	for i, p := range procs {
		for th, ev := range p.Events {
			for j := 1; j < len(ev); j++ {
				if ev[j].Time < ev[j-1].Time {
					t.Fatalf("process %d thread %d: event %d (%s) at %d precedes event %d at %d", i, th, j, ev[j].Kind, ev[j].Time, j-1, ev[j-1].Time)
				}
			}
		}
	}
}
