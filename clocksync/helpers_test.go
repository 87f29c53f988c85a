package clocksync

import (
	"path/filepath"
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

// rows decodes every thread of p under tb (nil: as recorded).
func rows(p *trace.Process, tb *trace.Timebase) [][]trace.Event {
	out := make([][]trace.Event, p.NumThreads())
	for th := range out {
		out[th], _ = p.Decode(th, tb)
	}
	return out
}

// allRows decodes every process as recorded.
func allRows(procs []*trace.Process) [][][]trace.Event {
	out := make([][][]trace.Event, len(procs))
	for i, p := range procs {
		out[i] = rows(p, nil)
	}
	return out
}

// mkProc encodes a process from rows, as a loaded file would hold it.
func mkProc(h trace.Header, t trace.Tables, evs [][]trace.Event) *trace.Process {
	p, err := trace.NewProcess(h, t, evs, nil)
	if err != nil {
		panic(err)
	}
	return p
}

// syncRun is the outcome of synchronizing a trace on k ranks.
type syncRun struct {
	procs []*trace.Process  // as given
	times []*trace.Timebase // by process: the corrected times
	rows  [][][]trace.Event // by process: events with corrected times
	stats []ProcessStats    // by process
	match graph.MatchStats
	local []*Local
}

// runSync matches and synchronizes a copy of procs on k inproc ranks
// (partitioned by event count, as the driver does); noSync runs Census.
func runSync(t testing.TB, procs []*trace.Process, k int, o Options, noSync bool) (*syncRun, error) {
	t.Helper()
	res := &syncRun{procs: procs, times: make([]*trace.Timebase, len(procs)), stats: make([]ProcessStats, len(procs)), local: make([]*Local, k)}
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
		edges, err := graph.ExchangeEdgesAt(c, m, l.NodeTime(m))
		if err != nil {
			return err
		}
		l.CountAfter(m, edges)
		copy(res.stats[lo:hi], l.Procs)
		copy(res.times[lo:hi], l.Timebases)
		res.local[c.Rank()] = l
		return nil
	})
	res.rows = make([][][]trace.Event, len(procs))
	for i, p := range procs {
		res.rows[i] = rows(p, res.times[i])
	}
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
func sameTimes(t *testing.T, what string, a, b [][][]trace.Event) {
	t.Helper()
	for i := range a {
		for th := range a[i] {
			for j := range a[i][th] {
				if x, y := a[i][th][j].Time, b[i][th][j].Time; x != y {
					t.Fatalf("%s: process %d thread %d event %d (%s): %d vs %d", what, i, th, j, a[i][th][j].Kind, x, y)
				}
			}
		}
	}
}

// monotone checks that no thread's time goes back.
func monotone(t *testing.T, procs [][][]trace.Event) {
	t.Helper()
	for i, p := range procs {
		for th, ev := range p {
			for j := 1; j < len(ev); j++ {
				if ev[j].Time < ev[j-1].Time {
					t.Fatalf("process %d thread %d: event %d (%s) at %d precedes event %d at %d", i, th, j, ev[j].Kind, ev[j].Time, j-1, ev[j-1].Time)
				}
			}
		}
	}
}
