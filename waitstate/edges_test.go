package waitstate

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/ptrace-dev/ptrace/comm"
	"github.com/ptrace-dev/ptrace/comm/inproc"
	"github.com/ptrace-dev/ptrace/gen"
	"github.com/ptrace-dev/ptrace/graph"
	"github.com/ptrace-dev/ptrace/trace"
)

// TestEdgeRows: every row of the matched predecessors finds its node, and
// every node its row, whether the rows come in the order of their nodes
// (as the exchange lists them: one walk) or not (looked up).
func TestEdgeRows(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tr")
	if _, err := gen.Generate(dir, gen.Config{Workload: "halo", Ranks: 4, Threads: 2, Iterations: 5, Jitter: 0.2, LatencyNS: 1000}); err != nil {
		t.Fatal(err)
	}
	var procs []*trace.Process
	for r := range 4 {
		p, err := trace.LoadProcess(filepath.Join(dir, trace.FileName(r)), trace.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		procs = append(procs, p)
	}
	err := inproc.Run(1, func(c comm.Comm) error {
		m, err := graph.Match(c, oneRank{}, procs, graph.MatchOptions{})
		if err != nil {
			return err
		}
		edges, err := graph.ExchangeEdges(c, m, nil)
		if err != nil {
			return err
		}
		a := New(m)
		check := func(what string, edges []graph.RemoteEdges, bisect bool) {
			a.edges = edges
			a.edge, a.rowSet = a.edgeRows(edges)
			if (a.edge == nil) != bisect {
				t.Fatalf("%s: rows per node kept: %v, want %v", what, a.edge != nil, !bisect)
			}
			found := 0
			for i := range edges {
				e := &edges[i]
				w := a.walkRows(i)
				for k := range e.Len() {
					v := w.node(k)
					if v < 0 || m.ThreadOf(v) != e.ThreadAt(int(k)) || m.EventOf(v) != e.EventAt(k) || a.rowOf(i, v) != int32(k) {
						t.Fatalf("%s: process %d row %d (thread %d event %d): node %d", what, i, k, e.ThreadAt(int(k)), e.EventAt(k), v)
					}
					found++
				}
			}
			n := 0
			for v := int32(0); v < m.Len(); v++ {
				if a.rowOf(int(m.ProcOf(v)), v) >= 0 {
					n++
				}
			}
			if n != found || found == 0 {
				t.Fatalf("%s: %d nodes with a row, %d rows", what, n, found)
			}
		}
		check("node order", edges, true)
		// The same rows, each process's reversed.
		rev := make([]graph.RemoteEdges, len(edges))
		for i, e := range edges {
			var r graph.RemoteEdges
			for k := e.Len() - 1; k >= 0; k-- {
				r.Append(e.ThreadAt(k), e.EventAt(k), e.KindAt(k), e.PredProcAt(k), e.PredThreadAt(k), e.PredEventAt(k), e.PredKindAt(k), e.PredTimeAt(k))
			}
			rev[i] = r
		}
		check("reversed", rev, false)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRecordSkipsThreadsWithoutCalls: a thread that makes no MPI call
// gives its send-like nodes' times from the matching's recorded times and
// the timebase, without being read, and they are the times reading it
// gives (with an offset model and per-event corrections), as are the
// calls of the threads read. stencil's remote dependences are on every
// thread; halo's MPI calls on thread 0.
func TestRecordSkipsThreadsWithoutCalls(t *testing.T) {
	for _, cfg := range []gen.Config{
		{Workload: "stencil", Ranks: 3, Threads: 3, Width: 12, Steps: 6, Jitter: 0.3, Seed: 4},
		{Workload: "halo", Ranks: 3, Threads: 2, Iterations: 5, Jitter: 0.2, LatencyNS: 1000},
	} {
		dir := filepath.Join(t.TempDir(), cfg.Workload)
		if _, err := gen.Generate(dir, cfg); err != nil {
			t.Fatal(err)
		}
		var procs []*trace.Process
		var tbs []*trace.Timebase
		for r := range cfg.Ranks {
			p, err := trace.LoadProcess(filepath.Join(dir, trace.FileName(r)), trace.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			procs = append(procs, p)
			tb := trace.NewTimebase(int64(100*r+7), 1000, 1e-5*float64(r), p.NumThreads())
			for th := range p.NumThreads() {
				if n := p.Events[th].N; n > 2 {
					tb.SetCorrection(th, n/2, n, int64(th+1)*3)
				}
			}
			tbs = append(tbs, tb)
		}
		err := inproc.Run(1, func(c comm.Comm) error {
			m, err := graph.Match(c, oneRank{}, procs, graph.MatchOptions{})
			if err != nil {
				return err
			}
			// Only stencil's skipped threads need the recorded times:
			// halo's nodes are all on the threads that call MPI, and the
			// driver drops them before recording.
			if got, want := New(m).ReadsRecorded(), cfg.Workload == "stencil"; got != want {
				return fmt.Errorf("%s: ReadsRecorded %v, want %v", cfg.Workload, got, want)
			}
			record := func() (*Analysis, error) {
				a := New(m)
				for i, p := range procs {
					if err := a.Record(i, p, tbs[i], nil); err != nil {
						return nil, err
					}
				}
				return a, nil
			}
			skipped, err := record()
			if err != nil {
				return err
			}
			m.DropRecorded() // every thread with a send-like node is read
			if New(m).ReadsRecorded() {
				return fmt.Errorf("%s: ReadsRecorded once they are dropped", cfg.Workload)
			}
			read, err := record()
			if err != nil {
				return err
			}
			bare := 0
			for v := range m.Len() {
				s, r := skipped.enter(int(max(m.ProcOf(v), 0)), v), read.enter(int(max(m.ProcOf(v), 0)), v)
				if s != r {
					return fmt.Errorf("%s: node %d (%s): time %d without reading its thread, %d reading it", cfg.Workload, v, m.Describe(v), s, r)
				}
				if skipped.call[v] <= -2 {
					bare++
				}
			}
			for i := range procs {
				if n := skipped.procs[i].len(); n != read.procs[i].len() || n == 0 && cfg.Workload == "halo" {
					return fmt.Errorf("%s: process %d: %d calls, %d reading every thread", cfg.Workload, i, skipped.procs[i].len(), read.procs[i].len())
				}
			}
			if cfg.Workload == "stencil" && bare == 0 {
				return fmt.Errorf("stencil: no send-like node outside a call")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
